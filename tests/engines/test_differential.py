"""The same queries, on the same data, through pandas and through DuckDB (compiled by Ibis): identical
true answers (integers exactly, floats to 1e-9 relative), pieces and owner reports (issue 15)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpdash.engines import COMPILED, evaluate, open_frame
from dpdash.errors import ParameterError
from dpdash.facts import Facts
from dpdash.queries import (
    ContingencyTable,
    Count,
    CountPeople,
    GroupByCount,
    GroupByMean,
    GroupBySum,
    Histogram,
    KeyCounts,
    Mean,
    Mode,
    Quantile,
    SecondMoment,
    Sum,
    Variance,
    Where,
)
from dpdash.queries.base import _REGISTRY
from dpdash.queries.groupby import _GroupCentredSum
from dpdash.queries.histogram import numeric_bins
from dpdash.queries.sums import _CentredSquares
from tests.engines.compare import check, same_evaluation

ID = "person id"
INCOME = 'in"come; DROP TABLE x; --'
REGION = "région </script>"
AGE = "age"
HOSTILE = ["A", "B", 'O"Brien', "it's", '"; DROP TABLE x; --', "</script>", "é", "日本", "😀"]
CATEGORIES = (*HOSTILE[:-1], "never seen")  # "😀" falls outside; "never seen" stays empty


def table(seed: int, rows: int = 3000, people: int = 500) -> pd.DataFrame:
    """A seeded table: ids with some missing, clipped and missing incomes, hostile categories."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, people, rows).astype(float)
    ids[rng.random(rows) < 0.03] = np.nan
    income = rng.normal(50, 35, rows).round(2)
    income[rng.random(rows) < 0.1] = np.nan
    age = rng.integers(0, 100, rows).astype(float)
    age[rng.random(rows) < 0.05] = np.nan
    region = rng.choice(np.array([*HOSTILE, None], dtype=object), rows)
    kids = rng.integers(0, 5, rows)
    return pd.DataFrame({ID: ids, INCOME: income, REGION: region, AGE: age, "kids": kids, "flag": kids > 2})


def queries(facts: Facts, grouped: bool = False) -> list:
    bounds = (0, 100)
    bins = numeric_bins((0, 90), count=9)
    return [
        Count(facts=facts),
        Count(where=[Where(AGE, ">=", 65)], facts=facts),
        Count(where=[Where(REGION, "==", '"; DROP TABLE x; --'), Where(INCOME, "<", 40.5)], facts=facts),
        Count(where=[Where(REGION, "in", ["é", "</script>", 3]), Where("kids", "!=", 2)], facts=facts),
        Count(where=[Where(REGION, "not in", ["A"]), Where(AGE, "==", "old")], facts=facts),
        Count(where=[Where(REGION, ">=", "O"), Where("flag", "==", 1)], facts=facts),
        Sum(column=INCOME, bounds=bounds, facts=facts),
        Sum(column="kids", bounds=(1, 3), facts=facts),
        Sum(column="flag", bounds=(-1, 0.5), facts=facts),
        _CentredSquares(column=INCOME, bounds=bounds, facts=facts),
        Mean(column=INCOME, bounds=bounds, facts=facts),
        Variance(column=INCOME, bounds=(10, 80), facts=facts),
        SecondMoment(columns=(INCOME, AGE, "kids"), norm_bound=60.0, facts=facts),
        Quantile.on_grid(column=INCOME, bounds=(10, 90), size=17, quantiles=(0.5, 0.1, 0.99), facts=facts),
        Quantile(column=AGE, candidates=(20, 30.5, 40, 65), quantiles=0.25, facts=facts),
        Mode(column=REGION, categories=CATEGORIES, facts=facts),
        Histogram(column=REGION, categories=CATEGORIES, facts=facts),
        Histogram(column=REGION, categories=CATEGORIES, outside="drop", facts=facts),
        Histogram(column="kids", categories=[0, True, 2.0, "3"], facts=facts),
        Histogram(column="flag", categories=[True, 0, "x"], facts=facts),
        Histogram(column=AGE, bins=bins, facts=facts),
        Histogram(column=INCOME, bins=bins, outside="drop", facts=facts),
        ContingencyTable(columns=(REGION, "kids"), categories=(CATEGORIES, (0, 1, 2)), facts=facts),
        ContingencyTable(
            columns=("kids", REGION), categories=((3, 4.0), HOSTILE[:3]), outside="drop", facts=facts
        ),
        GroupByCount(by=REGION, keys=CATEGORIES, outside="other", facts=facts),
        GroupByCount(by=AGE, bins=bins, facts=facts),
        GroupBySum(by=REGION, column=INCOME, keys=CATEGORIES, bounds=bounds, facts=facts),
        GroupBySum(by=AGE, column=INCOME, bins=bins, bounds=bounds, outside="other", facts=facts),
        _GroupCentredSum(by=AGE, column=INCOME, bins=bins, bounds=(10, 80), facts=facts),
        GroupByMean(by=REGION, column=INCOME, keys=CATEGORIES, bounds=bounds, outside="other", facts=facts),
        *(grouped_queries(facts) if grouped and facts.id_column is not None else []),
    ]


