"""Counts compiled to Ibis: Count (with or without ``where``), the non-missing count piece,
Histogram (categories or bins) and GroupByCount. Each returns the pandas path's ``Evaluation``."""

from __future__ import annotations

from typing import Any

import ibis
import numpy as np

from dpdash.engines.cells import KEY, STATUS, fold, per_cell, with_cells
from dpdash.engines.columns import missing, where_match
from dpdash.engines.truncation import _int
from dpdash.facts import Truncation
from dpdash.queries import Count, GroupByCount, Histogram
from dpdash.queries.base import DataReport, Evaluation
from dpdash.queries.sums import _ValidCount

__all__ = ["evaluate_count", "evaluate_grouped_count", "evaluate_histogram", "evaluate_valid_count"]


def evaluate_count(query: Count, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    if not query.where:
        report = DataReport(rows=truncation.rows_in, rows_used=truncation.rows_kept, truncation=truncation)
        return Evaluation(np.array([truncation.rows_kept], dtype=np.int64), report)
    match = ibis.literal(True)
    gone = ibis.literal(False)
    for condition in query.where:
        match = match & where_match(table, condition)
        gone = gone | missing(table[condition.column])
    row = source.execute(table.aggregate(n=match.cast("int64").sum(), missing=gone.cast("int64").sum())).iloc[
        0
    ]
    count = _int(row["n"])
    report = DataReport(
        rows=truncation.rows_in,
        rows_used=count,
        truncation=truncation,
        missing=_int(row["missing"]),
        notes=("rows with a missing value in a filter column never match",),
    )
    return Evaluation(np.array([count], dtype=np.int64), report)


def evaluate_valid_count(query: _ValidCount, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    gone = missing(table[query.column]).cast("int64")
    row = source.execute(table.aggregate(missing=gone.sum())).iloc[0]
    gone_n = _int(row["missing"])
    count = truncation.rows_kept - gone_n
    report = DataReport(rows=truncation.rows_in, rows_used=count, truncation=truncation, missing=gone_n)
    return Evaluation(np.array([count], dtype=np.int64), report)


def cell_counts(
    query: Any, source: Any, table: Any, column: str, categories: Any
) -> tuple[np.ndarray, int, int]:
    """(counts per cell, missing, outside) of ``column``: one GROUP BY in the engine."""
    cells = with_cells(table, column, categories, query.bins)
    frame = source.execute(cells.group_by([STATUS, KEY]).aggregate(n=cells.count()))
    folded = fold(frame, categories, query.bins, query.outside)
    counts = per_cell(folded, frame["n"], len(query.labels))
    n = frame["n"].to_numpy(dtype=np.int64)
    return counts, int(n[folded.missing].sum()), int(n[folded.outside].sum())


def evaluate_histogram(query: Histogram, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    counts, gone, outside = cell_counts(query, source, table, query.column, query.categories)
    declared = query.declared
    empty = tuple(
        (query.categories[i] if query.categories is not None else declared[i])
        for i in range(len(declared))
        if counts[i] == 0
    )
    report = DataReport(
        rows=truncation.rows_in,
        rows_used=int(counts.sum()),
        truncation=truncation,
        missing=gone,
        outside=outside,
        outside_policy=query.outside,
        empty_categories=empty,
    )
    return Evaluation(counts, report)


def evaluate_grouped_count(
    query: GroupByCount, source: Any, table: Any, truncation: Truncation
) -> Evaluation:
    counts, gone, outside = cell_counts(query, source, table, query.by, query.keys)
    report = DataReport(
        rows=truncation.rows_in,
        rows_used=int(counts.sum()),
        truncation=truncation,
        missing=gone,
        outside=outside,
        outside_policy=query.outside,
        empty_categories=tuple(k for k, n in zip(query.declared_groups, counts, strict=False) if n == 0),
    )
    return Evaluation(counts, report)
