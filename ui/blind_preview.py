"""An analyst's preview of a release (Query & release page): the accuracy the release would have, from its
calibration alone, with no true value anywhere.

Nothing here reads the table's values: the pieces come from ``dpdash.release.calibrate`` (which reads only
column types), and every figure is the noise, around 0 or around a public reference value the analyst
types (last year's published figure, say). No true value is marked, no rows are shown and no clipping or
missing-value figures are given: those are the owner's, who sees them before approving a request.

- One noisy answer per value: the ± is exact whatever the truth (the noise does not depend on it); with
  post-processing (rounding, clamping) it is simulated around the reference, and says so.
- A mean or a variance (noisy pieces combined): the exact ± of each piece; the combined ± depends on the
  count, so the owner sees it at the true pieces and the release states it at its released pieces.
- A quantile or a mode: the guarantee in rows (how far the pick's rank lands from the quantile's, or its
  count from the largest), which holds for any table; the ± a release states, in the column's units,
  comes from the chances of each candidate, which depend on the data.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from dpdash import preview
from dpdash.errors import DPDashError
from ui.chart_view import show_chart
from ui.numbers import percent
from ui.possible_releases import possible_releases
from ui.preview_charts import dotplot_table, quantile_dotplot_figure
from ui.release_choice import ReleaseChoice
from ui.text import md

__all__ = ["analyst_numeric_preview", "analyst_selection_preview"]

#: At most this many values are drawn (as the owner's preview does).
SHOWN = 40
NO_TRUTH = (
    "No true value is used or shown: the dots are the noise around the reference (0: the noise alone). "
    "The owner sees the preview with the true values before approving a request."
)


def _fmt(x: float) -> str:
    return "∞" if not np.isfinite(x) else f"{x:.4g}"


def analyst_numeric_preview(
    choice: ReleaseChoice, pieces: list[Any], *, labels: list[str], mechanism_label: str, key: str
) -> None:
    """The ± of a numeric query's release from its calibrated ``pieces``, around a public reference."""
    query, confidence, steps = choice.query, choice.confidence, choice.steps
    if len(pieces) != 1 or pieces[0].name != "answer":
        _pieces_preview(pieces, confidence=confidence, key=key)
        return
    reference = st.number_input(
        "Public reference value (optional: a published figure you expect; 0 shows the noise alone)",
        value=0.0, format="%g", key=f"{key}_reference",
        help="Typed by you, never read from the table: the dots are drawn around it.",
    )  # fmt: skip
    centre = np.full(len(labels), float(reference))
    try:
        with st.spinner("Simulating possible releases…"):
            accuracy = preview.preview_accuracy(query, pieces, centre, confidence=confidence,
                                                postprocess=steps)  # fmt: skip
    except DPDashError as error:
        st.warning(f"No preview for these settings: {md(error)}", icon=":material/warning:")
        return
    each = accuracy.half_widths
    columns = st.columns(3)
    if np.allclose(each, each[0], rtol=1e-9, atol=0):
        columns[0].metric(f"± each value ({confidence:.0%})", _fmt(float(each[0])))
    else:
        columns[0].metric(f"± each value, largest ({confidence:.0%})", _fmt(float(each.max())))
    if len(labels) > 1:
        columns[1].metric(f"± all {len(labels)} at once", _fmt(accuracy.joint_half_width))
    if reference:
        relative = float(np.median(accuracy.relative_errors()))
        columns[2].metric("relative error at the reference", percent(relative))
    around = "0 (the noise alone)" if not reference else f"your reference {reference:g}"
    simulated = (
        " Post-processing is simulated around the reference: how much it changes the ± depends on the true "
        "values (a clamp at 0 matters only near 0)."
        if steps
        else ""
    )
    st.caption(f"**± definition ({accuracy.method}).** {md(accuracy.definition)}. Mechanism: "
               f"{md(mechanism_label)}.{simulated} {NO_TRUTH}")  # fmt: skip
    order = np.arange(min(len(labels), SHOWN))
    shown = [labels[i] for i in order]
    offsets = accuracy.dots[order] - centre[order][:, None]
    title = f"Possible releases around {around} (simulated: spends no budget)"
    show_chart(
        quantile_dotplot_figure(offsets, np.zeros(order.size), shown, half_width=each[order], title=title,
                                centre=None, x_title="released value − the reference (the noise)"),
        key=f"{key}_dotplot", table=dotplot_table(offsets, shown, each[order], offset_from="the reference"),
        summary=f"Each dot is one of {offsets.shape[1]} equally likely amounts of noise; the band is the ±.",
    )  # fmt: skip
    possible_releases(accuracy.possible_releases(30)[:, order], None, shown, key=key)


def _pieces_preview(pieces: list[Any], *, confidence: float, key: str) -> None:
    """A mean's (or a variance's) noisy pieces: each piece's exact ± and its noise as dots around 0."""
    st.markdown("This answer is computed from noisy pieces; each piece's noise is exact:")
    columns = st.columns(len(pieces))
    for column, piece in zip(columns, pieces, strict=True):
        half = piece.mechanism.release_accuracy(confidence, piece.query.dimension)
        column.metric(f"± {piece.name} ({confidence:.0%})", _fmt(half))
    dots = np.vstack([preview.quantile_dots(p.mechanism, np.zeros(1))[:1] for p in pieces])
    names = [str(p.name) for p in pieces]
    widths = np.array([p.mechanism.release_accuracy(confidence, 1) for p in pieces])
    show_chart(
        quantile_dotplot_figure(dots, np.zeros(len(pieces)), names, half_width=widths, centre=None,
                                title="The noise of each piece (simulated: spends no budget)",
                                x_title="noise added to the piece"),
        key=f"{key}_pieces_dotplot",
        table=dotplot_table(dots, names, widths, offset_from="the piece's value"),
    )  # fmt: skip
    st.caption(
        "The ± of the combined answer depends on the count: the owner sees it at the true values, and the "
        f"release states it at its released pieces. {NO_TRUTH}"
    )


def analyst_selection_preview(
    choice: ReleaseChoice, selectors: list[Any], *, labels: list[str], mechanism_label: str
) -> None:
    """A quantile's (or mode's) guarantee in what its utility counts, rows (of rank for a quantile, of
    count for a mode), which holds whatever the table."""
    query: Any = choice.query
    candidates, confidence = len(query.candidates), choice.confidence
    quantile = query.kind == "quantile"
    for label, selector, per_row in zip(labels, selectors, query.utility_per_row, strict=True):
        rows = selector.utility_gap(confidence, candidates) / per_row
        what = "rank off by at most" if quantile else "count below the largest by at most"
        st.metric(f"{label}: {what} ({confidence:.0%})", f"{_fmt(rows)} rows")
    within = (
        "whose rank is at most that many rows from the quantile's rank q·n (the rows below it, out of n)"
        if quantile
        else "whose count is at most that many rows below the largest count"
    )
    st.caption(
        f"With {confidence:.0%} probability the {md(mechanism_label.lower())} picks one of the "
        f"{candidates} public candidates {within}. Which candidate that is depends on the data: the "
        "chance of each, and the ± in the column's units that the release states, are the owner's to see. "
        f"{NO_TRUTH}"
    )
