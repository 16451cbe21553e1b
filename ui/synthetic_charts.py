"""Plotly figures of a synthetic table's preview quality (Streamlit-free). NOT PRIVATE: every figure here
is computed from the true table, for the data owner only."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from dpdash.synthetic import Quality
from ui.charts import LAYOUT

__all__ = ["association_heatmap", "tvd_figure", "tvd_table"]

#: Okabe–Ito blue (one-way) and vermillion (two-way).
TVD_COLOURS = {"one-way": "#0072B2", "two-way": "#D55E00"}


def tvd_table(q: Quality) -> pd.DataFrame:
    """One row per marginal: its kind, its columns and its total-variation distance."""
    rows = [("one-way", c, v) for c, v in q.one_way.items()]
    rows += [("two-way", f"{a} × {b}", v) for (a, b), v in q.two_way.items()]
    return pd.DataFrame(rows, columns=["Marginal", "Columns", "TVD"])


def tvd_figure(q: Quality) -> go.Figure:
    """The TVD of every one-way and measured two-way marginal, as bars (0: identical shares)."""
    table = tvd_table(q)
    figure = go.Figure()
    for kind, part in table.groupby("Marginal", sort=False):
        figure.add_bar(
            x=part["Columns"], y=part["TVD"], name=f"{kind} marginal", marker_color=TVD_COLOURS[str(kind)],
            hovertemplate="%{x}: TVD %{y:.4f}<extra></extra>",
        )  # fmt: skip
    figure.update_layout(
        **{**LAYOUT, "hovermode": "closest"},
        title="Total-variation distance, synthetic vs true (preview, NOT PRIVATE)",
        yaxis_title="TVD (0 = identical shares)", xaxis_title="marginal", height=380,
    )  # fmt: skip
    return figure


def association_heatmap(q: Quality) -> go.Figure:
    """Synthetic − true association (Pearson r of bin midpoints, or Cramér's V), per pair of columns."""
    diff = q.association_difference
    names = [str(c) for c in diff.columns]
    figure = go.Figure(
        go.Heatmap(
            z=diff.to_numpy(), x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu", reversescale=True,
            colorbar={"title": "synthetic − true"},
            hovertemplate="%{y} × %{x}: %{z:+.3f}<extra></extra>",
        )
    )  # fmt: skip
    figure.update_layout(
        **{**LAYOUT, "hovermode": "closest", "margin": {"l": 100, "r": 20, "t": 50, "b": 100}},
        title="Association, synthetic − true (preview, NOT PRIVATE)", height=420,
        yaxis={"autorange": "reversed"},
    )  # fmt: skip
    return figure