def grouped_queries(facts: Facts) -> list:
    """A count of people and queries with per-group bounds (k cells per person, m rows in each): they
    need an id column."""
    bins = numeric_bins((0, 90), count=9)
    return [
        CountPeople(facts=facts),
        Histogram(column=REGION, categories=CATEGORIES, facts=facts, group_bounds=(2, 1)),
        Histogram(column=AGE, bins=bins, outside="drop", facts=facts, group_bounds=(1, 2)),
        GroupByCount(by="flag", keys=[True, False], facts=facts, group_bounds=(1, 1)),
        GroupBySum(
            by=REGION, column=INCOME, keys=HOSTILE[:4], bounds=(0, 100), outside="other", facts=facts,
            group_bounds=(3, 2),
        ),
        GroupByMean(
            by="kids", column=INCOME, keys=[0, 1, 2], bounds=(0, 100), facts=facts, group_bounds=(2, 3)
        ),
        # Keys that are not public: every value found is a key (add/remove neighbours only).
        *(
            [
                KeyCounts(column=REGION, facts=facts, group_bounds=(2, 1)),
                KeyCounts(column=AGE, facts=facts, group_bounds=(1, 2)),
            ]
            if not facts.substitute
            else []
        ),
    ]


FACTS = [
    Facts(),
    Facts(rows_per_person=1, id_column=ID),
    Facts(neighbours="substitute", rows_per_person=3, id_column=ID),
]


def test_every_query_kind_is_compiled_and_in_the_differential_test() -> None:
    tested = {type(q) for q in queries(Facts(id_column=ID), grouped=True)}
    public = {t for t in _REGISTRY.values() if not t.__name__.startswith("_")}
    assert public <= set(COMPILED)
    assert public <= tested
    assert set(_REGISTRY.values()) <= set(COMPILED)  # the pieces of composite queries too


@pytest.mark.parametrize("facts", FACTS, ids=["trusted", "c=1", "c=3"])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.slow
def test_pandas_and_duckdb_agree_on_random_tables(facts: Facts, seed: int) -> None:
    df = table(seed)
    source = open_frame(df)
    for query in queries(facts, grouped=seed == 1):  # per-group bounds on one seed (and the id tests below)
        check(query, df, source)


@pytest.mark.slow
def test_truncation_keeps_the_same_rows_whatever_the_row_order() -> None:
    df = table(5, rows=2000, people=60)  # many rows per person
    shuffled = df.sample(frac=1, random_state=11).reset_index(drop=True)
    for query in queries(Facts(rows_per_person=2, id_column=ID)):
        a, b = evaluate(query, df, engine="duckdb"), evaluate(query, shuffled, engine="duckdb")
        same_evaluation(a, b, len(df) * 1e4)
        same_evaluation(a, evaluate(query, shuffled), len(df) * 1e4)


@pytest.mark.slow
def test_one_person_with_many_rows() -> None:
    rng = np.random.default_rng(3)
    df = table(4, rows=400)
    df.loc[:299, ID] = 7.0  # one person owns 300 rows
    df.loc[:50, INCOME] = rng.choice([-1e6, 1e6, math.inf, -math.inf], 51)
    for c in (1, 299, 300):
        for query in queries(Facts(rows_per_person=c, id_column=ID)):
            check(query, df)


@pytest.mark.slow
def test_all_missing_and_empty_after_truncation() -> None:
    df = table(6, rows=200)
    df[INCOME] = np.nan
    df[REGION] = None
    df[AGE] = np.nan
    for query in queries(Facts(rows_per_person=2, id_column=ID)):
        check(query, df)
    df[ID] = np.nan  # every row without an id: nothing is left after truncation
    for query in queries(Facts(rows_per_person=2, id_column=ID)):
        check(query, df)
        assert evaluate(query, df, engine="duckdb").report.truncation.rows_kept == 0


def integer_ids(seed: int, rows: int = 600) -> pd.DataFrame:
    """The table with 64-bit integer ids (BIGINT in the engines), small and up to ±(2⁶³ − 1), where
    id·0.618… is past 2⁵² (an integer: the unit is 0) and floor() is near the BIGINT limit."""
    df = table(seed, rows=rows, people=40)
    edges = np.array([0, 1, -1, 2**53 + 1, -(2**53) - 1, 2**62 + 7, -(2**62), 2**63 - 1, -(2**63) + 1])
    codes = np.nan_to_num(df[ID].to_numpy(), nan=0).astype(np.int64)
    df[ID] = np.where(codes < len(edges), edges[np.minimum(codes, len(edges) - 1)], codes * 7919)
    return df


@pytest.mark.slow
def test_integer_ids_down_to_the_last_bit() -> None:
    df = integer_ids(12)
    assert df[ID].dtype == np.int64
    for query in queries(Facts(rows_per_person=2, id_column=ID), grouped=True):
        check(query, df)


@pytest.mark.slow
def test_string_ids_and_nan_in_a_duckdb_column() -> None:
    df = table(8, rows=500)
    df[ID] = df[ID].map(lambda v: None if np.isnan(v) else f"p'{int(v) % 40}\"")
    for query in queries(Facts(rows_per_person=2, id_column=ID), grouped=True):
        check(query, df)


def test_the_engine_refuses_what_pandas_refuses() -> None:
    df = table(9, rows=50)
    for query, message in [
        (Sum(column="nope", bounds=(0, 1)), "column 'nope' is not in the table"),
        (Sum(column=REGION, bounds=(0, 1)), f"column {REGION!r} must be numeric"),
        (Count(facts=Facts(id_column="who")), "id_column 'who' is not a column of the table"),
        (Count(where=[Where(REGION, "<", 3)]), "cannot compare column"),
    ]:
        with pytest.raises(ParameterError, match=message):
            query.evaluate(df)
        with pytest.raises(ParameterError, match=message):
            evaluate(query, df, engine="duckdb")
    with pytest.raises(ParameterError, match="the table is empty"):
        evaluate(Count(), df.iloc[:0], engine="duckdb")
    with pytest.raises(ParameterError, match="engine must be one of"):
        evaluate(Count(), df, engine="spark")
