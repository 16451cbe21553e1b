"""The same queries through Spark in local mode (pyspark on Debian's Java 17, the ``spark`` fixture): the
same true answers and owner reports as pandas (tests/engines/compare.py) (issue 15)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dpdash.engines import evaluate, open_spark
from dpdash.errors import ParameterError
from dpdash.facts import Facts
from dpdash.queries import Count, Histogram, KeyCounts, Sum
from tests.engines.compare import check
from tests.engines.test_differential import AGE, FACTS, ID, INCOME, REGION, integer_ids, queries, table
from tests.panel import check_uniform_choice, panel
from tests.spark_views import view


def test_spark_agrees_with_pandas(spark: Any) -> None:
    """Every query kind with c = 3 rows per person, over ids that are text with quotes or missing
    (truncation and its report; each query is several Spark jobs, so one of FACTS and one kind of id here:
    DuckDB and PostgreSQL run all three FACTS, and these ids; 64-bit integer ids below)."""
    facts = FACTS[2]
    df = table(1, rows=1500, people=300)
    df[ID] = df[ID].map(lambda v: None if v != v else f"p'{int(v)}\"")
    view(spark, df, "people")
    source = open_spark("people", session=spark)
    for query in queries(facts, grouped=True):
        check(query, df, source)


def test_keys_that_are_not_public_in_spark(spark: Any) -> None:
    """Key counts (add/remove neighbours, which FACTS[2] is not): the same keys, counts and report."""
    df = table(2, rows=1500, people=300)
    view(spark, df, "keyed")
    source = open_spark("keyed", session=spark)
    facts = Facts(rows_per_person=3, id_column=ID)
    for query in (
        KeyCounts(column=REGION, facts=facts, group_bounds=(2, 1)),
        KeyCounts(column=AGE, facts=facts, group_bounds=(1, 2)),
    ):
        check(query, df, source)


def test_integer_ids_in_spark(spark: Any) -> None:
    """64-bit ids to ±(2⁶³ − 1): the truncation keys of a count, a string histogram and a float sum (each
    query is several Spark jobs; DuckDB and PostgreSQL run every kind on these ids)."""
    df = integer_ids(12, rows=400)
    view(spark, df, "integer_ids")
    source = open_spark("integer_ids", session=spark)
    first = {type(q): q for q in reversed(queries(Facts(rows_per_person=2, id_column=ID)))}
    for kind in (Count, Histogram, Sum):
        check(first[kind], df, source)


def test_truncation_keeps_a_uniform_choice_in_spark(spark: Any, tmp_path: Path) -> None:
    """The 10⁶-row panel of tests/panel.py with 64-bit ids over the whole range, as on pandas, DuckDB and
    PostgreSQL (several seconds a query here, with Spark's generated code; small and string ids agree row
    for row with pandas above, and pandas is held against the expectation with every kind of id)."""
    df = panel(1_000_000, "int64")
    df.to_parquet(tmp_path / "panel.parquet")
    spark.read.parquet(str(tmp_path / "panel.parquet")).createOrReplaceTempView("panel")
    with compiled_plans(spark):
        check_uniform_choice(open_spark("panel", session=spark), df)


@contextlib.contextmanager
def compiled_plans(spark: Any) -> Iterator[None]:
    """Spark's own defaults for generated code, which the suite's session turns off for its small tables:
    at 10⁶ rows, compiling a plan saves more than it costs (about half of each query's time here)."""
    settings = {"spark.sql.codegen.wholeStage": "true", "spark.sql.codegen.factoryMode": "FALLBACK"}
    kept = {key: spark.conf.get(key) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in kept.items():
            spark.conf.set(key, value)


def test_nan_in_a_spark_double_column_is_missing(spark: Any) -> None:
    """Spark keeps NaN apart from NULL; dpdash counts both as missing, as pandas does."""
    view(spark, table(6, rows=200), "plain")
    spark.sql("SELECT *, CAST('NaN' AS DOUBLE) AS nan_column FROM plain").createOrReplaceTempView("with_nan")
    source = open_spark("with_nan", session=spark)
    assert evaluate(Count(), source).values.tolist() == [200]
    report = evaluate(Sum(column="nan_column", bounds=(0, 1)), source).report
    assert (report.missing, report.rows_used) == (200, 0)


def test_unknown_table_and_the_session_left_running(spark: Any) -> None:
    with pytest.raises(ParameterError, match=r"no table 'nope' in Spark \(local\[2\]\)"):
        open_spark("nope", session=spark)
    view(spark, table(7, rows=30), "kept")
    source = open_spark("kept", session=spark)
    assert source.location == "spark:local[2]#kept" and INCOME in source.schema()
    source.close()
    assert spark.sql("SELECT 1").collect()[0][0] == 1  # close() did not stop the shared session


def test_every_spelling_of_a_catalog_table_is_one_identity(spark: Any) -> None:
    """``visits`` and ``default.visits`` are one table of the catalog: one location and fingerprint, and
    the names a roles rule matches (issue 25, item 4)."""
    view(spark, table(8, rows=20), "visits_rows")
    spark.sql("DROP TABLE IF EXISTS default.visits")
    spark.sql("CREATE TABLE default.visits USING parquet AS SELECT * FROM visits_rows")
    sources = [open_spark(spelling, session=spark) for spelling in ("visits", "default.visits")]
    assert len({s.location for s in sources}) == 1 and sources[0].location.endswith("default.visits")
    assert len({s.fingerprint() for s in sources}) == 1
    assert {s.names for s in sources} == {("default.visits", "visits")}
    spark.sql("DROP TABLE default.visits")


@pytest.mark.parametrize("name", ["visits 2024", "it's", 'say "hi"', "back`tick", "dotted.name"])
def test_a_view_named_with_spaces_quotes_or_dots_opens(spark: Any, name: str) -> None:
    """A view Spark lists under any name opens and answers (Spark parses a bare name as SQL: ``it's`` was a
    ParseException), with the same count and sum as pandas; its location keeps the name as listed."""
    from dpdash.engines.spark import quoted

    df = table(9, rows=40)
    view(spark, df, quoted(name))
    source = open_spark(name, session=spark)
    assert source.location == f"spark:local[2]#{name}"
    assert evaluate(Count(), source).values == Count().evaluate(df).values
    income = Sum(column=INCOME, bounds=(0, 100_000))
    assert evaluate(income, source).values == pytest.approx(income.evaluate(df).values, rel=1e-9)
    spark.catalog.dropTempView(quoted(name))
