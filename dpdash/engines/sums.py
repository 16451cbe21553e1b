"""Clamped sums compiled to Ibis: Sum, the centred pieces, Mean and Variance, and the group-by sums
and means. The pandas path's formulas, term by term: Σ clamp(x), Σ (clamp(x) − m), Σ (clamp(x) − m)²
over the non-missing values; the clipping bias Σ (clamped − raw) over the values clamping moved
(exactly 0 when none moved). A SUM over no rows is made 0 inside the engine (as numpy's)."""

from __future__ import annotations

from typing import Any

import ibis
import numpy as np

from dpdash.engines.cells import KEY, STATUS, fold, per_cell, with_cells
from dpdash.engines.columns import count_true, held_rows, missing, number, row_total, weighted
from dpdash.facts import WEIGHT, Bounds, Truncation
from dpdash.queries import GroupByMean, GroupBySum, Sum, Variance
from dpdash.queries.base import DataReport, Evaluation
from dpdash.queries.groupby import _GroupCentredSum, _GroupValidCount
from dpdash.queries.sums import _CentredSquares, _CentredSum

__all__ = ["evaluate_column", "evaluate_grouped_column"]


def _metrics(
    table: Any, column: str, bounds: Bounds, *, centred: bool, squares: bool, valid: bool = False
) -> dict[str, Any]:
    """The aggregates a clamped-sum query is made of: the sum and the report's counts always, the centred
    sum and the sum of squares (with its clipping shift) when asked. Missing values are excluded from every
    sum by its ``where``, so the clamp is a plain least/greatest (whatever they do with NULL). ``valid``:
    the table holds only rows whose value is present (filtered once rather than tested again in every
    aggregate: 1.7x faster on a 10^8-row file), and the count of all rows is the caller's."""
    raw = number(table[column])
    present = None if valid else ~missing(table[column])

    def where(condition: Any = None) -> Any:
        parts = [c for c in (present, condition) if c is not None]
        return parts[0] & parts[1] if len(parts) == 2 else parts[0] if parts else None

    clamped = ibis.greatest(bounds.lower, ibis.least(bounds.upper, raw))
    m = bounds.centre
    below, above = where(raw < bounds.lower), where(raw > bounds.upper)
    w = table[WEIGHT] if weighted(table) else None

    def times_w(value: Any) -> Any:  # each row's term, weighted under weighted bounding
        return value if w is None else value * w

    out = {
        "present": table.count() if present is None else count_true(present),
        "total": times_w(clamped).sum(where=where()),
        "below": count_true(below),
        "above": count_true(above),
        "shift_below": times_w(bounds.lower - raw).sum(where=below),
        "shift_above": times_w(bounds.upper - raw).sum(where=above),
    }
    if w is not None:
        out["present_w"] = row_total(table, present)
    if present is not None:
        out["rows"] = table.count()
    if centred or squares:
        out["centred"] = times_w(clamped - m).sum(where=where())
    if squares:
        out["squares"] = ((clamped - m) * (clamped - m)).sum(where=where())
        moved = where((raw < bounds.lower) | (raw > bounds.upper))
        out["square_shift"] = ((clamped - m) * (clamped - m) - (raw - m) * (raw - m)).sum(where=moved)
    return {k: v.fill_null(0) for k, v in out.items()}


