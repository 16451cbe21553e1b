"""Plotly figure builders (Streamlit-free: they take data and return figures).

Colours are the Okabe–Ito palette, readable with the common colour-vision deficiencies, and each
mechanism keeps its colour on every chart (``MECHANISM_COLOURS``, the one table every chart that draws
mechanisms reads). The six mechanisms take six clearly different colours: Okabe–Ito's orange and sky blue
sit too close to its vermillion and blue, so black and a darkened yellow take their places.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpdash.audit import AuditResult
from dpdash.comparison import Candidate
from ui.numbers import all_of, delta_text

MECHANISM_COLOURS = {
    "Laplace": "#0072B2",
    "Gaussian (analytic)": "#D55E00",
    "Gaussian (classic)": "#CC79A7",
    "Geometric": "#009E73",
    "Discrete Gaussian": "#000000",
    "Staircase": "#C9B400",
}
#: A log axis with labelled ticks at powers of ten only (0.01, 0.1, 1, 10), no crowded minor labels.
LOG_AXIS = {"type": "log", "dtick": 1, "tickformat": "~g", "minor": {"showgrid": False}}
DASHES = {"Gaussian (classic)": "dash", "Staircase": "dot"}
#: The house layout. The legend sits at the very bottom of the figure (container coordinates), under the
#: x-axis title whatever the figure's height, so the two never overlap. No Plotly template: Streamlit's
#: theme styles every chart in the browser, and a named template (resolved, copied and validated for each
#: figure, then sent whole) was half a page's server time and about nine tenths of each small figure's JSON.
LAYOUT = {
    "margin": {"l": 60, "r": 20, "t": 50, "b": 120},
    "legend": {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0.01, "x": 0},
    "hovermode": "x unified",
}


def mark_x(figure: go.Figure, x: float, text: str, *, log: bool, line: dict[str, object]) -> None:
    """A vertical line at ``x`` with its label just right of it at the top. On a log axis Plotly places
    an annotation at 10^x (unlike the line), so its position is given as log10(x)."""
    figure.add_vline(x=x, line=line, layer="below")  # under the traces' text labels
    figure.add_annotation(
        x=math.log10(x) if log else x, xref="x", y=1, yref="paper", text=text, showarrow=False,
        xanchor="left", yanchor="bottom", xshift=3,
    )


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
        **LAYOUT,
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
    mark_x(figure, current_epsilon, "ε now", log=True, line={"color": "#444", "dash": "dot"})
    answers = all_of(k, "answer")
    figure.update_layout(
        **LAYOUT,
        title=f"Error you can expect: {confidence:.0%} of releases have {answers} within ±",
        xaxis={**LOG_AXIS, "title": "ε  (← more privacy · more accuracy →)"},
        yaxis={**LOG_AXIS, "title": "half-width ±a"},
    )
    return figure


#: Marks closer than this (in decades of ε) share one label; closer than ``_NEAR_DECADES`` their labels
#: alternate sides.
_SAME_DECADES, _NEAR_DECADES = 0.02, 0.6


def merge_marks(marks: list[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    """Marks (label, ε, posterior) sorted by ε, those at (nearly) the same ε merged into one whose label
    names them all ("release 1 · total (tightest)"; more than three: the first, "…", the last and
    how many), so no two labels print over each other."""
    groups: list[list[tuple[str, float, float]]] = []
    for mark in marks:  # labels keep their given order within a group
        same = [g for g in groups if abs(math.log10(mark[1]) - math.log10(g[0][1])) < _SAME_DECADES]
        if same:
            same[0].append(mark)
        else:
            groups.append([mark])
    merged = []
    for group in sorted(groups, key=lambda g: g[0][1]):
        labels = [label for label, _, _ in group]
        if len(labels) > 3:
            labels = [labels[0], "…", f"{labels[-1]} ({len(group)} marks)"]
        merged.append((" · ".join(labels), group[0][1], group[0][2]))
    return merged


def posterior_figure(
    *, prior: float, epsilons: np.ndarray, posteriors: np.ndarray, marks: list[tuple[str, float, float]]
) -> go.Figure:
    """The attacker's largest belief against ε (log axis), with labelled marks (label, ε, posterior)."""
    figure = go.Figure()
    figure.add_scatter(
        x=epsilons, y=posteriors, mode="lines", name="largest possible belief",
        line={"color": "#D55E00", "width": 3}, hovertemplate="ε = %{x:.3g}: at most %{y:.1%}",
    )  # fmt: skip
    figure.add_hline(y=prior, line={"color": "#0072B2", "dash": "dash"}, annotation_text=f"prior {prior:.0%}")
    previous = -math.inf
    above = True
    for label, epsilon, posterior in merge_marks(marks):
        near = math.log10(epsilon) - previous < _NEAR_DECADES
        above = not above if near else True  # neighbours alternate above-left and below-right
        previous = math.log10(epsilon)
        figure.add_scatter(
            x=[epsilon], y=[posterior], mode="markers+text", name=label, text=[label],
            textposition="top left" if above else "bottom right", marker={"size": 11, "color": "#000"},
            hovertemplate=f"{label}: ε = %{{x:.3g}}, belief at most %{{y:.1%}}<extra></extra>",
        )  # fmt: skip
    figure.update_layout(
        **{**LAYOUT, "hovermode": "closest", "margin": {"l": 60, "r": 20, "t": 50, "b": 60}},  # no legend
        title="How sure can an attacker become that a person is in the data?",
        xaxis={**LOG_AXIS, "title": "ε"},
        yaxis={"title": "attacker's belief", "tickformat": ".0%", "range": [0, 1.02]},
        showlegend=False,
    )
    return figure


