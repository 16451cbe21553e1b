"""Comparing two evaluations of the same query: integers exactly, floats to 1e-9 relative."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from dpdash.engines import open_frame
from dpdash.engines.evaluate import evaluate_in_engine
from dpdash.queries import SecondMoment, Variance
from dpdash.queries.base import Evaluation, Query
from dpdash.queries.sums import _CentredSquares

REL = 1e-9


def close(a: float, b: float, scale: float) -> bool:
    """Equal to 1e-9 relative; a value that cancels to about 0 (a clipping bias of changes of both
    signs, a centred sum) is compared at 1e-9 of ``scale``, the size of the terms summed. NaN equals
    NaN and an infinity only itself."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=REL, abs_tol=REL * scale)


def same_array(a: Any, b: Any, scale: float, what: str) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} != {b.shape}"
    if a.dtype.kind == "O" or b.dtype.kind == "O":  # labels (a mode's best category)
        assert a.tolist() == b.tolist(), f"{what}: {a.tolist()} != {b.tolist()}"
        return
    if a.dtype.kind in "iub" or b.dtype.kind in "iub":
        # One exception: pandas' group sums come from np.bincount, which returns int64 zeros (not
        # float zeros) when no row has a weight; equal values, a different dtype.
        assert a.dtype.kind == b.dtype.kind or not (a.any() or b.any()), f"{what}: {a.dtype} != {b.dtype}"
        assert a.tolist() == b.tolist(), f"{what}: {a.tolist()} != {b.tolist()}"
        return
    bad = [
        (i, x, y)
        for i, (x, y) in enumerate(zip(a.tolist(), b.tolist(), strict=True))
        if not close(x, y, scale)
    ]
    assert not bad, f"{what}: differ at {bad[:5]}"


def same_evaluation(pandas: Evaluation, engine: Evaluation, scale: float) -> None:
    """The true answer, the pieces and every field of the owner's report agree."""
    same_array(pandas.values, engine.values, scale, "values")
    assert (pandas.pieces is None) == (engine.pieces is None)
    if pandas.pieces is not None:
        assert engine.pieces is not None and set(pandas.pieces) == set(engine.pieces)
        for name, piece in pandas.pieces.items():
            same_array(piece, engine.pieces[name], scale, f"piece {name}")
    assert pandas.keys == engine.keys, f"keys: {pandas.keys} != {engine.keys}"
    assert (pandas.utilities is None) == (engine.utilities is None)
    for i, (u, v) in enumerate(zip(pandas.utilities or (), engine.utilities or (), strict=True)):
        same_array(u, v, scale, f"utilities {i}")
    p, e = pandas.report.to_dict(), engine.report.to_dict()
    p_bias, e_bias = p.pop("clipping_bias"), e.pop("clipping_bias")
    assert p == e
    assert (p_bias is None) == (e_bias is None)
    if p_bias is not None:
        nan = float("nan")
        same_array(
            [nan if x is None else x for x in p_bias],
            [nan if x is None else x for x in e_bias],
            scale,
            "bias",
        )


def check(query: Query, df: pd.DataFrame, source: Any = None) -> None:
    """pandas and DuckDB agree on ``query`` over ``df``. Near-zero floats are compared at 1e-9 of the
    size of the terms summed: n·M, or n·M² for sums of squares and variances."""
    source = source if source is not None else open_frame(df)
    numbers = df.select_dtypes("number").abs().to_numpy(dtype=float)
    big = max(1.0, float(np.nanmax(np.where(np.isfinite(numbers), numbers, np.nan), initial=1.0)))
    squared = isinstance(query, _CentredSquares | Variance | SecondMoment)
    scale = len(df) * (big * big if squared else big)
    same_evaluation(query.evaluate(df), evaluate_in_engine(query, source), scale)