def evaluate_column(query: Any, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    """Sum, _CentredSum, _CentredSquares, Mean or Variance: one aggregate over the rows whose value is
    present; the table (after truncation) has ``truncation.rows_kept`` rows, the others are missing."""
    bounds = query.bounds
    squares = isinstance(query, Variance | _CentredSquares)
    valid = table.filter(~missing(table[query.column]))
    centred = not isinstance(query, Sum)
    metrics = _metrics(valid, query.column, bounds, centred=centred, squares=squares, valid=True)
    if isinstance(query, Variance):
        raw = number(valid[query.column])
        metrics["var_raw"] = raw.var(how="pop", where=~raw.isinf())  # numpy's: NaN with an infinity
        metrics["infinite"] = count_true(raw.isinf()).fill_null(0)
        metrics["var_clamped"] = raw.clip(lower=bounds.lower, upper=bounds.upper).var(how="pop")
    row = source.execute(valid.aggregate(**metrics)).iloc[0].to_dict()
    row["rows"] = held_rows(table, truncation)
    n, below, above = int(row["present"]), int(row["below"]), int(row["above"])
    shift = float(row["shift_below"]) + float(row["shift_above"]) if below or above else 0.0
    if isinstance(query, Sum | _CentredSum | _CentredSquares):
        if isinstance(query, _CentredSquares):
            value, shift = float(row["squares"]), float(row["square_shift"]) if below or above else 0.0
        else:
            value = float(row["total"] if isinstance(query, Sum) else row["centred"])
        return Evaluation(np.array([value]), _report(query, truncation, row, shift))
    count = np.array([float(row["present_w"])]) if "present_w" in row else np.array([n], dtype=np.int64)
    pieces = {"sum": np.array([float(row["centred"])]), "count": count}
    if isinstance(query, Variance):
        pieces["squares"] = np.array([float(row["squares"])])
        var_raw = float("nan") if int(row["infinite"]) else float(row["var_raw"])
        bias = float(row["var_clamped"]) - var_raw if below or above else 0.0
    else:
        bias = shift / float(count[0]) if n else 0.0
    answer = np.array([float(query.combine(pieces)[0])])
    return Evaluation(answer, _report(query, truncation, row, bias), pieces=pieces)


def _report(query: Any, truncation: Truncation, row: Any, bias: float) -> DataReport:
    gone = int(row["rows"]) - int(row["present"])
    return DataReport(
        rows=truncation.rows_in,
        rows_used=int(row["present"]),
        truncation=truncation,
        missing=gone,
        clipped_below=int(row["below"]),
        clipped_above=int(row["above"]),
        clipping_bias=(bias,),
        notes=(f"missing values of {query.column!r} are dropped",) if gone else (),
    )


def evaluate_grouped_column(query: Any, source: Any, table: Any, truncation: Truncation) -> Evaluation:
    """GroupBySum, GroupByMean and their pieces: one GROUP BY (status, key) in the engine."""
    cells = with_cells(table, query.by, query.keys, query.bins)
    centred = not isinstance(query, GroupBySum | _GroupValidCount)
    metrics = _metrics(cells, query.column, query.bounds, centred=centred, squares=False)
    frame = source.execute(cells.group_by([STATUS, KEY]).aggregate(**metrics))
    folded = fold(frame, query.keys, query.bins, query.outside)
    k = len(query.groups)
    in_group = folded.cell >= 0
    counts = per_cell(folded, frame["present"], k)
    answers = per_cell(folded, frame["present_w"], k, float) if "present_w" in frame else counts
    moved = per_cell(folded, frame["below"] + frame["above"], k)
    shifts = per_cell(folded, frame["shift_below"] + frame["shift_above"], k, float)
    shifts = np.where(moved > 0, shifts, 0.0)  # exactly 0 in a group where nothing was clipped
    rows = frame["rows"].to_numpy(dtype=np.int64)
    present = frame["present"].to_numpy(dtype=np.int64)
    args: dict[str, Any] = {
        "rows": truncation.rows_in,
        "rows_used": int(counts.sum()),
        "truncation": truncation,
        "missing": int((rows - present)[in_group].sum() + rows[folded.missing].sum()),
        "clipped_below": int(frame["below"].to_numpy()[in_group].sum()),
        "clipped_above": int(frame["above"].to_numpy()[in_group].sum()),
        "outside": int(rows[folded.outside].sum()),
        "outside_policy": query.outside,
        "empty_categories": tuple(g for g, n in zip(query.declared_groups, counts, strict=False) if n == 0),
    }
    if isinstance(query, _GroupValidCount):
        return Evaluation(answers, DataReport(**args))
    column = "total" if isinstance(query, GroupBySum) else "centred"
    sums = per_cell(folded, frame[column], k, float)
    if isinstance(query, GroupBySum | _GroupCentredSum):
        return Evaluation(sums, DataReport(clipping_bias=tuple(float(b) for b in shifts), **args))
    assert isinstance(query, GroupByMean)
    pieces = {"sum": sums, "count": answers}
    bias = tuple(float(b) / max(float(n), 1.0) for b, n in zip(shifts, answers, strict=True))
    return Evaluation(query.combine(pieces), DataReport(clipping_bias=bias, **args), pieces=pieces)
