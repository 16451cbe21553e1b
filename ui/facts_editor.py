"""Reading the Data page's facts grids: typed numbers, one clear message per bad row, nothing guessed.

The grids come back from ``st.data_editor`` as DataFrames whose cells may be numbers, NaN, None or (from
older sessions, pasted cells or other front ends) text such as ``"18"``; every form is read here the same
way, and every problem is reported by column, so the owner can fix all of them at once.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from dpdash.errors import DPDashError
from dpdash.facts import Bounds, categories_tuple


def _number(value: Any) -> float | None:
    """A typed bound: a number, ``None`` when blank; ``ValueError`` for anything else."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, (int, float)) or hasattr(value, "dtype"):
        number = float(value)
        return None if math.isnan(number) else number
    text = str(value).strip().replace("\u2212", "-").replace("_", "").replace(" ", "")
    if not text:
        return None
    return float(text)


def read_bounds(grid: pd.DataFrame) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """(column → (lower, upper), problems): rows with both bounds blank are skipped."""
    bounds: dict[str, tuple[float, float]] = {}
    problems: list[str] = []
    for row in grid.to_dict("records"):
        column = str(row["column"])
        values: dict[str, float | None] = {}
        bad = False
        for side in ("lower", "upper"):
            try:
                values[side] = _number(row.get(side))
            except (TypeError, ValueError, OverflowError):
                problems.append(f"{column}: the {side} bound {row.get(side)!r} is not a number")
                bad = True
        if bad:
            continue
        lower, upper = values["lower"], values["upper"]
        if lower is None and upper is None:
            continue
        if lower is None or upper is None:
            problems.append(f"{column}: give both a lower and an upper bound, or neither")
            continue
        try:
            Bounds(lower, upper)
        except DPDashError as error:
            problems.append(f"{column}: {error}")
            continue
        bounds[column] = (lower, upper)
    return bounds, problems


def read_categories(grid: pd.DataFrame) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """(column → categories, problems): comma-separated labels; blank rows are skipped."""
    categories: dict[str, tuple[str, ...]] = {}
    problems: list[str] = []
    for row in grid.to_dict("records"):
        column = str(row["column"])
        text = row.get("categories")
        if text is None or (isinstance(text, float) and math.isnan(text)):
            continue
        labels = [label.strip() for label in str(text).split(",") if label.strip()]
        if not labels:
            continue
        try:
            categories[column] = categories_tuple(labels, f"categories of {column!r}")
        except DPDashError as error:
            problems.append(f"{column}: {error}")
    return categories, problems
