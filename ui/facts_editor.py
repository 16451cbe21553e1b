"""Reading the Data page's facts grids: typed numbers, one clear message per bad row, nothing guessed.

The grids come back from ``st.data_editor`` as DataFrames whose cells may be numbers, NaN, None or (from
older sessions, pasted cells or other front ends) text such as ``"18"``; every form is read here the same
way, and every problem is reported by column, so the owner can fix all of them at once.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from dpdash.datasets import PublicFacts
from dpdash.errors import DPDashError
from dpdash.facts import Bounds, GroupBounds, categories_tuple


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


#: The categories grid's columns: the labels, and the optional per-group bounds k and m.
CATEGORY_COLUMNS = {
    "categories": st.column_config.TextColumn("categories", help="Comma-separated"),
    "k": st.column_config.NumberColumn(
        "k: most categories per person", min_value=1, step=1,
        help="Optional, with a person id column: a person has rows in at most k of these categories. "
        "A histogram or group-by of this column then has sensitivity k·m instead of c.",
    ),
    "m": st.column_config.NumberColumn(
        "m: most rows per category", min_value=1, step=1,
        help="Optional, with k: a person has at most m rows in each category (m = 1 counts people).",
    ),
}  # fmt: skip


def category_grid(facts: PublicFacts, columns: list[str]) -> pd.DataFrame:
    """One row per categorical column: its declared categories (comma-separated) and per-group bounds."""
    rows = []
    for column in columns:
        bounds = facts.group_bounds.get(column)
        rows.append({
            "column": column,
            "categories": ", ".join(map(str, facts.categories.get(column, ()))),
            "k": None if bounds is None else bounds.max_groups,
            "m": None if bounds is None else bounds.max_rows_per_group,
        })  # fmt: skip
    frame = pd.DataFrame(rows, columns=["column", "categories", "k", "m"])
    return frame.astype({"column": object, "categories": object, "k": float, "m": float})


def read_group_bounds(grid: pd.DataFrame) -> tuple[dict[str, GroupBounds], list[str]]:
    """(column → per-group bounds, problems) from the categories grid's k and m columns: both blank is
    none; one without the other, or a value that is not a whole number ≥ 1, is a problem."""
    bounds: dict[str, GroupBounds] = {}
    problems: list[str] = []
    for row in grid.to_dict("records"):
        column = str(row["column"])
        k, m = (row.get(name) for name in ("k", "m"))
        blank = [v is None or (isinstance(v, float) and math.isnan(v)) for v in (k, m)]
        if all(blank):
            continue
        if any(blank):
            problems.append(f"{column}: give both k (most categories per person) and m (most rows in each)")
            continue
        try:
            bounds[column] = GroupBounds(k, m)  # type: ignore[arg-type]
        except DPDashError as error:
            problems.append(f"{column}: {error}")
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
