"""The downloaded script and notebook of a synthetic table: user text only as literals (code) or escaped
(Markdown); run, they preview for free by default (the seeded draw the app previews), release only through
the ledger the release was made with (one more release, the same events) and then write the CSV, and
refuse another table or a missing ledger with a clear message and no traceback."""

from __future__ import annotations

import ast
import hashlib
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
from dpdash.datasets import PublicFacts
from dpdash.ledger import Ledger, fingerprint
from dpdash.loading import coerce_column, load_table
from dpdash.markdown import md
from dpdash.reproduce import beside
from dpdash.synthetic import PREVIEW_SEED, rho_for, synthesize
from dpdash.synthetic.mst import planned_events
from dpdash.synthetic_export import (
    SYNTHETIC_CONSTANTS,
    synthetic_notebook,
    synthetic_script,
    synthetic_values,
)
from dpdash.table_origin import TableOrigin
from tests.test_export_script import PAYLOADS
from tests.test_notebook import HOSTILE, _code, _execute, _markdown, _shape, _text, kernel  # noqa: F401

REPO = str(Path(__file__).resolve().parents[1])
FACTS = PublicFacts(bounds={"age": (0, 100)}, categories={"sex": ["1", "2"]})
EPSILON, DELTA = 1.0, 1e-6


@pytest.fixture
def made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A CSV whose coded column was changed to categorical in the app, a synthetic table released from it
    (ε = 1, δ = 1e-6, 4 bins of age) and spent in a ledger (zCDP, ε = 3 at δ = 1e-5), and its script."""
    monkeypatch.setenv("PYTHONPATH", REPO)  # the script (and the kernel) import the dpdash under test
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    rng = np.random.default_rng(5)
    path = tmp_path / "people.csv"
    pd.DataFrame({"sex": rng.choice([1, 2], 200), "age": rng.integers(18, 90, 200)}).to_csv(path, index=False)
    raw = load_table(path.read_bytes(), path.name).data
    identity = fingerprint(raw)
    df = coerce_column(raw, "sex", "categorical")
    released = synthesize(df, FACTS, epsilon=EPSILON, delta=DELTA, identity=identity, bins=4)
    ledger = tmp_path / "ledger.sqlite"
    with Ledger(ledger) as book:
        dataset = book.add_dataset(name="people", fingerprint=identity, budget=Budget(3.0, 1e-5),
                                   accountant="zcdp")  # fmt: skip
        book.spend_release(dataset, released)
    origin = TableOrigin(coercions=[("sex", "categorical")], table_name="people.csv", ledger=ledger)
    script = tmp_path / "reproduce_synthetic.py"
    script.write_text(synthetic_script(released, origin=origin), encoding="utf-8")
    return {"dir": tmp_path, "path": path, "identity": identity, "ledger": ledger, "df": df,
            "released": released, "script": script, "origin": origin}  # fmt: skip


def _run(made: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(made["script"]), *args], capture_output=True, text=True, encoding="utf-8",
        cwd=str(made["dir"]), timeout=180,
    )  # fmt: skip


def _files(folder: Path) -> set[str]:
    """The folder's files, but the ledger's own (its write-ahead log beside it) and IPython's settings."""
    return {f for f in os.listdir(folder) if not f.startswith("ledger.sqlite") and f != "ipython"}


def _ledger(made: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any], dict[str, str]]:
    with Ledger(made["ledger"]) as book:
        events = [e.to_dict() for e in book.events(made["identity"])]
        releases = book.releases(made["identity"])
        labels = {session.uid: session.label for session in book.sessions()}
    return events, releases, labels


def test_by_default_it_previews_the_apps_seeded_draw_and_spends_nothing(made: dict[str, Any]) -> None:
    before, files = _ledger(made), _files(made["dir"])
    out = _run(made, "people.csv")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("SIMULATED PREVIEW: not a release, no budget spent")
    # The app's preview for the same choices: same columns, bins, seed, rows (and so the same rows).
    released = made["released"]
    previewed = synthesize(made["df"], FACTS, epsilon=EPSILON, delta=DELTA, rng=PREVIEW_SEED, bins=4,
                           rows=len(released.table), identity=made["identity"])  # fmt: skip
    assert previewed.table.head(10).to_string(index=False) in out.stdout
    assert f"simulated table: {len(released.table)} rows" in out.stdout and "--release" in out.stdout
    assert _ledger(made) == before and _files(made["dir"]) == files  # nothing spent, nothing written


