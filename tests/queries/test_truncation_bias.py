"""Per-person truncation keeps a uniform choice of each person's rows (issue 24): the rule written out
again from its docstring, and a panel of 10⁶ rows where people repeat a favourite category, truncated on
pandas and DuckDB (PostgreSQL and Spark: their own test modules) and held against the exact expectation of
a uniform choice with z-scores (tests/panel.py). A key of the person and the value alone, the rule this
replaces, fails the same check."""

from __future__ import annotations

import hashlib
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpdash.engines import open_frame
from dpdash.facts import Facts
from tests.panel import CATEGORIES, ID_KINDS, check_histogram, check_uniform_choice, panel

ROWS = 1_000_000


def text(v: Any) -> str:
    """e(v), written again from ``dpdash.truncation_keys``."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "N"
    if isinstance(v, str):
        return "S" + hashlib.md5(v.encode()).hexdigest()
    if isinstance(v, int):
        return f"I{v}"
    if not abs(v) < 2.0**62:
        return "FL"
    whole = math.floor(v)
    frac = (v - whole) * 2**31
    return f"F{whole},{math.floor(frac)},{math.floor((frac - math.floor(frac)) * 2**31)}"


def key(pid: Any, values: list[Any], j: int) -> str:
    """The first 12 hex digits of MD5("dpdash-truncation-1|e(id)|e(v₁)|…|j")."""
    fields = ["dpdash-truncation-1", text(pid), *map(text, values), str(j)]
    return hashlib.md5("|".join(fields).encode()).hexdigest()[:12]


def kept_by_hand(rows: list[tuple[Any, ...]], c: int) -> list[tuple[Any, ...]]:
    """Each person's c rows with the smallest keys, j counting equal rows of a person."""
    seen: dict[tuple[Any, ...], int] = {}
    keyed = []
    for row in rows:
        j = seen.get(row, 0)
        seen[row] = j + 1
        keyed.append((row[0], key(row[0], list(row[1:]), j), row))
    out: list[tuple[Any, ...]] = []
    for pid in dict.fromkeys(r[0] for r in rows):
        mine = sorted((k, i) for i, (p, k, _) in enumerate(keyed) if p == pid)
        out.extend(keyed[i][2] for _, i in mine[:c])
    return out


def _rows(df: pd.DataFrame) -> list[tuple[Any, ...]]:
    return sorted(map(tuple, df.astype(object).where(df.notna(), None).to_numpy().tolist()), key=repr)


@pytest.mark.parametrize(
    "ids",
    [
        [2**63 - 1, -(2**63), 2**53 + 1, 2**53, 7],  # 64-bit ids, two that agree in doubles
        ["a\x1fb", "Zoë", "'; DROP TABLE t; --", "😀", ""],
    ],
    ids=["int64", "string"],
)
def test_the_rule_written_out_again(ids: list[Any]) -> None:
    rng = np.random.default_rng(3)
    people = rng.choice(len(ids), 300)
    region = rng.choice(np.array(["north", "é\u2028<b>", "west", None], dtype=object), 300)
    wage = rng.choice([0.1, -2.5, 1e300, math.inf, 3.0, math.nan], 300)
    pid = pd.Series([ids[p] for p in people], dtype=object if isinstance(ids[0], str) else np.int64)
    df = pd.DataFrame({"pid": pid, "region": region, "wage": wage})
    for columns in (["region"], ["wage"], ["region", "wage"]):
        kept, _ = Facts(rows_per_person=3, id_column="pid").apply(df, columns)
        rows = [
            tuple(r) for r in df[["pid", *columns]].astype(object).where(df.notna(), None).to_numpy().tolist()
        ]
        expected = kept_by_hand(
            [tuple(int(v) if isinstance(v, np.integer) else v for v in r) for r in rows], 3
        )
        assert _rows(kept[["pid", *columns]]) == sorted(expected, key=repr)


@pytest.fixture(
    scope="module",  # small ids in make check; 64-bit and string ids (seconds each) in make test
    params=[kind if kind == "small" else pytest.param(kind, marks=pytest.mark.slow) for kind in ID_KINDS],
)
def person_panel(request: pytest.FixtureRequest) -> pd.DataFrame:
    return panel(ROWS, request.param)


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_a_truncated_histogram_and_sum_are_a_uniform_choice(person_panel: pd.DataFrame, engine: str) -> None:
    """c = 1 for the histogram (each person keeps one row: the sharpest test of a favourite category),
    c = 2 for the sum."""
    check_uniform_choice(person_panel if engine == "pandas" else open_frame(person_panel), person_panel)


def test_a_key_of_the_person_and_the_value_alone_fails_the_same_check() -> None:
    """The control: keeping each person's row with the smallest MD5(id, value), so equal values of a
    person share one key (the earlier rule's flaw), skews the cells far past 4 sd."""
    df = panel(ROWS // 4, "small")
    keys = [
        hashlib.md5(f"{p}|{v}".encode()).hexdigest() for p, v in zip(df["pid"], df["industry"], strict=True)
    ]
    kept = df.assign(k=keys).sort_values(["pid", "k"]).groupby("pid").head(1)
    observed = kept["industry"].value_counts().reindex(list(CATEGORIES)).fillna(0).to_numpy()
    with pytest.raises(AssertionError, match="sd from the expectation"):
        check_histogram(observed, df, 1)
