"""The exported script holds user text (column names, where-values, categories, the table path) only as
inert literals: it parses, has exactly the intended statements, and running it runs only the query."""

from __future__ import annotations

import ast
import dataclasses
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpdash.errors import ParameterTypeError
from dpdash.export import release_script
from dpdash.queries import Count, Histogram, Where
from dpdash.release import Release, release

# Each payload tries to end the string it is written into (docstring, repr, f-string, comment) and run code;
# the rest are characters that break a naive literal (\N{ escapes, line ends Python or editors honour, NUL).
PAYLOADS = [
    'x""";open("PWNED1","w").close();"""',
    "x''';open('PWNED2','w').close();'''",
    "x\";open('PWNED3','w').close();\"",
    "x';open('PWNED4','w').close();'",
    "x\nopen('PWNED5','w').close()\n#",
    "x\r\nopen('PWNED6','w').close()\r\n",
    "x}{__import__('os').system('touch PWNED7')}{",
    "\\N{BULLET}",
    "\\N{",
    "back\\slash\\",
    "{}",
    "{{x}}",
    "ls\u2028sep",
    "ps\u2029sep",
    "nel\x85",
    "nul\x00",
    "# comment",
    "\u202eevil",
]
# A lone carriage return does not survive pandas' CSV round trip, so it is tested in values and paths only.
VALUES = [*PAYLOADS, "cr\ronly"]


def _constants(release_: Release, table_path: str) -> dict[str, object]:
    budget = f"ε = {release_.epsilon:g}" + (f", δ = {release_.delta:g}" if release_.delta else "")
    return {
        "RELEASE": f"{release_.query_name} with {release_.mechanism}, {budget}",
        "FINGERPRINT": release_.dataset_fingerprint,
        "TABLE": table_path,
        "QUERY": release_.query,
    }


def assert_only_intended_code(script: str, release_: Release, table_path: str) -> None:
    """The script's statements are the template's, and its four constants are literals of the release."""
    tree = ast.parse(script)
    benign = dataclasses.replace(
        release_, query={"type": "count"}, query_name="q", dataset_fingerprint="f"
    )
    reference = ast.parse(release_script(benign, "t"))
    assert len(tree.body) == len(reference.body)
    expected = _constants(release_, table_path)
    assigned = {}
    for node, ref in zip(tree.body, reference.body, strict=True):
        target = node.targets[0].id if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if target in expected:
            assert isinstance(ref, ast.Assign) and ref.targets[0].id == target
            assigned[target] = ast.literal_eval(node.value)  # a literal, or this raises
        else:  # imports, docstring and code: identical to the template's, nothing user-supplied in them
            assert ast.dump(node) == ast.dump(ref)
    assert assigned == expected


def _hostile_table() -> pd.DataFrame:
    return pd.DataFrame({name: [name, "other", name] for name in PAYLOADS})


def _queries() -> list:
    where = [Where(name, "==", name) for name in PAYLOADS]
    where.append(Where(PAYLOADS[0], "not in", VALUES))
    histogram = Histogram(column=PAYLOADS[0], categories=PAYLOADS)
    return [Count(where=where), histogram]


@pytest.mark.parametrize("query", _queries(), ids=["count-where", "histogram"])
def test_hostile_names_are_inert_literals(query) -> None:
    r = release(query, "Geometric", _hostile_table(), epsilon=1.0)
    for path in ["table.csv", *VALUES]:
        assert_only_intended_code(release_script(r, path), r, path)


@pytest.mark.parametrize("query", _queries(), ids=["count-where", "histogram"])
def test_script_with_hostile_names_runs_the_query_only(query, tmp_path) -> None:
    table = tmp_path / "table\r'\"\\N{.csv"
    _hostile_table().to_csv(table, index=False)
    df = pd.read_csv(table)
    assert list(df.columns) == PAYLOADS  # the names reach the script as written
    r = release(query, "Geometric", df, epsilon=1.0)
    script = tmp_path / "reproduce.py"
    script.write_text(release_script(r, str(table)), encoding="utf-8")
    before = set(os.listdir(tmp_path))
    repo = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, encoding="utf-8", cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": repo}, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert set(os.listdir(tmp_path)) == before  # no side effect: no PWNED file, nothing else
    assert not any(Path(repo, f"PWNED{i}").exists() for i in range(1, 8))
    assert "warning" not in out.stdout  # the same table, read back
    assert out.stdout.count(" ± ") == len(r.labels)
    assert r.accuracy.definition in out.stdout


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(column=st.text(min_size=1), value=st.text(), category=st.text(), path=st.text())
def test_any_text_is_an_inert_literal(column: str, value: str, category: str, path: str) -> None:
    df = pd.DataFrame({column: [value, category]})
    for query in (
        Count(where=[Where(column, "==", value), Where(column, "in", [category, value])]),
        Histogram(column=column, categories=sorted({category, value})),
    ):
        r = release(query, "Geometric", df, epsilon=1.0)
        assert_only_intended_code(release_script(r, path), r, path)


def test_hostile_mechanism_steps_and_fingerprint_from_a_record_stay_literals() -> None:
    df = pd.DataFrame({"a": [1, 2]})
    r = release(Count(), "Geometric", df, epsilon=1.0)
    evil = 'Geometric""";open("PWNED","w").close();"""'
    forged = dataclasses.replace(r, mechanism=evil, postprocessing=(evil,), dataset_fingerprint=evil)
    tree = ast.parse(release_script(forged))
    call = next(
        n for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "release"
    )  # fmt: skip
    assert ast.literal_eval(call.args[1]) == evil
    assert ast.literal_eval(next(k.value for k in call.keywords if k.arg == "postprocess")) == [evil]
    called = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert called == {"pd.read_csv", "dataset_fingerprint", "print", "release", "query_from_dict", "zip"}


def test_non_finite_where_values_are_written_as_float_calls() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0]})
    r = release(Count(where=[Where("a", "!=", float("nan")), Where("a", "<", math.inf)]), "Geometric", df,
                epsilon=1.0)  # fmt: skip
    script = release_script(r)
    namespace: dict[str, object] = {}
    exec(compile(script.split("\ndf = ")[0], "script", "exec"), namespace)  # the constants part only
    values = [w["value"] for w in namespace["QUERY"]["where"]]
    assert math.isnan(values[0]) and values[1] == math.inf


def test_objects_that_are_not_plain_data_are_refused() -> None:
    class Sneaky(str):
        def __repr__(self) -> str:
            return "__import__('os').system('id')"

    r = release(Count(), "Geometric", pd.DataFrame({"a": [1]}), epsilon=1.0)
    script = release_script(dataclasses.replace(r, query_name=Sneaky("q"), mechanism=Sneaky("Geometric")))
    assert "__import__" not in script  # a str subclass is written as the plain string it holds
    with pytest.raises(ParameterTypeError, match="query must hold only strings"):
        release_script(dataclasses.replace(r, query={"type": "count", "x": object()}))