def tradeoff_figure(*, fpr: np.ndarray, max_tpr: np.ndarray, epsilon: float, delta: float) -> go.Figure:
    """Best detection rate against false-positive rate; the region (ε, δ)-DP rules out shaded."""
    figure = go.Figure()
    figure.add_scatter(x=fpr, y=np.ones_like(fpr), mode="lines", line={"width": 0}, showlegend=False,
                       hoverinfo="skip")  # fmt: skip
    figure.add_scatter(
        x=fpr, y=max_tpr, mode="lines", fill="tonexty", fillcolor="rgba(213,94,0,0.18)",
        line={"color": "#D55E00", "width": 3}, name="best possible attacker",
        hovertemplate="at %{x:.1%} false positives the best attacker detects at most %{y:.1%}<extra></extra>",
    )  # fmt: skip
    figure.add_scatter(
        x=[0, 1], y=[0, 1], mode="lines", line={"color": "#888", "dash": "dot"}, name="random guessing",
        hoverinfo="skip",
    )  # fmt: skip
    figure.add_annotation(x=0.25, y=0.9, text="ruled out by DP", showarrow=False, font={"color": "#A34700"})
    figure.update_layout(
        **{**LAYOUT, "hovermode": "closest"},
        title=f"Membership tests under (ε = {epsilon:g}, δ = {delta_text(delta)})-DP",
        xaxis={"title": "false-positive rate", "tickformat": ".0%", "range": [0, 1]},
        yaxis={"title": "detection rate (true positives)", "tickformat": ".0%", "range": [0, 1]},
    )
    return figure


def icon_array_figure(*, before: int, after: int) -> go.Figure:
    """100 people in a 10×10 grid, fixed dot size: ``before`` found without the release, up to
    ``after`` with it."""
    index = np.arange(100)
    x, y = index % 10, 9 - index // 10
    groups = [
        ("right without the release", index < before, "#0072B2"),
        ("at most this many more with it", (index >= before) & (index < after), "#D55E00"),
        ("others", index >= after, "#D9D9D9"),
    ]
    figure = go.Figure()
    for name, mask, colour in groups:
        figure.add_scatter(
            x=x[mask], y=y[mask], mode="markers", name=name, hoverinfo="skip",
            marker={"size": 22, "color": colour, "symbol": "circle"},
        )  # fmt: skip
    figure.update_layout(
        **{**LAYOUT, "hovermode": False, "margin": {"l": 10, "r": 10, "t": 10, "b": 60}},
        xaxis={"visible": False, "range": [-0.7, 9.7]},
        yaxis={"visible": False, "range": [-0.7, 9.7], "scaleanchor": "x"},
        height=380,
    )
    return figure


def reference_figure(points: list[tuple[str, float]], current_epsilon: float) -> go.Figure:
    """Reference ε values on one log axis, with the current ε."""
    figure = go.Figure()
    for i, (label, epsilon) in enumerate(points):
        figure.add_scatter(
            x=[epsilon], y=[i], mode="markers+text", text=[f"{label} (ε = {epsilon:.3g})"],
            textposition="middle right" if epsilon < 3 else "middle left",
            marker={"size": 12, "color": "#0072B2"}, showlegend=False,
            hoverinfo="skip",
        )  # fmt: skip
    mark_x(figure, current_epsilon, "your ε", log=True, line={"color": "#D55E00", "width": 3})
    figure.update_layout(
        **{**LAYOUT, "hovermode": False, "margin": {"l": 10, "r": 10, "t": 30, "b": 50}},
        xaxis={**LOG_AXIS, "title": "ε", "range": [-2.2, 2.0]},
        yaxis={"visible": False, "range": [-0.7, len(points) - 0.3]},
        height=70 + 45 * len(points),
    )
    return figure


AUDIT_COLOURS = {"first": "#0072B2", "second": "#D55E00", "event": "rgba(0,158,115,0.18)"}
#: Most bars an exact-value audit histogram draws (the central values; the tails are summarised).
_AUDIT_MAX_VALUES = 120
_AUDIT_BINS = 80


