"""The exported script holds user text (column names, where-values, categories, type changes, the table's
name) only as inert literals: it parses, has exactly the intended statements, and running it runs only the
query, through the ledger."""

from __future__ import annotations

import ast
import dataclasses
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.export import SCRIPT_CONSTANTS, release_script
from dpdash.ledger import default_ledger_location
from dpdash.queries import Count, Histogram, Where
from dpdash.release import Release, release
from dpdash.table_origin import TableOrigin

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


def _constants(
    release_: Release, table_name: str, coercions: list[list[str]] | None = None, lossy: bool = False
) -> dict[str, object]:
    budget = f"ε = {release_.epsilon:g}" + (f", δ = {release_.delta:g}" if release_.delta else "")
    table_file = table_name if "." in table_name else "TABLE_FILE"
    return {
        "RELEASE": f"{release_.query_name} with {release_.mechanism}, {budget}",
        "RUN": shlex.join(["python", "reproduce_release.py", table_file]),
        "LEDGER": str(Path(default_ledger_location()).resolve()),  # no ledger given: the default one
        "TABLE_NAME": table_name,
        "IDENTITY": release_.dataset_identity,
        "FINGERPRINT": release_.dataset_fingerprint,
        "COERCIONS": coercions or [],
        "LOSSY": lossy,
        "QUERY": release_.query,
        "MECHANISM": release_.mechanism.lower(),
        "OPTIONS": {},
        "EPSILON": release_.epsilon,
        "DELTA": release_.delta or None,
        "CONFIDENCE": release_.accuracy.confidence,
        "POSTPROCESS": list(release_.postprocessing),
    }


def assert_only_intended_code(
    script: str, release_: Release, table_name: str, coercions: list[list[str]] | None = None
) -> None:
    """The script's statements are the template's, and its constants are literals of the release."""
    tree = ast.parse(script)
    benign = dataclasses.replace(
        release_, query={"type": "count"}, query_name="q", dataset_fingerprint="f", dataset_identity="i"
    )
    reference = ast.parse(release_script(benign, origin=TableOrigin(table_name="t")))
    assert len(tree.body) == len(reference.body)
    expected = _constants(release_, table_name, coercions)
    assert list(expected) == list(SCRIPT_CONSTANTS)
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


def _hostile_coercions() -> list[list[str]]:
    return [
        [name, kind] for name, kind in zip(PAYLOADS, ["categorical", "text", "categorical"] * 6, strict=False)
    ]


@pytest.mark.parametrize("query", _queries(), ids=["count-where", "histogram"])
def test_hostile_names_are_inert_literals(query) -> None:
    r = release(query, "Geometric", _hostile_table(), epsilon=1.0)
    for name in ["table.csv", *VALUES]:
        assert_only_intended_code(release_script(r, origin=TableOrigin(table_name=name)), r, name)
    coercions = _hostile_coercions()
    assert_only_intended_code(
        release_script(r, origin=TableOrigin(coercions=coercions, table_name="t.csv")), r, "t.csv", coercions
    )


@pytest.mark.parametrize("kind", ["count-where", "histogram"])
def test_script_with_hostile_names_runs_the_query_only(kind: str, tmp_path: Path) -> None:
    """The app's path: the file read by load_table (which cleans line breaks and invisible characters out
    of names; the rest reach the script as written), hostile columns re-typed, a budget in a ledger."""
    from dpdash.accounting import Budget
    from dpdash.ledger import Ledger, fingerprint
    from dpdash.loading import coerce_column, load_table

    payloads = [p for p in PAYLOADS if "\x00" not in p]  # a NUL byte makes the file binary: refused
    table = tmp_path / "table\r'\"\\N{.csv"
    pd.DataFrame({name: [name, "other", name] for name in payloads}).to_csv(table, index=False)
    raw = load_table(table.read_bytes(), table.name).data
    names = list(raw.columns)
    assert sum(name in payloads for name in names) >= 10  # most names reach the script unchanged
    coercions = [[name, "categorical"] for name in names[:8]]
    df = raw
    for column, to in coercions:
        df = coerce_column(df, column, to)
    query = (
        Count(where=[Where(name, "==", name) for name in names])
        if kind == "count-where"
        else Histogram(column=names[0], categories=payloads)
    )
    r = release(query, "Geometric", df, epsilon=1.0, identity=fingerprint(raw))
    ledger_path = tmp_path / "ledger.sqlite"
    with Ledger(ledger_path) as ledger:
        ledger.add_dataset(
            name="hostile", fingerprint=fingerprint(raw), budget=Budget(5.0), accountant="basic"
        )
    script = tmp_path / "reproduce.py"
    origin = TableOrigin(coercions=coercions, table_name=PAYLOADS[0], ledger=ledger_path)
    script.write_text(release_script(r, origin=origin), encoding="utf-8")
    before = set(os.listdir(tmp_path))
    repo = str(Path(__file__).resolve().parents[1])
    out = subprocess.run(
        [sys.executable, str(script), str(table)], capture_output=True, text=True, encoding="utf-8",
        cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": repo, "DPDASH_LEDGER": str(ledger_path)},
        timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    # no side effect: no PWNED file; only the ledger's write-ahead log files may appear beside it
    assert {f for f in set(os.listdir(tmp_path)) - before if not f.startswith("ledger.sqlite")} == set()
    assert not any(Path(repo, f"PWNED{i}").exists() for i in range(1, 8))
    assert out.stdout.count(" ± ") == len(r.labels)
    assert r.accuracy.definition in out.stdout
    with Ledger(ledger_path) as ledger:
        assert ledger.status(fingerprint(raw)).spent.epsilon == 1.0  # spent through the ledger


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(column=st.text(min_size=1), value=st.text(), category=st.text(), name=st.text())
def test_any_text_is_an_inert_literal(column: str, value: str, category: str, name: str) -> None:
    df = pd.DataFrame({column: [value, category]})
    for query in (
        Count(where=[Where(column, "==", value), Where(column, "in", [category, value])]),
        Histogram(column=column, categories=sorted({category, value})),
    ):
        r = release(query, "Geometric", df, epsilon=1.0)
        coercions = [[column, "categorical"], [name, "text"]]
        origin = TableOrigin(coercions=coercions, table_name=name)
        assert_only_intended_code(release_script(r, origin=origin), r, name, coercions)


def test_hostile_steps_fingerprints_and_names_from_a_record_stay_literals() -> None:
    df = pd.DataFrame({"a": [1, 2]})
    r = release(Count(), "Geometric", df, epsilon=1.0)
    evil = 'Geometric""";open("PWNED","w").close();"""'
    forged = dataclasses.replace(
        r, postprocessing=(evil,), dataset_fingerprint=evil, dataset_identity=evil, query_name=evil
    )
    script = release_script(forged, origin=TableOrigin(coercions=[[evil, "text"]], table_name=evil))
    tree = ast.parse(script)
    constants = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and node.targets[0].id in SCRIPT_CONSTANTS
    }
    assert constants["POSTPROCESS"] == [evil] and constants["COERCIONS"] == [[evil, "text"]]
    assert constants["IDENTITY"] == constants["FINGERPRINT"] == constants["TABLE_NAME"] == evil
    called = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert called == {
        "Reproduction", "argparse.ArgumentParser", "parser.add_argument", "parser.parse_args",
        "REPRODUCTION.load", "REPRODUCTION.preview", "REPRODUCTION.spend", "print", "sys.exit", "main",
    }  # fmt: skip


