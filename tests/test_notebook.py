"""The downloaded notebook: valid nbformat 4, user text only escaped (Markdown) or as literals (code), and,
run top to bottom by a Jupyter kernel, a preview that spends nothing, a release only through the ledger
with RELEASE = True, and refusals that stop with a clear message."""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpdash.accounting import Budget
from dpdash.errors import ParameterError
from dpdash.export import reproduction_values
from dpdash.ledger import Ledger, fingerprint
from dpdash.ledger.releases import release_count
from dpdash.loading import coerce_column, load_table
from dpdash.markdown import md
from dpdash.notebook import release_notebook
from dpdash.queries import Count, Histogram, Where
from dpdash.release import Release, release
from dpdash.table_origin import TableOrigin

REPO = str(Path(__file__).resolve().parents[1])
# Each tries to end a string or a Markdown/HTML context it is written into; the last ones break lines.
HOSTILE = [
    'x""";open("PWNED1","w").close();"""',
    "x''';open('PWNED2','w').close();'''",
    "x\";open('PWNED3','w').close();\"",
    "x}{__import__('os').system('touch PWNED4')}{",
    "</script><script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "![beacon](http://127.0.0.1:9/b.png)",
    "[link](javascript:alert(1))",
    "$\\alpha$ **bold** `code` _em_",
    "| a | b |",
    "x\n# heading\n- item",
    "x\r\n```\nopen('PWNED5','w').close()\n```",
    "ls\u2028sep\u2029\x85",
    "\\N{BULLET} back\\slash\\",
]


def _cells(text: str) -> list[dict[str, Any]]:
    return json.loads(text)["cells"]


def _code(text: str) -> list[str]:
    return [c["source"] for c in _cells(text) if c["cell_type"] == "code"]


def _markdown(text: str) -> list[str]:
    return [c["source"] for c in _cells(text) if c["cell_type"] == "markdown"]


def _hostile_release(names: list[str]) -> Release:
    df = pd.DataFrame({name: [name, "other", name] for name in names})
    where = [Where(name, "==", name) for name in names] + [Where(names[0], "in", names)]
    return release(Count(where=where), "Geometric", df, epsilon=1.0, identity="sha256:" + "0" * 64)


def _shape(tree: ast.Module) -> str:
    """The cell's statements with every literal value it assigns (settings, the record's fields) blanked."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            node.value = ast.Constant(None)
        called = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else ""
        if called.endswith("Reproduction"):  # Reproduction, SyntheticReproduction
            for keyword in node.keywords:
                keyword.value = ast.Constant(None)
    return ast.dump(tree)


def test_hostile_names_are_only_escaped_text_and_literals() -> None:
    r = _hostile_release(HOSTILE)
    coercions = [[name, "categorical"] for name in HOSTILE[:4]]
    origin = TableOrigin(coercions=coercions, table_name=HOSTILE[0], ledger="/tmp/l.sqlite")
    text = release_notebook(r, origin=origin)
    benign = release_notebook(_hostile_release(["a", "b"]), origin=TableOrigin(
        coercions=[["a", "text"]], table_name="t.csv", ledger="/tmp/l.sqlite"
    ))  # fmt: skip
    # Code: exactly the intended statements; every value that comes from the release is a literal.
    code, reference = _code(text), _code(benign)
    assert len(code) == len(reference) == 5
    for cell, ref in zip(code, reference, strict=True):
        assert _shape(ast.parse(cell)) == _shape(ast.parse(ref))
    settings = {n.targets[0].id: ast.literal_eval(n.value) for n in ast.parse(code[0]).body}
    assert settings == {"TABLE_FILE": HOSTILE[0], "LEDGER": "/tmp/l.sqlite", "RELEASE": False}
    call = ast.parse(code[1]).body[1].value
    fields = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    expected = reproduction_values(r, origin=origin)
    assert fields == {key.lower(): value for key, value in expected.items()}
    assert fields["query"]["where"][0] == {"column": HOSTILE[0], "op": "==", "value": HOSTILE[0]}
    # Markdown: each name escaped, no line of it starting a block, nothing of it raw.
    markdown, plain = _markdown(text), _markdown(benign)
    assert [cell.count("\n") for cell in markdown] == [cell.count("\n") for cell in plain]
    joined = "\n".join(markdown)
    for name in HOSTILE:
        assert md(name) in joined
    for raw in ("<script>", "<img", "](", '"""', "**bold**", "`code`", "| a |", "\n# heading", "$\\alpha"):
        assert not re.search(r"(?<!\\)" + re.escape(raw), joined), raw  # only as escaped text
    # The file: no "<", ">" or "&" as text at all, so it holds no </script> wherever it is embedded.
    assert not re.search("[<>&]", text) and json.loads(text)["nbformat"] == 4


def test_the_notebook_is_valid_nbformat() -> None:
    nbformat = pytest.importorskip("nbformat")
    r = _hostile_release(HOSTILE)
    notebook = nbformat.reads(release_notebook(r, origin=TableOrigin(table_name="t.csv")), as_version=4)
    nbformat.validate(notebook)  # raises if not valid under the v4 schema
    assert notebook.nbformat_minor == 5 and len({cell.id for cell in notebook.cells}) == len(notebook.cells)


def test_the_notebook_states_the_facts_the_mechanism_and_the_plus_minus() -> None:
    df = pd.DataFrame({"g": ["a", "b", "a"]})
    r = release(Histogram(column="g", categories=["a", "b"]), "Geometric", df, epsilon=0.5,
                identity="sha256:x", postprocess=["clamp_nonnegative"])  # fmt: skip
    text = "\n".join(_markdown(release_notebook(r, origin=TableOrigin(table_name="t.csv"))))
    assert "Categories (public): “a”, “b”." in text and "Column: “g”." in text
    assert "**Unit of privacy:** Protects each row" in text
    assert "ε = 0.5" in text and "**Geometric**" in text and "e\\^0\\.5 ≈ 1\\.65" in text
    assert md(r.accuracy.definition) in text and "(exact)" in text
    assert "**PREVIEW: not a release.**" in text and "Post-processing (spends nothing)" in text


def test_a_release_without_identity_is_refused() -> None:
    r = release(Count(), "Geometric", pd.DataFrame({"a": [1]}), epsilon=1.0)
    with pytest.raises(ParameterError, match="dataset_identity"):
        release_notebook(dataclasses.replace(r, dataset_identity=None))
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        release_notebook(dataclasses.replace(r, dataset_identity="i", mechanism="Evil"))


# ---- run by a Jupyter kernel -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The name of a kernel spec that runs this interpreter: the registered ``python3`` if it does,
    else one installed into a temporary prefix (nothing downloaded) and found through JUPYTER_PATH."""
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    own = {"python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}", sys.executable}
    try:
        spec = KernelSpecManager().get_kernel_spec("python3")
        if spec.argv and spec.argv[0] in own:  # jupyter_client runs "python" as sys.executable
            return "python3"
    except NoSuchKernel:
        pass
    prefix = tmp_path_factory.mktemp("kernel")
    subprocess.run([sys.executable, "-m", "ipykernel", "install", "--prefix", str(prefix), "--name",
                    "dpdash-test"], check=True, capture_output=True)  # fmt: skip
    os.environ["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
    return "dpdash-test"


@pytest.fixture
def made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A CSV whose coded column was changed to categorical in the app, a histogram released there at ε = 2,
    a ledger with the dataset's budget (ε = 3, basic), and the notebook written beside them."""
    monkeypatch.setenv("PYTHONPATH", REPO)  # the kernel imports the dpdash under test
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    rng = np.random.default_rng(5)
    path = tmp_path / "people.csv"
    pd.DataFrame({"sex": rng.choice([1, 2], 300), "age": rng.integers(18, 90, 300)}).to_csv(path, index=False)
    raw = load_table(path.read_bytes(), path.name).data
    identity = fingerprint(raw)
    df = coerce_column(raw, "sex", "categorical")
    made = release(Histogram(column="sex", categories=["1", "2"]), "Geometric", df, epsilon=2.0,
                   identity=identity)  # fmt: skip
    ledger = tmp_path / "ledger.sqlite"
    with Ledger(ledger) as book:
        book.add_dataset(name="people", fingerprint=identity, budget=Budget(3.0), accountant="basic")
    origin = TableOrigin(coercions=[("sex", "categorical")], table_name="people.csv", ledger=ledger)
    text = release_notebook(made, origin=origin)
    return {"dir": tmp_path, "path": path, "identity": identity, "ledger": ledger, "text": text}


def _execute(
    text: str, folder: Path, kernel: str, *, release_it: bool = False, table_file: str = "people.csv"
) -> list[dict[str, Any]]:
    """Run every cell in order, as "Run all" does, in ``folder``; the outputs of each code cell."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.reads(text, as_version=4)
    first = next(c for c in notebook.cells if c.cell_type == "code")  # what a person edits
    assert "\nRELEASE = False  #" in first.source and "\nTABLE_FILE = 'people.csv'  #" in first.source
    if release_it:
        first.source = first.source.replace("\nRELEASE = False  #", "\nRELEASE = True  #")
    first.source = first.source.replace("\nTABLE_FILE = 'people.csv'", f"\nTABLE_FILE = {table_file!r}")
    client = NotebookClient(
        notebook, timeout=180, kernel_name=kernel, resources={"metadata": {"path": str(folder)}}
    )
    try:
        client.execute()
    finally:
        executed = [c.outputs for c in notebook.cells if c.cell_type == "code"]
    return executed


def _text(outputs: list[Any]) -> str:
    return "".join(o.get("text", "") for cell in outputs for o in cell)


def _spent(ledger: Path, identity: str) -> tuple[float, int]:
    with Ledger(ledger) as book:
        status = book.status(identity)
        return status.spent.epsilon, status.entries


@pytest.mark.slow
def test_run_top_to_bottom_it_only_previews(made, kernel: str) -> None:
    outputs = _execute(made["text"], made["dir"], kernel)
    text = _text(outputs)
    assert text.startswith("SIMULATED PREVIEW: not a release, no budget spent")
    assert len([line for line in text.splitlines() if line.startswith("simulated ")]) == 3
    assert "RELEASE is False: nothing was released and nothing was spent" in text and "Released" not in text
    assert _spent(made["ledger"], made["identity"]) == (0.0, 0)
    # Only printed text: no cell shows an object's repr (a Release's would hold its true values).
    assert {o["output_type"] for cell in outputs for o in cell} == {"stream"}


@pytest.mark.slow
def test_with_release_true_it_spends_once_and_refuses_another_table_or_a_short_budget(
    made, kernel: str
) -> None:
    """Another table refused, then the release spending exactly ε once, then the same release again
    refused for the short budget: one test in sequence, as each run starts a kernel."""
    from nbclient.exceptions import CellExecutionError

    other = made["dir"] / "other.csv"
    other.write_text(made["path"].read_text().replace("\n1,", "\n2,", 1))  # one person changed
    with pytest.raises(CellExecutionError) as refused:
        _execute(made["text"], made["dir"], kernel, release_it=True, table_file="other.csv")
    message = str(refused.value)  # the message alone: no Python traceback
    assert "\nNot released, nothing was spent: other.csv is not the table this release was made" in message
    assert "Traceback" not in message and "File " not in message
    assert _spent(made["ledger"], made["identity"]) == (0.0, 0)
    text = _text(_execute(made["text"], made["dir"], kernel, release_it=True))
    assert "Released: histogram of sex with Geometric, ε = 2, on the table 'people.csv'" in text
    assert f"Spent from the ledger {made['ledger']}" in text and "spent epsilon = 2 of 3" in text
    with Ledger(made["ledger"]) as book:
        entries = book.entries(made["identity"])
        assert book.status(made["identity"]).spent.epsilon == 2.0
        labels = {session.uid: session.label for session in book.sessions()}
    assert release_count(entries) == 1 and labels[entries[0].session] == "reproduce_release.ipynb"
    # 2 of 3 spent: another 2 does not fit.
    with pytest.raises(CellExecutionError) as short:
        _execute(made["text"], made["dir"], kernel, release_it=True)
    assert "Not released, nothing was spent: the budget is short" in str(short.value)
    assert _spent(made["ledger"], made["identity"]) == (2.0, 1)