def audit_histograms(result: AuditResult) -> go.Figure:
    """The audit's two output distributions overlaid (share of trials per bin or per value), with the
    distinguishing event shaded: intervals of the statistic, or the exact values it contains."""
    first, second = np.asarray(result.first, dtype=float), np.asarray(result.second, dtype=float)
    pooled = np.concatenate([first, second])
    binning = result.event.binning
    low, high = (float(v) for v in np.quantile(pooled, [0.0005, 0.9995]))
    figure = go.Figure()
    exact = binning.values is not None
    if exact:
        values = np.unique(pooled)
        central = values[(values >= low) & (values <= high)]
        values = central if central.size >= 2 else values  # the rarest tails are invisible as bars
        if values.size > _AUDIT_MAX_VALUES:  # still too many: keep the central ones
            middle = int(np.searchsorted(values, np.median(pooled)))
            start = max(0, min(middle - _AUDIT_MAX_VALUES // 2, values.size - _AUDIT_MAX_VALUES))
            values = values[start : start + _AUDIT_MAX_VALUES]
        x = values
        gap = float(np.min(np.diff(values))) if values.size > 1 else 1.0
        width = 0.8 * gap
        shares = [_value_shares(side, values) for side in (first, second)]
        inside = result.event.contains(values)
        spans = _runs(values, inside, gap / 2.0)
    else:
        edges = np.linspace(low, high, _AUDIT_BINS + 1) if high > low else np.array([low - 0.5, low + 0.5])
        x = (edges[:-1] + edges[1:]) / 2.0
        width = float(edges[1] - edges[0])
        shares = [np.histogram(side, bins=edges)[0] / max(side.size, 1) for side in (first, second)]
        inside = None
        intervals = binning.intervals(result.event.selected)
        clipped = [(max(lo, edges[0]), min(hi, edges[-1])) for lo, hi in intervals]
        spans = [(lo, hi) for lo, hi in clipped if hi > lo]
    for lo, hi in spans:
        figure.add_vrect(x0=lo, x1=hi, fillcolor=AUDIT_COLOURS["event"], line_width=0, layer="below")
    unit = "value" if exact else "bin"
    for name, share, colour in (("first input", shares[0], AUDIT_COLOURS["first"]),
                                ("second input", shares[1], AUDIT_COLOURS["second"])):  # fmt: skip
        figure.add_bar(
            x=x, y=share, width=width, name=name, opacity=0.6,
            marker={"color": colour,
                    "line": {"color": "#000", "width": np.where(inside, 1.5, 0.0)} if inside is not None
                    else {"width": 0}},
            hovertemplate=f"{name}: %{{y:.2%}} of trials in this {unit} (%{{x:.6g}})<extra></extra>",
        )  # fmt: skip
    figure.add_scatter(
        x=[None], y=[None], mode="markers", name=f"chosen event: {result.event.describe()}",
        marker={"symbol": "square", "size": 14, "color": AUDIT_COLOURS["event"],
                "line": {"color": "#009E73", "width": 1}},
    )  # fmt: skip
    figure.update_layout(
        **{**LAYOUT, "hovermode": "closest"},
        barmode="overlay",
        title=f"Where the outputs fall: {result.trials:,} trials on each input".replace(",", " "),
        separators=". ",
        xaxis={"title": result.target.statistic}
        | ({"tickmode": "array", "tickvals": list(x)} if exact and len(x) <= 25 else {}),
        yaxis={"title": "share of trials", "tickformat": ".1%", "rangemode": "tozero"},
    )
    return figure


def _value_shares(samples: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The share of ``samples`` equal to each of the sorted ``values``."""
    ordered = np.sort(samples)
    counts = np.searchsorted(ordered, values, side="right") - np.searchsorted(ordered, values, side="left")
    return counts / max(samples.size, 1)


def _runs(values: np.ndarray, inside: np.ndarray, half: float) -> list[tuple[float, float]]:
    """Contiguous runs of selected values, as intervals padded by ``half`` on each side."""
    spans: list[tuple[float, float]] = []
    start = None
    for i, selected in enumerate(inside):
        if selected and start is None:
            start = i
        if start is not None and (not selected or i == inside.size - 1):
            stop = i if selected else i - 1
            spans.append((float(values[start]) - half, float(values[stop]) + half))
            start = None
    return spans


def audit_progress(history: list[tuple[int, float]], claimed: float) -> go.Figure:
    """The ε lower bound against the number of trials drawn so far, with the claimed ε as a line."""
    trials = [t for t, _ in history]
    bounds = [b for _, b in history]
    figure = go.Figure()
    figure.add_scatter(
        x=trials, y=bounds, mode="lines+markers", name="ε lower bound", line={"color": "#0072B2", "width": 2},
        hovertemplate="after %{x:,} trials per side: ε ≥ %{y:.4g}<extra></extra>",
    )  # fmt: skip
    figure.add_hline(
        y=claimed, line={"color": "#000", "dash": "dash"}, annotation_text=f"claimed ε = {claimed:g}"
    )
    top = max([claimed, *bounds]) * 1.15
    figure.update_layout(
        **{**LAYOUT, "hovermode": "closest", "margin": {"l": 60, "r": 20, "t": 50, "b": 50}},
        title="The bound as the evidence accumulates",
        separators=". ",
        xaxis={"title": "trials per side", "rangemode": "tozero", "tickformat": ",d"},
        yaxis={"title": "ε lower bound", "range": [0, top]},
        showlegend=False,
        height=300,
    )
    return figure