def test_a_forged_mechanism_or_coercion_kind_is_refused() -> None:
    r = release(Count(), "Geometric", pd.DataFrame({"a": [1, 2]}), epsilon=1.0)
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        release_script(dataclasses.replace(r, mechanism='Geometric";import os;"'))
    with pytest.raises(ParameterError, match="kind"):
        release_script(r, origin=TableOrigin(coercions=[["a", 'text";import os;"']]))
    with pytest.raises(ParameterTypeError, match="coercions must be"):
        release_script(r, origin=TableOrigin(coercions=["ab"]))
    with pytest.raises(ParameterError, match="dataset_identity"):
        release_script(dataclasses.replace(r, dataset_identity=None))


def test_the_script_holds_no_true_value() -> None:
    """Distinctive true counts (large primes) are nowhere among the script's constants."""
    df = pd.DataFrame({"g": ["a"] * 7919 + ["b"] * 10007})
    r = release(Histogram(column="g", categories=["a", "b"]), "Geometric", df, epsilon=1.0)
    tree = ast.parse(release_script(r, origin=TableOrigin(table_name="t.csv")))

    def leaves(value: object) -> list[object]:
        if isinstance(value, dict):
            return [x for v in value.values() for x in leaves(v)]
        if isinstance(value, list):
            return [x for v in value for x in leaves(v)]
        return [value]

    numbers = {
        x for node in tree.body if isinstance(node, ast.Assign) and node.targets[0].id in SCRIPT_CONSTANTS
        for x in leaves(ast.literal_eval(node.value)) if isinstance(x, int | float)
    }  # fmt: skip
    assert r.true_values == (7919, 10007, 0)
    assert not numbers & {7919, 10007, 17926} and "7919" not in str(numbers)


def test_non_finite_where_values_are_written_as_float_calls() -> None:
    df = pd.DataFrame({"a": [1.0, 2.0]})
    r = release(Count(where=[Where("a", "!=", float("nan")), Where("a", "<", math.inf)]), "Geometric", df,
                epsilon=1.0)  # fmt: skip
    namespace: dict[str, object] = {"__name__": "not_main"}  # defines the constants, runs nothing
    exec(compile(release_script(r), "script", "exec"), namespace)
    values = [w["value"] for w in namespace["QUERY"]["where"]]
    assert math.isnan(values[0]) and values[1] == math.inf


def test_objects_that_are_not_plain_data_are_refused() -> None:
    class Sneaky(str):
        def __repr__(self) -> str:
            return "__import__('os').system('id')"

    r = release(Count(), "Geometric", pd.DataFrame({"a": [1]}), epsilon=1.0)
    script = release_script(
        dataclasses.replace(r, query_name=Sneaky("q"), mechanism=Sneaky("Geometric")),
        origin=TableOrigin(table_name=Sneaky("t")),
    )
    assert "__import__" not in script  # a str subclass is written as the plain string it holds
    with pytest.raises(ParameterTypeError, match="query must hold only strings"):
        release_script(dataclasses.replace(r, query={"type": "count", "x": object()}))
