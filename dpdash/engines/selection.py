"""Selection queries compiled to Ibis: the exact integer utilities of Mode (counts per candidate) and
of Quantile (rows below and above each candidate), and their owner reports."""

from __future__ import annotations

import math
from typing import Any

import ibis
import numpy as np

from dpdash.engines.columns import missing, number
from dpdash.engines.counts import cell_counts
from dpdash.facts import Truncation
from dpdash.queries import Mode, Quantile
from dpdash.queries.base import DataReport, Evaluation, cell_count_report

__all__ = ["evaluate_mode", "evaluate_quantile"]


def evaluate_mode(query: Mode, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    cats = query.categories
    counts, gone, outside, _ = cell_counts(source, table, query.column, cats, None, "drop", len(cats))
    report = cell_count_report(truncation, counts, cats, missing=gone, outside=outside, policy="drop")
    best = np.array([cats[int(np.argmax(counts))]], dtype=object)
    return Evaluation(best, report, utilities=(counts,))


def evaluate_quantile(query: Quantile, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    """L_r = #{x < r}, G_r = #{x > r} for every candidate r from one GROUP BY over the interval of the
    candidate grid each value falls in; the exact quantiles for the report by rank, in the engine."""
    grid = np.asarray(query.candidates)
    x = number(table[query.column])
    present = ~missing(table[query.column])
    values = table.filter(present).select(x=x)
    # slot s = #{candidates ≤ x}: s = 0 below the grid, K at or above its last candidate.
    slot = values.x.bucket(
        list(query.candidates), closed="left", close_extreme=False, include_under=True, include_over=True
    )
    marked = values.mutate(slot=slot.cast("int64"), equal=values.x.isin(list(query.candidates)))
    frame = source.execute(marked.group_by(["slot", "equal"]).aggregate(n=marked.count()))
    k = grid.size
    per_slot = np.zeros(k + 1, dtype=np.int64)
    equal = np.zeros(k, dtype=np.int64)
    for s, eq, n in zip(frame["slot"], frame["equal"], frame["n"], strict=True):
        per_slot[int(s)] += int(n)
        if eq:
            equal[int(s) - 1] += int(n)  # x equal to candidate s − 1
    n = int(per_slot.sum())
    below = np.cumsum(per_slot)[:k]
    above = n - below - equal
    utilities, best = query.scores(below, above)
    bias = [
        choice - _order_statistic(source, values, max(math.ceil(n * q) - 1, 0)) if n else math.nan
        for q, choice in zip(query.quantiles, best, strict=True)
    ]
    gone = truncation.rows_kept - n
    report = DataReport(
        rows=truncation.rows_in,
        rows_used=n,
        truncation=truncation,
        missing=gone,
        clipping_bias=tuple(bias),
        outside=int(per_slot[0] + per_slot[k] - equal[k - 1]),
        notes=(
            "clipping_bias: best candidate − exact empirical quantile (inverted CDF)",
            "values outside the candidate range keep their rank",
        ),
    )
    return Evaluation(np.array(best), report, utilities=tuple(utilities))


def _order_statistic(source: Any, values: Any, index: int) -> float:
    """The value of 0-based rank ``index`` among ``values`` (numpy's inverted-CDF quantile)."""
    ranked = values.mutate(rank=ibis.row_number().over(order_by=values.x))
    return float(source.execute(ranked.filter(ranked["rank"] == index).x.max()))
