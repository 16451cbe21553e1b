"""Widgets that build a query spec (and its post-processing) from the active table's declared public facts.

Every widget's key names the query kind (and the column where it matters), so a setting made for one
query never carries over to another: changing the query shows that query's own defaults.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import streamlit as st

from dpdash import queries
from dpdash.datasets import PublicFacts
from dpdash.errors import DPDashError
from dpdash.facts import Bins, Bounds, GroupBounds
from dpdash.queries.histogram import numeric_bins
from dpdash.release import postprocessing_step
from ui.text import md

QUERY_KINDS = (
    "Count",
    "Count of people",
    "Count where column = value",
    "Sum",
    "Mean",
    "Variance",
    "Histogram",
    "Group-by count",
    "Group-by sum",
    "Group-by mean",
    "Contingency table",
    "Median / quantile",
    KEYS_KIND := "Counts per key (keys not public)",
)
SELECTION_KINDS = ("Median / quantile",)
#: What a rounding choice records (``dpdash.release.POSTPROCESSING``).
ROUNDING = ("no rounding", "to integers", "to decimal places", "to significant digits")
_NUMERIC_SUFFIX = " (numeric: public bins)"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _say_group_bounds(column: str, bounds: GroupBounds | None) -> None:
    """A caption when the column's declared per-group bounds, not c, set the sensitivity."""
    if bounds is not None:
        k, m = bounds.max_groups, bounds.max_rows_per_group
        rows = "1 row" if m == 1 else f"{m} rows"
        st.caption(
            f"Each person counts in at most {k} of {md(column)}'s categories with at most {rows} in each "
            f"(declared on the Data page, enforced on the id column): the sensitivity follows from "
            f"k·m = {k * m} rows per person across the groups (√k·m in ℓ2), not from the rows per person."
        )


def bins_controls(column: str, bounds: Bounds, key: str) -> Bins | None:
    """Public bin edges over a numeric column's declared bounds: a number of equal bins or a width.
    ``None`` after a message when the choice makes no valid bins."""
    how = st.radio(
        "Bins", ("number of equal bins", "bin width"), horizontal=True, key=f"{key}_how",
        help="Bin edges come from the declared bounds only (public), never from the data.",
    )  # fmt: skip
    try:
        if how == "number of equal bins":
            count = int(st.number_input("Number of bins", 1, 10_000, 10, key=f"{key}_count"))
            bins = numeric_bins(bounds, count=count)
        else:
            span = bounds.upper - bounds.lower
            default = float(f"{span / 10:.3g}") if math.isfinite(span) else 1.0  # U − L may overflow
            width = st.number_input(
                "Bin width", min_value=0.0, value=default, format="%g", key=f"{key}_width"
            )
            if width <= 0:
                st.warning("Give a bin width above 0.", icon=":material/info:")
                return None
            bins = numeric_bins(bounds, width=width)
    except DPDashError as error:
        st.warning(md(error), icon=":material/info:")
        return None
    shown = ", ".join(bins.labels[:6]) + (", …" if len(bins.labels) > 6 else "")
    st.caption(
        f"{len(bins.labels)} public bins over the declared bounds [{bounds.lower:g}, {bounds.upper:g}] of "
        f"{md(column)}: {md(shown)}. Values outside the bounds are counted apart, as (other)."
    )
    return bins


