"""Plotly figure builders (Streamlit-free: they take data and return figures).

Colours are the Okabe–Ito palette, readable with the common colour-vision deficiencies, and each
mechanism keeps its colour on every chart.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpdash.comparison import Candidate

MECHANISM_COLOURS = {
    "Laplace": "#0072B2",
    "Gaussian (analytic)": "#D55E00",
    "Gaussian (classic)": "#CC79A7",
    "Geometric": "#009E73",
    "Discrete Gaussian": "#E69F00",
    "Staircase": "#56B4E9",
}
DASHES = {"Gaussian (classic)": "dash", "Staircase": "dot"}
_LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 60, "r": 20, "t": 50, "b": 110},
    "legend": {"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0},
    "hovermode": "x unified",
}


def noise_figure(candidates: list[Candidate], *, coverage: float = 0.995) -> go.Figure:
    """Densities (continuous noise, lines) and pmfs (integer noise, markers) on one axis, over the
    range that holds ``coverage`` of the widest mechanism's noise."""
    available = [c for c in candidates if c.mechanism is not None]
    reach = max(c.mechanism.accuracy(coverage) for c in available)
    figure = go.Figure()
    for candidate in available:
        m = candidate.mechanism
        colour = MECHANISM_COLOURS[candidate.label]
        if m.integer_valued and reach <= 400:
            x = np.arange(-int(np.ceil(reach)), int(np.ceil(reach)) + 1)
            y = m.noise.pmf(x)
            figure.add_scatter(
                x=x, y=y, mode="markers+lines", name=f"{candidate.label} (pmf)",
                line={"color": colour, "width": 1, "shape": "hvh"}, marker={"color": colour, "size": 5},
                hovertemplate="%{y:.4f}",
            )  # fmt: skip
        else:
            x = np.linspace(-reach, reach, 801)
            if m.integer_valued:  # many integers: draw the pmf as a line through its values
                x = np.unique(np.round(x))
                y = m.noise.pmf(x)
            else:
                y = m.noise.pdf(x)
            figure.add_scatter(
                x=x, y=y, mode="lines", name=candidate.label,
                line={"color": colour, "width": 2, "dash": DASHES.get(candidate.label, "solid")},
                hovertemplate="%{y:.4f}",
            )  # fmt: skip
    figure.update_layout(
        **_LAYOUT,
        title="Noise added to one answer",
        xaxis_title="noise (answer − true value)",
        yaxis_title="density / probability",
    )
    return figure


def accuracy_curve_figure(
    curves: pd.DataFrame, *, current_epsilon: float, confidence: float, k: int
) -> go.Figure:
    """Exact half-width against ε on log–log axes, one line per mechanism, the current ε marked."""
    figure = go.Figure()
    for label, group in curves.groupby("mechanism", sort=False):
        # An integer mechanism reaches ±0 (exact answers) at large ε; a log axis cannot draw 0.
        half_width = group["half_width"].where(group["half_width"] > 0)
        figure.add_scatter(
            x=group["epsilon"], y=half_width, mode="lines", name=label,
            line={"color": MECHANISM_COLOURS[label], "width": 2, "dash": DASHES.get(label, "solid")},
            hovertemplate="ε = %{x:.3g}: ±%{y:.3g}",
        )  # fmt: skip
    figure.add_vline(x=current_epsilon, line={"color": "#444", "dash": "dot"}, annotation_text="ε now")
    answers = "one answer" if k == 1 else f"all {k} answers"
    figure.update_layout(
        **_LAYOUT,
        title=f"Error you can expect: {confidence:.0%} of releases have {answers} within ±",
        xaxis={"type": "log", "title": "ε  (← more privacy · more accuracy →)"},
        yaxis={"type": "log", "title": "half-width ±a"},
    )
    return figure
