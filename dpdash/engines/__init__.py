"""Query engines: the true aggregates of a query computed where the table lives (issue 15).

One query definition (``dpdash.queries``) is compiled to Ibis expressions; DuckDB, in process, is
the embedded default. Only aggregates leave the engine. Per-person truncation follows the same
order-free rule as pandas (``dpdash.engines.truncation``). Importing this package does not import
Ibis or DuckDB; the functions do, when called.

>>> import pandas as pd
>>> from dpdash.queries import Histogram
>>> df = pd.DataFrame({"blood": ["A", "O", "O", None]})
>>> q = Histogram(column="blood", categories=["A", "O"])
>>> evaluate(q, df, engine="duckdb").values.tolist() == evaluate(q, df).values.tolist() == [1, 2, 0]
True
"""

from dpdash.engines.connection import DEFAULT_MEMORY_LIMIT, EngineConfig
from dpdash.engines.evaluate import COMPILED, evaluate
from dpdash.engines.sources import Source, open_duckdb, open_files, open_frame

__all__ = [
    "COMPILED",
    "DEFAULT_MEMORY_LIMIT",
    "EngineConfig",
    "Source",
    "evaluate",
    "open_duckdb",
    "open_files",
    "open_frame",
]