def key_controls(facts: PublicFacts, columns: Sequence[str], key: str) -> queries.KeyCounts | None:
    """Counts per key of a column whose keys are not declared: the column, and how many keys (k) and rows
    in each (m) a person may add (the Data page's declaration for the column when there is one)."""
    unit = facts.unit
    choices = [c for c in columns if c != unit.id_column]
    if not choices:
        st.warning("This table has no column to count keys of.", icon=":material/info:")
        return None
    column = st.selectbox("Key column", choices, key=f"{key}_column")
    st.caption(
        f"The keys of {md(column)} come from the data, so only keys that many people share may be "
        "published: each key's count gets geometric noise and is published only when it reaches a threshold "
        "τ (set by ε, δ, k and m). Keys below it are not published, and not even their existence is."
    )
    if unit.id_column is None:
        if unit.rows_per_person != 1:
            st.warning("Counting keys per person needs the person id column: declare it on the Data page "
                       "first.", icon=":material/info:")  # fmt: skip
            return None
        return queries.KeyCounts(column=column, facts=unit)
    declared = facts.bounds_for_groups(column) or GroupBounds(1, 1)
    left, right = st.columns(2)
    slug = f"{key}_{_slug(column)}"
    k = int(left.number_input("Keys per person (k)", 1, 1000, declared.max_groups, key=f"{slug}_k",
                              help="Each person counts in at most k keys (a uniform choice beyond k)."))
    m = int(right.number_input("Rows per key (m)", 1, 1000, declared.max_rows_per_group, key=f"{slug}_m",
                               help="At most m of a person's rows count in one key; 1 counts people."))
    return queries.KeyCounts(column=column, group_bounds=(k, m), facts=unit)


def query_controls(facts: PublicFacts, key: str, columns: Sequence[str] = ()) -> queries.Query | None:
    """Widgets for one query over declared columns; ``None`` (after a message) when the facts needed are
    not declared yet. Key counts are offered only with ``columns`` (the table's; the Planner gives none:
    it plans noise on public cells)."""
    numeric = sorted(facts.bounds)
    categorical = sorted(facts.categories)
    kinds = QUERY_KINDS if columns else tuple(k for k in QUERY_KINDS if k != KEYS_KIND)
    kind = st.selectbox("Query", kinds, key=f"{key}_kind")
    k = f"{key}_{_slug(kind)}"
    unit = facts.unit
    if kind == KEYS_KIND:
        return key_controls(facts, columns, k)
    needs_numeric = ("Sum", "Mean", "Variance", "Group-by sum", "Group-by mean", "Median / quantile")
    if kind in needs_numeric and not numeric:
        st.warning("Declare bounds for a numeric column on the Data page first.", icon=":material/info:")
        return None
    groupable = categorical + [c + _NUMERIC_SUFFIX for c in numeric]
    if kind in ("Count where column = value", "Contingency table") and not categorical:
        st.warning("Declare the categories of a column on the Data page first.", icon=":material/info:")
        return None
    if kind in ("Histogram", "Group-by count", "Group-by sum", "Group-by mean") and not groupable:
        st.warning(
            "Declare the categories of a column, or the bounds of a numeric one, on the Data page first.",
            icon=":material/info:",
        )
        return None
    if kind == "Count":
        return queries.Count(facts=unit)
    if kind == "Count of people":
        if unit.id_column is None:
            st.warning("Counting people needs the person id column: declare it on the Data page first.",
                       icon=":material/info:")  # fmt: skip
            return None
        st.caption(f"Distinct values of {md(unit.id_column)}: one person adds 1, whatever their rows.")
        return queries.CountPeople(facts=unit)
    if kind == "Count where column = value":
        column = st.selectbox("Column", categorical, key=f"{key}_where_column")
        value = st.selectbox("equals", facts.categories[column], key=f"{key}_where_value")
        return queries.Count(where=(queries.Where(column, "==", value),), facts=unit)
    if kind in ("Sum", "Mean", "Variance"):
        column = st.selectbox("Column", numeric, key=f"{k}_column")
        bounds = facts.bounds[column]
        st.caption(f"Values are clamped to the declared bounds [{bounds.lower:g}, {bounds.upper:g}].")
        cls = {"Sum": queries.Sum, "Mean": queries.Mean, "Variance": queries.Variance}[kind]
        return cls(column=column, bounds=bounds, facts=unit)
    if kind == "Median / quantile":
        column = st.selectbox("Column", numeric, key=f"{k}_column")
        level = st.slider("Quantile level q", 0.05, 0.95, 0.5, 0.05, key=f"{k}_level")
        bounds = facts.bounds[column]
        size = int(st.number_input("Public candidates (evenly spaced over the bounds)", 2, 10_000, 101,
                                   key=f"{k}_candidates"))  # fmt: skip
        return queries.Quantile.on_grid(column=column, bounds=bounds, size=size, quantiles=level, facts=unit)
    if kind == "Histogram":
        choice = st.selectbox("Column", groupable, key=f"{key}_column")
        if choice in categorical:
            per_group = facts.bounds_for_groups(choice)
            _say_group_bounds(choice, per_group)
            cells = facts.categories[choice]
            return queries.Histogram(column=choice, categories=cells, facts=unit, group_bounds=per_group)
        column = choice.removesuffix(_NUMERIC_SUFFIX)
        bins = bins_controls(column, facts.bounds[column], f"{k}_{_slug(column)}_bins")
        return None if bins is None else queries.Histogram(column=column, bins=bins, facts=unit)
    if kind in ("Group-by count", "Group-by sum", "Group-by mean"):
        choice = st.selectbox("Group by", groupable, key=f"{k}_by")
        if choice in categorical:
            per_group = facts.bounds_for_groups(choice)
            by, groups = choice, {"keys": facts.categories[choice], "group_bounds": per_group}
            _say_group_bounds(choice, per_group)
        else:
            by = choice.removesuffix(_NUMERIC_SUFFIX)
            bins = bins_controls(by, facts.bounds[by], f"{k}_{_slug(by)}_bins")
            if bins is None:
                return None
            groups = {"bins": bins}
        if kind == "Group-by count":
            return queries.GroupByCount(by=by, facts=unit, **groups)
        column = st.selectbox("Sum of" if kind == "Group-by sum" else "Mean of", numeric, key=f"{k}_column")
        cls = queries.GroupBySum if kind == "Group-by sum" else queries.GroupByMean
        return cls(by=by, column=column, bounds=facts.bounds[column], facts=unit, **groups)
    first = st.selectbox("Rows", categorical, key=f"{key}_rows")
    others = [c for c in categorical if c != first] or categorical
    second = st.selectbox("Columns", others, key=f"{key}_columns")
    return queries.ContingencyTable(
        columns=(first, second), categories=(facts.categories[first], facts.categories[second]), facts=unit
    )


