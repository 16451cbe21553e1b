"""Figures of a release's preview (Streamlit-free): the quantile dotplot of possible releases and one
possible release at a time, with the numbers each shows as a table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ui.charts import LAYOUT

__all__ = ["dotplot_table", "possible_release_figure", "quantile_dotplot_figure", "release_axis"]

TRUE_COLOUR, RELEASE_COLOUR = "#D55E00", "#0072B2"


def quantile_dotplot_figure(
    dots: np.ndarray,
    true_values: np.ndarray | None,
    labels: list[str],
    *,
    half_width: float | np.ndarray | None = None,
    title: str = "Possible releases (simulated: spends no budget)",
    centre: str | None = "true value (owner only)",
    x_title: str = "released value − true value (0: the true value, owner only)",
) -> go.Figure:
    """One strip per answer: its possible releases as equal-probability dots (stacked where they
    fall in the same bin, fixed dot size), the true value as a red tick (data owner only) and the
    ± half-width (one for all answers, or one per answer) as a band around it. ``centre`` names the tick;
    ``None`` draws no tick (an analyst's preview: the band is around 0 or a public reference, not the
    truth)."""
    n_rows, n_dots = dots.shape
    widths = None if half_width is None else np.broadcast_to(np.asarray(half_width, dtype=float), (n_rows,))
    figure = go.Figure()
    span = float(np.ptp(dots)) or 1.0
    width = span / 40.0
    for i in range(n_rows):
        bins = np.round((dots[i] - dots[i].min()) / width)
        stack = np.zeros(n_dots)
        for value in np.unique(bins):
            members = np.flatnonzero(bins == value)
            stack[members] = np.arange(members.size)
        figure.add_scatter(
            x=dots[i], y=i + 0.12 * stack - 0.3, mode="markers", showlegend=i == 0,
            name=f"possible release (each dot: 1 in {n_dots})",
            marker={"size": 9, "color": RELEASE_COLOUR, "line": {"width": 0}},
            hovertemplate=f"{labels[i]}: a 1-in-{n_dots} chance near %{{x:.4g}}<extra></extra>",
        )  # fmt: skip
        if true_values is not None:
            if centre is not None:
                figure.add_scatter(
                    x=[true_values[i]], y=[i - 0.05], mode="markers", showlegend=i == 0,
                    name=centre, marker={"symbol": "line-ns", "size": 26,
                    "line": {"width": 3, "color": TRUE_COLOUR}},
                    hovertemplate=f"{labels[i]}: {centre} %{{x:.4g}}<extra></extra>",
                )  # fmt: skip
            if widths is not None:
                figure.add_shape(
                    type="rect", x0=true_values[i] - widths[i], x1=true_values[i] + widths[i],
                    y0=i - 0.42, y1=i + 0.42, line={"width": 0}, fillcolor="rgba(0,114,178,0.08)",
                )  # fmt: skip
    figure.update_layout(
        **{**LAYOUT, "hovermode": "closest"},
        title=title,
        xaxis_title=x_title,
        yaxis={"tickmode": "array", "tickvals": list(range(n_rows)), "ticktext": labels,
               "range": [-0.6, n_rows - 0.2], "autorange": "reversed"},
        height=max(280, 70 * n_rows + 170),
    )  # fmt: skip
    return figure


def dotplot_table(
    dots: np.ndarray, labels: list[str], half_width: float | np.ndarray, *, offset_from: str = "true value"
) -> pd.DataFrame:
    """The dotplot's numbers: per answer, its ± and every dot (released value − ``offset_from``)."""
    widths = np.broadcast_to(np.asarray(half_width, dtype=float), (len(labels),))
    return pd.DataFrame(
        {
            "answer": labels,
            "± (band)": [f"{w:.4g}" for w in widths],
            f"possible releases − {offset_from} (each 1 in {dots.shape[1]})": [
                ", ".join(f"{v:.4g}" for v in np.sort(row)) for row in dots
            ],
        }
    )


def release_axis(draws: np.ndarray, true_values: np.ndarray | None) -> tuple[tuple[float, float], bool]:
    """One y range for every possible release (so frames compare), and whether it is zoomed in.

    The axis starts at 0 unless that would squash the noise into a sliver (all values far from 0
    compared with their spread, as for a count of 100 000 ± 15); then it is zoomed, and the bars are
    drawn from the true value, so each bar is the noise and ends on the release.
    """
    values = draws if true_values is None else np.concatenate([draws.ravel(), np.ravel(true_values)])
    low, high = float(np.min(values)), float(np.max(values))
    spread = high - low
    zoom = true_values is not None and (low > 0 or high < 0) and spread < 0.2 * max(abs(low), abs(high))
    if not zoom:
        low, high = min(low, 0.0), max(high, 0.0)
    pad = 0.08 * ((high - low) or 1.0)
    return (low - pad, high + pad), zoom


def possible_release_figure(
    draw: np.ndarray,
    true_values: np.ndarray | None,
    labels: list[str],
    *,
    y_range: tuple[float, float],
    zoomed: bool,
    title: str,
) -> go.Figure:
    """One possible (simulated) release as bars with the true values marked; on a zoomed axis each bar
    rises or falls from its true value to the release, so bar and mark read together."""
    draw = np.asarray(draw, dtype=float)
    base = np.asarray(true_values, dtype=float) if zoomed and true_values is not None else np.zeros(draw.size)
    figure = go.Figure()
    figure.add_bar(
        x=labels, y=draw - base, base=base, marker_color=RELEASE_COLOUR,
        name="possible release" + (" (bar: from the true value to the release)" if zoomed else ""),
        customdata=draw, hovertemplate="%{x}: possible release %{customdata:.6g}<extra></extra>",
    )  # fmt: skip
    if true_values is not None:
        figure.add_scatter(
            x=labels, y=true_values, mode="markers", name="true value (owner only)",
            marker={"symbol": "line-ew", "size": 30, "line": {"width": 3, "color": TRUE_COLOUR}},
            hovertemplate="%{x}: true value %{y:.6g}<extra></extra>",
        )  # fmt: skip
    figure.update_layout(
        **{**LAYOUT, "hovermode": "closest"},
        title=title,
        yaxis={"range": list(y_range), "title": "value"},
        xaxis={"title": "answer", "type": "category"},
    )
    return figure
