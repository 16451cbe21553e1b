"""The second-moment matrix compiled to Ibis: Σ x′ᵢx′ⱼ over the complete rows, x′ = x·min(1, B/‖x‖₂),
with the pandas path's report (rows scaled down, and the bias Σ x′x′ᵀ − Σ xxᵀ over them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from dpdash.engines.columns import count_true, missing, number
from dpdash.facts import Truncation
from dpdash.queries import SecondMoment
from dpdash.queries.base import DataReport, Evaluation

__all__ = ["evaluate_moment"]


def evaluate_moment(query: SecondMoment, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    d, b = query.size, query.norm_bound
    complete = ~missing(table[query.columns[0]])
    for column in query.columns[1:]:
        complete = complete & ~missing(table[column])
    x = [number(table[c]) for c in query.columns]
    squares = x[0] * x[0]
    for xi in x[1:]:
        squares = squares + xi * xi
    norm = squares.sqrt()
    scaled = complete & (norm > b)
    factor = scaled.ifelse(b / norm, 1.0)
    # A row with m infinite entries: B·sign(xᵢ)/√m on each of them, 0 elsewhere (as the pandas path).
    infinite = [xi.isinf() for xi in x]
    m = infinite[0].ifelse(1.0, 0.0)
    for flag in infinite[1:]:
        m = m + flag.ifelse(1.0, 0.0)
    limit = b / m.sqrt()
    clipped = [
        (m > 0).ifelse(flag.ifelse(xi.sign() * limit, 0.0), xi * factor)
        for xi, flag in zip(x, infinite, strict=True)
    ]
    pairs = [(i, j) for i in range(d) for j in range(i, d)]
    metrics: dict[str, Any] = {
        "rows": table.count(),
        "complete": count_true(complete).fill_null(0),
        "scaled": count_true(scaled).fill_null(0),
    }
    for k, (i, j) in enumerate(pairs):
        metrics[f"v{k}"] = (clipped[i] * clipped[j]).sum(where=complete).fill_null(0.0)
        metrics[f"c{k}"] = (clipped[i] * clipped[j]).sum(where=scaled).fill_null(0.0)
        metrics[f"r{k}"] = (x[i] * x[j]).sum(where=scaled).fill_null(0.0)
    row = source.execute(table.aggregate(**metrics)).iloc[0]
    values = np.array([float(row[f"v{k}"]) for k in range(len(pairs))])
    moved = int(row["scaled"])
    bias = tuple(float(row[f"c{k}"]) - float(row[f"r{k}"]) if moved else 0.0 for k in range(len(pairs)))
    report = DataReport(
        rows=truncation.rows_in,
        rows_used=int(row["complete"]),
        truncation=truncation,
        missing=int(row["rows"]) - int(row["complete"]),
        clipped_above=moved,
        clipping_bias=bias,
        notes=("clipped_above counts rows scaled down to the norm bound",),
    )
    return Evaluation(values, report)