def test_with_release_it_spends_once_from_its_ledger_and_writes_the_csv(made: dict[str, Any]) -> None:
    (events, releases, _), files = _ledger(made), _files(made["dir"])
    out = _run(made, "people.csv", "--release")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Released: synthetic table (MST) of sex, age, ε = 1, δ = 1e-06")
    assert f"Spent from the ledger {made['ledger']}, dataset 'people'" in out.stdout
    after, made_now, labels = _ledger(made)
    released = made["released"]
    # One more release, with exactly the events of the first one, which are the planned ones.
    assert len(made_now) == len(releases) + 1 == 2 and after == events + events
    planned = planned_events(released.domain, rho_for(EPSILON, DELTA), DELTA)
    assert [e.to_dict() for e in planned] == events
    record = made_now[-1].record
    assert record["kind"] == "synthetic" and record["release_grade"] is True  # OS randomness, not a seed
    assert (record["epsilon"], record["delta"], record["rows"]) == (EPSILON, DELTA, len(released.table))
    assert labels[made_now[-1].entries[0].session] == "reproduce_synthetic.py"
    # The CSV beside the table's file is the table the ledger recorded.
    assert _files(made["dir"]) == files | {"people-synthetic.csv"}
    written = made["dir"] / "people-synthetic.csv"
    table = pd.read_csv(written)
    assert list(table.columns) == ["sex", "age"] and len(table) == len(released.table)
    assert "sha256:" + hashlib.sha256(written.read_bytes()).hexdigest() == record["table_fingerprint"]


def test_another_table_or_a_missing_ledger_is_refused_with_nothing_spent(made: dict[str, Any]) -> None:
    before, files = _ledger(made), _files(made["dir"])
    other = made["dir"] / "other.csv"
    other.write_text(made["path"].read_text().replace("\n1,", "\n2,", 1))  # one person changed
    refusals = [
        (("other.csv", "--release"), "other.csv is not the table this release was made from"),
        (("people.csv", "--release", "--ledger", "missing.sqlite"), "there is no dpdash ledger at missing"),
        (("people.csv", "--release", "--output", "people.csv"), "people.csv exists already"),
    ]
    for args, message in refusals:
        out = _run(made, *args)
        assert out.returncode == 1 and out.stdout == ""
        assert out.stderr.startswith(f"Not released, nothing was spent: {message}"), out.stderr
        assert "Traceback" not in out.stderr
    assert _ledger(made) == before and _files(made["dir"]) == files | {"other.csv"}


def test_a_short_budget_writes_no_table(made: dict[str, Any]) -> None:
    small = made["dir"] / "small.sqlite"  # the same table under a budget the release does not fit
    with Ledger(small) as book:
        book.add_dataset(name="people", fingerprint=made["identity"], budget=Budget(0.5, 1e-5),
                         accountant="zcdp")  # fmt: skip
    files = _files(made["dir"])
    out = _run(made, "people.csv", "--release", "--ledger", str(small))
    assert out.returncode == 1 and "Not released, nothing was spent: the budget is short" in out.stderr
    assert _files(made["dir"]) == files  # neither the CSV nor its partial file
    with Ledger(small) as book:
        assert book.events(made["identity"]) == []


# ---- user text ---------------------------------------------------------------------------------------


def _hostile(names: list[str], categories: list[str]) -> Any:
    """A seeded synthetic table of categorical columns named ``names``, each with ``categories``."""
    df = pd.DataFrame({name: [categories[i % len(categories)] for i in range(60)] for name in names})
    facts = PublicFacts(categories={name: categories for name in names})
    return synthesize(df, facts, epsilon=1.0, delta=1e-6, rng=0, identity="sha256:" + "0" * 64)


