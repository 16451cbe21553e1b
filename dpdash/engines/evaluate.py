"""One entry point for a query's true answer and owner report, wherever the table lives.

``evaluate(query, df)`` runs pandas (``query.evaluate``); ``evaluate(query, source)`` compiles the
query to Ibis and runs it in the source's engine, where only aggregates leave it; and
``evaluate(query, df, engine="duckdb")`` runs a DataFrame through DuckDB. NOT PRIVATE, as in pandas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from dpdash import queries
from dpdash.engines.connection import EngineConfig
from dpdash.engines.sources import Source, open_frame
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.queries.base import Evaluation, Query, check_bounding
from dpdash.queries.groupby import _GroupCentredSum, _GroupValidCount
from dpdash.queries.means import _ValidCount
from dpdash.queries.sums import _CentredSquares, _CentredSum

__all__ = ["COMPILED", "evaluate", "evaluate_in_engine"]

ENGINES = ("pandas", "duckdb")


def _compilers() -> dict[type, Callable[..., Evaluation]]:
    from dpdash.engines.counts import (
        evaluate_count,
        evaluate_grouped_count,
        evaluate_histogram,
        evaluate_keys,
        evaluate_people,
        evaluate_table,
        evaluate_valid_count,
    )
    from dpdash.engines.moment import evaluate_moment
    from dpdash.engines.selection import evaluate_mode, evaluate_quantile
    from dpdash.engines.sums import evaluate_column, evaluate_grouped_column

    out: dict[type, Callable[..., Evaluation]] = {
        queries.Count: evaluate_count,
        queries.CountPeople: evaluate_people,
        _ValidCount: evaluate_valid_count,
        queries.Histogram: evaluate_histogram,
        queries.KeyCounts: evaluate_keys,
        queries.GroupByCount: evaluate_grouped_count,
        queries.ContingencyTable: evaluate_table,
        queries.SecondMoment: evaluate_moment,
        queries.Mode: evaluate_mode,
        queries.Quantile: evaluate_quantile,
    }
    columns = (queries.Sum, _CentredSum, _CentredSquares, queries.Mean, queries.Variance)
    grouped = (queries.GroupBySum, queries.GroupByMean, _GroupCentredSum, _GroupValidCount)
    out.update(dict.fromkeys(columns, evaluate_column))
    out.update(dict.fromkeys(grouped, evaluate_grouped_column))
    return out


#: The query types that compile to an engine: every registered kind, and the pieces of composite ones.
COMPILED: tuple[type, ...] = (
    queries.Count,
    queries.CountPeople,
    queries.Sum,
    queries.Mean,
    queries.Variance,
    queries.Histogram,
    queries.KeyCounts,
    queries.ContingencyTable,
    queries.SecondMoment,
    queries.Mode,
    queries.Quantile,
    queries.GroupByCount,
    queries.GroupBySum,
    queries.GroupByMean,
    _ValidCount,
    _CentredSum,
    _CentredSquares,
    _GroupCentredSum,
    _GroupValidCount,
)


def evaluate(
    query: Query,
    data: pd.DataFrame | Source,
    *,
    engine: str | None = None,
    config: EngineConfig | None = None,
) -> Evaluation:
    """The true answer and the data owner's report of ``query`` on ``data``. NOT PRIVATE.

    Args:
        data: a pandas DataFrame or a :class:`Source` (``open_files``, ``open_duckdb``, ``open_frame``).
        engine: for a DataFrame, ``"pandas"`` (default) or ``"duckdb"``; a Source always runs in its
            own engine.
        config: the DuckDB settings when a DataFrame is run through DuckDB.
    """
    if engine is not None and engine not in ENGINES:
        raise ParameterError(f"engine must be one of {ENGINES}, got engine={engine!r}")
    if isinstance(data, pd.DataFrame):
        if engine in (None, "pandas"):
            return query.evaluate(data)
        data = open_frame(data, config)
    if not isinstance(data, Source):
        raise ParameterTypeError(f"data must be a pandas DataFrame or a Source, got {type(data).__name__}")
    return evaluate_in_engine(query, data)


def evaluate_in_engine(query: Query, source: Source) -> Evaluation:
    """Compile ``query`` to Ibis and run it on ``source``: truncation, clamping, report, in the engine."""
    from dpdash.engines.columns import require_columns
    from dpdash.engines.truncation import truncate

    compiler = _compilers().get(type(query))
    if compiler is None:
        raise ParameterError(
            f"{query.name} ({query.kind}) does not run in an engine yet: evaluate it on a pandas DataFrame"
        )
    check_bounding(query)
    require_columns(source.table, query.required_columns(), query.name, _numeric_columns(query))
    grouping = getattr(query, "grouping", None)  # per-group bounds, when the query declares them
    kept, truncation = truncate(source, query.facts, query.required_columns(), grouping)
    if truncation.rows_in == 0:
        raise ParameterError(
            "the table is empty (0 rows): there is nothing to release; check the file or the filter "
            "that produced it"
        )
    return compiler(query, source, kept, truncation)


def _numeric_columns(query: Any) -> tuple[str, ...]:
    """The columns the pandas path requires to be numeric for this query."""
    out: list[str] = []
    if isinstance(query, queries.ContingencyTable):
        return tuple(c for i, c in enumerate(query.columns) if query.bins is not None and query.bins[i])
    if getattr(query, "bins", None) is not None:
        out.append(query.by if hasattr(query, "by") else query.column)
    if hasattr(query, "bounds"):
        out.append(query.column)
    return tuple(out)
