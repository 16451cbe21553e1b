"""Widgets that build a query spec from the active table's declared public facts."""

from __future__ import annotations

import streamlit as st

from dpdash.datasets import PublicFacts
from dpdash.queries import (
    ContingencyTable,
    Count,
    GroupByCount,
    GroupBySum,
    Histogram,
    Mean,
    Quantile,
    Query,
    Sum,
    Where,
)

QUERY_KINDS = (
    "Count",
    "Count where column = value",
    "Sum",
    "Mean",
    "Histogram",
    "Group-by count",
    "Group-by sum",
    "Contingency table",
    "Median / quantile",
)
SELECTION_KINDS = ("Median / quantile",)


def query_controls(facts: PublicFacts, key: str) -> Query | None:
    """Widgets for one query over declared columns; ``None`` (after a message) when the facts needed
    are not declared yet."""
    numeric = sorted(facts.bounds)
    categorical = sorted(facts.categories)
    kind = st.selectbox("Query", QUERY_KINDS, key=f"{key}_kind")
    unit = facts.unit
    if kind in ("Sum", "Mean", "Group-by sum", "Median / quantile") and not numeric:
        st.warning("Declare bounds for a numeric column on the Data page first.", icon=":material/info:")
        return None
    if kind not in ("Count", "Sum", "Mean", "Median / quantile") and not categorical:
        st.warning("Declare the categories of a column on the Data page first.", icon=":material/info:")
        return None
    if kind == "Count":
        return Count(facts=unit)
    if kind == "Count where column = value":
        column = st.selectbox("Column", categorical, key=f"{key}_where_column")
        value = st.selectbox("equals", facts.categories[column], key=f"{key}_where_value")
        return Count(where=(Where(column, "==", value),), facts=unit)
    if kind in ("Sum", "Mean"):
        column = st.selectbox("Column", numeric, key=f"{key}_column")
        bounds = facts.bounds[column]
        st.caption(f"Values are clamped to the declared bounds [{bounds.lower:g}, {bounds.upper:g}].")
        cls = Sum if kind == "Sum" else Mean
        return cls(column=column, bounds=bounds, facts=unit)
    if kind == "Median / quantile":
        column = st.selectbox("Column", numeric, key=f"{key}_column")
        level = st.slider("Quantile level q", 0.05, 0.95, 0.5, 0.05, key=f"{key}_level")
        bounds = facts.bounds[column]
        size = int(st.number_input("Public candidates (evenly spaced over the bounds)", 2, 10_000, 101,
                                   key=f"{key}_candidates"))  # fmt: skip
        return Quantile.on_grid(column=column, bounds=bounds, size=size, quantiles=level, facts=unit)
    if kind == "Histogram":
        column = st.selectbox("Column", categorical, key=f"{key}_column")
        return Histogram(column=column, categories=facts.categories[column], facts=unit)
    if kind == "Group-by count":
        by = st.selectbox("Group by", categorical, key=f"{key}_by")
        return GroupByCount(by=by, keys=facts.categories[by], facts=unit)
    if kind == "Group-by sum":
        by = st.selectbox("Group by", categorical, key=f"{key}_by")
        column = st.selectbox("Sum of", numeric, key=f"{key}_column")
        return GroupBySum(by=by, keys=facts.categories[by], column=column, bounds=facts.bounds[column],
                          facts=unit)  # fmt: skip
    first = st.selectbox("Rows", categorical, key=f"{key}_rows")
    others = [c for c in categorical if c != first] or categorical
    second = st.selectbox("Columns", others, key=f"{key}_columns")
    return ContingencyTable(
        columns=(first, second), categories=(facts.categories[first], facts.categories[second]), facts=unit
    )
