"""Counts compiled to Ibis: Count (with or without ``where``), the non-missing count piece, Histogram
(categories or bins), KeyCounts, GroupByCount and ContingencyTable. Each returns the pandas path's
``Evaluation``."""

from __future__ import annotations

from typing import Any

import ibis
import numpy as np

from dpdash.engines.cells import KEY, STATUS, fold, per_cell, with_cells
from dpdash.engines.columns import count_true, held_rows, missing, row_total, weighted, where_match
from dpdash.engines.truncation import _int
from dpdash.facts import Truncation
from dpdash.queries import ContingencyTable, Count, CountPeople, GroupByCount, Histogram, KeyCounts
from dpdash.queries.base import DataReport, Evaluation, cell_count_report
from dpdash.queries.count import people_evaluation
from dpdash.queries.keys import key_evaluation
from dpdash.queries.means import _ValidCount

__all__ = [
    "evaluate_count",
    "evaluate_grouped_count",
    "evaluate_histogram",
    "evaluate_keys",
    "evaluate_people",
    "evaluate_table",
    "evaluate_valid_count",
]


def evaluate_count(query: Count, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    if not query.where:
        rows = held_rows(table, truncation)
        report = DataReport(rows=truncation.rows_in, rows_used=rows, truncation=truncation)
        return Evaluation(np.array([truncation.rows_kept], dtype=np.int64), report)
    match = ibis.literal(True)
    gone = ibis.literal(False)
    for condition in query.where:
        match = match & where_match(table, condition)
        gone = gone | missing(table[condition.column])
    row = source.execute(
        table.aggregate(n=count_true(match), missing=count_true(gone), total=row_total(table, match))
    ).iloc[0]
    count = _int(row["n"])
    value = _answer(count, row["total"], table)
    report = DataReport(
        rows=truncation.rows_in,
        rows_used=count,
        truncation=truncation,
        missing=_int(row["missing"]),
        notes=("rows with a missing value in a filter column never match",),
    )
    return Evaluation(value, report)


def _answer(count: int, total: Any, table: Any) -> np.ndarray:
    """A count as the answer: the rows, or Σ w under weighted bounding (0 for a sum over no rows)."""
    if weighted(table):
        return np.array([0.0 if total is None or total != total else float(total)])
    return np.array([count], dtype=np.int64)


def evaluate_people(query: CountPeople, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    """The distinct ids, which truncation's report has already counted (one GROUP BY id)."""
    return people_evaluation(truncation)


def evaluate_valid_count(query: _ValidCount, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    present = ~missing(table[query.column])
    row = source.execute(
        table.aggregate(missing=count_true(~present), total=row_total(table, present))
    ).iloc[0]
    gone_n = _int(row["missing"])
    count = held_rows(table, truncation) - gone_n
    report = DataReport(rows=truncation.rows_in, rows_used=count, truncation=truncation, missing=gone_n)
    return Evaluation(_answer(count, row["total"], table), report)


_N = "__dpdash_n"


_W = "__dpdash_w"


def _distinct(table: Any, columns: list[str]) -> Any:
    """Each distinct combination of ``columns`` (missing values included) with its number of rows (and
    their total weight under weighted bounding)."""
    totals = {_N: table.count()}
    if weighted(table):
        totals[_W] = row_total(table)
    return table.group_by(columns).aggregate(**totals)


def cell_counts(
    source: Any, table: Any, column: str, categories: Any, bins: Any, outside: str, cells: int
) -> tuple[np.ndarray, int, int, np.ndarray]:
    """(rows per cell, missing, outside, the answer per cell) of ``column``: one query in the engine.
    The answer is the rows per cell, or their Σ w under weighted bounding. Categories are matched on the
    column's distinct values, counted first (a plain GROUP BY; the matching then runs once per distinct
    value, not once per row); bins are computed per row."""
    weights = weighted(table)
    if bins is None:
        marked = with_cells(_distinct(table, [column]), column, categories, None)
        totals = {"n": marked[_N].sum(), **({"w": marked[_W].sum()} if weights else {})}
    else:
        marked = with_cells(table, column, None, bins)
        totals = {"n": marked.count(), **({"w": row_total(marked)} if weights else {})}
    frame = source.execute(marked.group_by([STATUS, KEY]).aggregate(**totals))
    folded = fold(frame, categories, bins, outside)
    counts = per_cell(folded, frame["n"], cells)
    answer = per_cell(folded, frame["w"], cells, float) if weights else counts
    n = frame["n"].to_numpy(dtype=np.int64)
    return counts, int(n[folded.missing].sum()), int(n[folded.outside].sum()), answer


def _one_column_cells(
    query: Histogram | GroupByCount,
    source: Any,
    table: Any,
    truncation: Truncation,
    column: str,
    categories: Any,
    names: tuple[Any, ...],
) -> Evaluation:
    """Rows per cell of one column (a histogram's, a group-by count's), with the report of its ``names``."""
    counts, gone, outside, answer = cell_counts(
        source, table, column, categories, query.bins, query.outside, len(query.labels)
    )
    report = cell_count_report(truncation, counts, names, missing=gone, outside=outside, policy=query.outside)
    return Evaluation(answer, report)


def evaluate_histogram(query: Histogram, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    return _one_column_cells(
        query, source, table, truncation, query.column, query.categories, query.cell_names
    )


def evaluate_keys(query: KeyCounts, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    """Rows per key found (one GROUP BY the column); the keys stay with the data owner until selected."""
    frame = source.execute(_distinct(table, [query.column]))
    gone = frame[query.column].isna().to_numpy()
    n = frame[_N].to_numpy(dtype=np.int64)
    return key_evaluation(truncation, frame[query.column][~gone], n[~gone], int(n[gone].sum()))


def evaluate_grouped_count(
    query: GroupByCount, source: Any, table: Any, truncation: Truncation
) -> Evaluation:
    return _one_column_cells(query, source, table, truncation, query.by, query.keys, query.declared_groups)


def evaluate_table(query: ContingencyTable, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    """Counts per pair of cells: the distinct pairs of values counted, then grouped by both columns'
    (status, key)."""
    bins = query.bins or (None, None)
    cells = with_cells(
        _distinct(table, list(query.columns)), query.columns[0], query.categories[0], bins[0], "_0"
    )
    cells = with_cells(cells, query.columns[1], query.categories[1], bins[1], "_1")
    frame = source.execute(
        cells.group_by([STATUS + "_0", KEY + "_0", STATUS + "_1", KEY + "_1"]).aggregate(n=cells[_N].sum())
    )
    first = fold(frame, query.categories[0], bins[0], query.outside, "_0")
    second = fold(frame, query.categories[1], bins[1], query.outside, "_1")
    rows, cols = query.shape
    n = frame["n"].to_numpy(dtype=np.int64)
    ok = (first.cell >= 0) & (second.cell >= 0)
    counts = np.zeros(rows * cols, dtype=np.int64)
    np.add.at(counts, first.cell[ok] * cols + second.cell[ok], n[ok])
    gone = first.missing | second.missing
    if query.outside == "drop":
        outside = int(n[~gone & ~ok].sum())
    else:
        outside = int(n[first.outside].sum() + n[second.outside].sum())
    report = cell_count_report(
        truncation, counts, query.labels, missing=int(n[gone].sum()), outside=outside, policy=query.outside,
        notes=query.outside_notes,
    )  # fmt: skip
    return Evaluation(counts, report)