def test_hostile_names_are_inert_literals_in_the_script_and_escaped_in_the_notebook() -> None:
    names, categories = PAYLOADS[:3], PAYLOADS
    hostile, benign = _hostile(names, categories), _hostile(["a", "b", "c"], ["x", "y"])
    coercions = [[name, "categorical"] for name in names]
    # The script: the template's statements, and its constants are literals of the release.
    origin = TableOrigin(coercions=coercions, table_name=PAYLOADS[0], ledger="/tmp/l.sqlite")
    script = synthetic_script(hostile, origin=origin)
    reference = synthetic_script(benign, origin=TableOrigin(table_name="t.csv", ledger="/tmp/l.sqlite"))
    tree, ref = ast.parse(script), ast.parse(reference)
    assert len(tree.body) == len(ref.body)
    constants = {}
    for node, other in zip(tree.body, ref.body, strict=True):
        target = node.targets[0].id if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if target in SYNTHETIC_CONSTANTS:
            constants[target] = ast.literal_eval(node.value)  # a literal, or this raises
        else:
            assert ast.dump(node) == ast.dump(other)
    expected = synthetic_values(hostile, origin=origin)
    assert list(constants) == list(SYNTHETIC_CONSTANTS)
    assert {k: v for k, v in constants.items() if k != "RUN"} == expected
    assert constants["COLUMNS"] == names and constants["FACTS"]["categories"][names[0]] == categories
    # The notebook: code cells of the same shape, names only as literals; Markdown escaped.
    markup = [n for n in HOSTILE if "\x00" not in n][:3]
    origin = TableOrigin(table_name=markup[0], ledger="/tmp/l.sqlite")
    text = synthetic_notebook(_hostile(markup, markup), origin=origin)
    plain = synthetic_notebook(benign, origin=TableOrigin(table_name="t.csv", ledger="/tmp/l.sqlite"))
    code, reference_code = _code(text), _code(plain)
    assert len(code) == len(reference_code) == 5
    for cell, other_cell in zip(code, reference_code, strict=True):
        assert _shape(ast.parse(cell)) == _shape(ast.parse(other_cell))
    joined = "\n".join(_markdown(text))
    assert all(md(name) in joined for name in markup)
    for raw in ("<script>", "<img", '"""', "**bold**"):
        assert not re.search(r"(?<!\\)" + re.escape(raw), joined), raw
    assert not re.search("[<>&]", text) and json.loads(text)["nbformat"] == 4


def test_the_notebook_is_valid_nbformat(made: dict[str, Any]) -> None:
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.reads(synthetic_notebook(made["released"], origin=made["origin"]), as_version=4)
    nbformat.validate(notebook)
    assert len({cell.id for cell in notebook.cells}) == len(notebook.cells)


@pytest.mark.slow
def test_the_notebook_run_top_to_bottom_only_previews(made: dict[str, Any], kernel: str) -> None:  # noqa: F811
    before, files = _ledger(made), _files(made["dir"])
    text = synthetic_notebook(made["released"], origin=made["origin"])
    outputs = _execute(text, made["dir"], kernel)
    printed = _text(outputs)
    assert printed.startswith("SIMULATED PREVIEW: not a release, no budget spent")
    assert "RELEASE is False: nothing was released and nothing was spent" in printed
    assert "Released" not in printed
    assert {o["output_type"] for cell in outputs for o in cell} == {"stream"}  # no object's repr shown
    assert _ledger(made) == before and _files(made["dir"]) == files


def test_the_csv_beside_the_table_never_replaces_a_file(tmp_path: Path) -> None:
    table = tmp_path / "people.csv"
    assert beside(table) == tmp_path / "people-synthetic.csv"
    (tmp_path / "people-synthetic.csv").write_text("an earlier release")
    assert beside(table) == tmp_path / "people-synthetic-2.csv"


def test_an_aim_release_is_drawn_again_with_its_workload(made: dict[str, Any]) -> None:
    """The script and notebook of an AIM release carry its workload: the script's preview is the app's seeded
    AIM draw for that workload, and the notebook names the pairs (escaped) where it explains the method."""
    df, identity = made["df"], made["identity"]
    released = synthesize(df, FACTS, epsilon=EPSILON, delta=DELTA, identity=identity, bins=4, method="aim",
                          workload=[("sex", "age")])  # fmt: skip
    values = synthetic_values(released, origin=made["origin"])
    assert (values["METHOD"], values["WORKLOAD"]) == ("aim", [["sex", "age"]])
    made["script"].write_text(synthetic_script(released, origin=made["origin"]), encoding="utf-8")
    out = _run(made, "people.csv")
    assert out.returncode == 0, out.stderr
    previewed = synthesize(df, FACTS, epsilon=EPSILON, delta=DELTA, rng=PREVIEW_SEED, bins=4, method="aim",
                           workload=[("sex", "age")], rows=len(released.table),
                           identity=identity)  # fmt: skip
    assert previewed.table.head(10).to_string(index=False) in out.stdout
    explained = "\n".join(_markdown(synthetic_notebook(released, origin=made["origin"])))
    assert "**AIM** (McKenna, Mullins, Sheldon & Miklau 2022) for the workload “sex” × “age”" in explained