def postprocess_controls(query: queries.Query, key: str) -> list[str]:
    """The post-processing the data owner chooses for ``query`` (free: it costs no privacy), as the
    step names ``dpdash.release.release(postprocess=...)`` records. Keyed per query."""
    if isinstance(query, queries.SelectionQuery | queries.SecondMoment | queries.KeyCounts):
        return []
    k = f"{key}_pp_{_slug(query.kind)}"
    steps: list[str] = []
    integer = query.integer_valued if hasattr(query, "integer_valued") else False
    bounds = getattr(query, "bounds", None)
    st.markdown("**Post-processing** (free: costs no privacy; recorded in the release)")
    non_negative = integer or (
        isinstance(query, queries.Sum | queries.GroupBySum) and bounds is not None and bounds.lower >= 0
    )
    if non_negative and st.checkbox("Clamp at 0 (no negative counts or sums)", key=f"{k}_clamp0"):
        steps.append("clamp_nonnegative")
    if isinstance(query, queries.Mean | queries.Variance | queries.GroupByMean):
        variance = isinstance(query, queries.Variance)
        label = "Clamp into [0, ((U − L)/2)²]" if variance else "Clamp into the bounds"
        if st.checkbox(label, key=f"{k}_clamp_bounds"):
            steps.append("clamp_to_bounds")
    rounding = st.selectbox("Round the released values", ROUNDING, key=f"{k}_rounding")
    if rounding == "to integers":
        steps.append("round")
    elif rounding == "to decimal places":
        places = int(st.number_input("Decimal places", -9, 12, 2, key=f"{k}_decimals"))
        steps.append(postprocessing_step("round_decimals", places))
    elif rounding == "to significant digits":
        digits = int(st.number_input("Significant digits", 1, 15, 3, key=f"{k}_significant"))
        steps.append(postprocessing_step("round_significant", digits))
    return steps
