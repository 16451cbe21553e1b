"""Every marginal is a dpdash count query run where the table lives: pandas, DuckDB, PostgreSQL and Spark
give the same true counts, with the same per-person truncation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dpdash.engines import evaluate, open_frame
from dpdash.facts import Facts
from dpdash.queries import ContingencyTable, query_from_dict
from dpdash.synthetic import build_domain
from dpdash.synthetic.measure import true_counts
from tests.engines.test_postgres import PASSWORD, READER, server  # noqa: F401 (the fixture)
from tests.synthetic.helpers import ID, facts, table

UNITS = [Facts(), Facts(rows_per_person=2, id_column=ID), Facts(neighbours="substitute", rows_per_person=1)]
CLIQUES = [("colour",), ("size",), ("colour", "shape"), ("colour", "size"), ("size", "shape")]


def _check(source: Any, df: Any, unit: Facts) -> None:
    domain = build_domain(facts(unit), ["colour", "shape", "size"], bins=8)
    for clique in CLIQUES:
        expected = true_counts(domain, clique, df)
        got = true_counts(domain, clique, source)
        assert np.array_equal(expected, got), clique
        assert expected.size == int(np.prod([domain.column(c).size for c in clique]))


@pytest.mark.parametrize("unit", UNITS, ids=["trusted", "c=2", "substitute"])
def test_pandas_and_duckdb_agree(unit: Facts) -> None:
    df = table(3, rows=3000)
    _check(open_frame(df), df, unit)


def test_truncation_applies() -> None:
    """With c = 1 on the id column, the counts total the people kept, not the rows."""
    df = table(4, rows=3000)
    domain = build_domain(facts(Facts(rows_per_person=1, id_column=ID)), ["colour"])
    assert true_counts(domain, ("colour",), df).sum() == df[ID].nunique()


def test_binned_contingency_table_round_trips_and_reports() -> None:
    df = table(5, rows=500)
    q = ContingencyTable(columns=("colour", "size"), categories=(("red", "blue"), None),
                         bins=(None, [0, 50, 100]))  # fmt: skip
    assert query_from_dict(q.to_dict()) == q
    pandas, duck = evaluate(q, df), evaluate(q, df, engine="duckdb")
    assert np.array_equal(pandas.values, duck.values)
    assert pandas.report.missing == duck.report.missing == 3
    assert pandas.report.outside == duck.report.outside


def test_postgres_agrees(server: Any) -> None:  # noqa: F811 (the fixture imported above)
    from dpdash.engines import open_postgres

    df = table(6, rows=2000)
    server.load(df, "synthetic_marginals")
    source = open_postgres(server.url(READER, PASSWORD), "synthetic_marginals")
    try:
        for unit in UNITS:
            _check(source, df, unit)
    finally:
        source.close()


def test_spark_agrees(spark: Any) -> None:
    from dpdash.engines import open_spark
    from tests.spark_views import view

    df = table(7, rows=2000)
    view(spark, df, "synthetic_marginals")
    _check(open_spark("synthetic_marginals", session=spark), df, UNITS[1])
