"""Query engines: the true aggregates of a query computed where the table lives (issue 15).

One query definition (``dpdash.queries``) is compiled to Ibis expressions; DuckDB, in process, is
the embedded default (``EngineConfig``: memory limit, spill folder, threads). Only aggregates leave
the engine. Per-person truncation follows the same order-free rule as pandas
(``dpdash.engines.truncation``), so both give the same answers and owner reports.

- ``open_files("sales/")``, ``open_files("sales/2026-*.parquet")``, ``open_files("t.csv")``: Parquet
  or CSV read in place; ``open_duckdb("w.duckdb", "visits")``: a table of a DuckDB file (read only);
  ``open_frame(df)``: a DataFrame through DuckDB;
  ``open_postgres("postgresql://user@host/db", "visits")``: a PostgreSQL table (read only; the password is
  never kept); ``open_spark("visits", session=spark)``: a Spark table or view (or
  ``open_spark("visits", master="spark://host:7077")``). ``Source.schema()``, ``row_count()``, ``head()``.
  ``SourceLimits``: the most files, folder levels, columns and seconds a connect may take.
- ``SourceSpec(kind=..., ...)``: where a connected table lives, password-free (what the app's Connect
  section and the workspace keep); ``spec.open(password=...)`` opens it.
- ``evaluate(query, source)``: the ``Evaluation`` (true answer, pieces, utilities, NOT PRIVATE
  report); ``evaluate(query, df)`` is pandas' ``query.evaluate(df)``.

Importing this package does not import Ibis or DuckDB; opening a source does.

>>> import pandas as pd
>>> from dpdash.queries import Histogram
>>> df = pd.DataFrame({"blood": ["A", "O", "O", None]})
>>> q = Histogram(column="blood", categories=["A", "O"])
>>> evaluate(q, df, engine="duckdb").values.tolist() == evaluate(q, df).values.tolist() == [1, 2, 0]
True
"""

from dpdash.engines.connection import DEFAULT_MEMORY_LIMIT, EngineConfig
from dpdash.engines.evaluate import COMPILED, evaluate
from dpdash.engines.limits import SourceLimits
from dpdash.engines.postgres import open_postgres
from dpdash.engines.sources import Source, SourceChangedError, open_duckdb, open_files, open_frame
from dpdash.engines.spark import open_spark, spark_session
from dpdash.engines.spec import SourceSpec

__all__ = [
    "COMPILED",
    "DEFAULT_MEMORY_LIMIT",
    "EngineConfig",
    "Source",
    "SourceChangedError",
    "SourceLimits",
    "SourceSpec",
    "evaluate",
    "open_duckdb",
    "open_files",
    "open_frame",
    "open_postgres",
    "open_spark",
    "spark_session",
]
