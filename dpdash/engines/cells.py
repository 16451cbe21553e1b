"""Which declared cell (category, bin or group) each row falls in, computed inside the engine.

Rows are grouped by (status, key): status 0 inside a declared cell (key: the category value or the
bin's index), 1 outside every declared cell, 2 missing. The engine returns one small row per group
(at most K + 2), folded here into per-cell arrays with the same rules as ``cell_codes`` in pandas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ibis
import numpy as np
import pandas as pd

from dpdash.engines.columns import comparable, missing, number
from dpdash.facts import Bins

__all__ = ["KEY", "STATUS", "Folded", "fold", "per_cell", "with_cells"]

STATUS = "__dpdash_status"
KEY = "__dpdash_key"
_INSIDE, _OUTSIDE, _MISSING = 0, 1, 2


def with_cells(
    table: Any, column: str, categories: tuple[Any, ...] | None, bins: Bins | None, tag: str = ""
) -> Any:
    """``table`` with the STATUS and KEY columns of ``column`` (their names end with ``tag``); with neither
    categories nor bins, every value present is a cell (the keys of ``KeyCounts``)."""
    col = table[column]
    gone = missing(col)
    if bins is not None:
        code = number(col).bucket(list(bins.edges), closed="left", close_extreme=True)
        inside = code.notnull()
        key = inside.ifelse(code.cast("int64"), ibis.null("int64"))
    elif categories is None:  # keys that are not public: every present value is its own cell
        inside = ~gone
        key = col
    else:
        dtype = col.type()
        values = [v for v in (comparable(dtype, c) for c in categories) if v is not None]
        inside = col.isin(values).fill_null(False) if values else ibis.literal(False)
        key = inside.ifelse(col, ibis.null(dtype))
    status = gone.ifelse(_MISSING, inside.ifelse(_INSIDE, _OUTSIDE))
    key = (~gone & inside).ifelse(key, ibis.null(key.type()))
    return table.mutate(**{STATUS + tag: status.cast("int8"), KEY + tag: key})


@dataclass(frozen=True, slots=True)
class Folded:
    """Per group of the engine's answer: its cell index (−1: none), and the totals of the report."""

    cell: np.ndarray  # one per row of the engine's answer
    missing: np.ndarray  # bool: that group is the missing values'
    outside: np.ndarray  # bool: that group is the values outside the declared cells


def fold(
    frame: pd.DataFrame, categories: tuple[Any, ...] | None, bins: Bins | None, outside: str, tag: str = ""
) -> Folded:
    """Map each (status, key) row of the engine's answer to a cell: the category's (bin's) index,
    ``len(declared)`` for values outside when ``outside="other"``, −1 otherwise."""
    declared = len(bins.edges) - 1 if bins is not None else len(categories or ())
    lookup = {c: i for i, c in enumerate(categories or ())}
    status = frame[STATUS + tag].to_numpy(dtype=np.int64)
    cells = np.full(len(frame), -1, dtype=np.int64)
    for i, (s, key) in enumerate(zip(status, frame[KEY + tag].to_numpy(dtype=object), strict=True)):
        if s == _INSIDE:
            value = key.item() if isinstance(key, np.generic) else key
            cells[i] = int(value) if bins is not None else lookup[value]
        elif s == _OUTSIDE and outside == "other":
            cells[i] = declared
    return Folded(cells, status == _MISSING, status == _OUTSIDE)


def per_cell(folded: Folded, values: pd.Series | np.ndarray, cells: int, dtype: Any = np.int64) -> np.ndarray:
    """Add ``values`` (one per group of the engine's answer) into their cells."""
    out = np.zeros(cells, dtype=dtype)
    v = np.asarray(values, dtype=dtype)
    ok = folded.cell >= 0
    np.add.at(out, folded.cell[ok], v[ok])
    return out
