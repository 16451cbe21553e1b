"""Figures of the Budget page (Streamlit-free): the gauge of what is spent and the step chart of the
total ε after each release.

Only the dataset's own accountant (the one every spend is checked against) spends budget. The other
accountants add up the same releases differently; each total is a valid guarantee, and a larger one is a
looser bound, not budget spent. The step chart draws the accountant in force solid and the others
dotted and pale, and says so in its legend.
"""

from __future__ import annotations

import itertools
import math

import pandas as pd
import plotly.graph_objects as go

from ui.charts import LAYOUT
from ui.numbers import delta_text

__all__ = [
    "ACCOUNTANT_COLOURS", "accountant_role", "budget_gauge", "count_axis", "cumulative_budget_figure",
    "cumulative_table",
]

ACCOUNTANT_COLOURS = {
    "basic": "#999999", "advanced": "#CC79A7", "optimal": "#E69F00", "zcdp": "#56B4E9",
    "rdp": "#009E73", "pld": "#0072B2", "tightest": "#D55E00",
}  # fmt: skip
#: Tick steps for a count axis: 1, 2, 5, 10, 20, 50, … so there are at most this many steps.
MAX_TICK_STEPS = 10
_LEGEND_TITLE = "Solid: budget spent. Dotted: other valid bounds on the same releases (not spent).<br>"


def accountant_role(name: str, total: float | None, keeper: str, kept_total: float | None) -> str:
    """What one accountant's total means beside the one in force (``keeper``, whose total is
    ``kept_total``).

    >>> accountant_role("zcdp", 2.419, "tightest", 0.5)
    'another valid bound, looser: not budget spent'
    """
    if name == keeper:
        return "in force: every spend is checked against it"
    if total is None:
        return "cannot account for one of these releases"
    if kept_total is None or math.isclose(total, kept_total, rel_tol=1e-9, abs_tol=1e-12):
        return "another valid bound, the same total"
    if total > kept_total:
        return "another valid bound, looser: not budget spent"
    return f"another valid bound, tighter, but spends are checked against {keeper}"


def count_axis(n: int, title: str) -> dict[str, object]:
    """An x axis for counts 0…n: whole-number ticks only (no "0 0 1 1"), at most ``MAX_TICK_STEPS``
    steps of 1, 2, 5, 10, 20, 50… so it reads the same from 1 to 10 000 and more."""
    n = max(int(n), 1)
    steps = (m * 10**e for e in itertools.count() for m in (1, 2, 5))
    step = next(s for s in steps if n / s <= MAX_TICK_STEPS)
    pad = 0.5 if n <= MAX_TICK_STEPS else 0.02 * n
    return {"title": title, "tickmode": "linear", "tick0": 0, "dtick": step, "tickformat": ",d",
            "range": [-pad, n + pad]}  # fmt: skip


def cumulative_budget_figure(
    rows: list[tuple[int, dict[str, float | None]]],
    budget: float,
    *,
    accountant: str,
    delta: float,
    counted: str = "releases",
) -> go.Figure:
    """Total ε after the first n releases (``counted``: what n counts), one step line per accountant:
    ``accountant`` (in force) solid and on top, the others dotted and pale; the budget as a line."""
    figure = go.Figure()
    names = list(rows[0][1]) if rows else []
    last = rows[-1][1] if rows else {}
    kept = last.get(accountant)
    for name in sorted(names, key=lambda n: n == accountant):  # the accountant in force drawn last, on top
        xs = [n for n, totals in rows if totals.get(name) is not None]
        ys = [totals[name] for n, totals in rows if totals.get(name) is not None]
        in_force = name == accountant
        role = accountant_role(name, last.get(name), accountant, kept)
        figure.add_scatter(
            x=xs, y=ys, mode="lines+markers" if in_force else "lines", name=f"{name}: {role}",
            opacity=1.0 if in_force else 0.55,
            line={"shape": "hv", "width": 3.5 if in_force else 1.5, "dash": "solid" if in_force else "dot",
                  "color": ACCOUNTANT_COLOURS.get(name, "#444")},
            hovertemplate=f"{name} ({role}): after %{{x}} {counted}, ε = %{{y:.4g}}<extra></extra>",
        )  # fmt: skip
    figure.add_hline(
        y=budget, line={"color": "#000", "dash": "dash"},
        annotation_text=f"budget ε = {budget:g}, checked against {accountant}",
        annotation_position="top left",
    )  # fmt: skip
    n_max = max((n for n, _ in rows), default=1)
    figure.update_layout(
        **{**LAYOUT, "hovermode": "closest", "margin": {"l": 60, "r": 20, "t": 50, "b": 90 + 22 * len(names)},
           "legend": {**LAYOUT["legend"], "orientation": "v", "title": {"text": _LEGEND_TITLE}}},
        title=f"Total ε after each release at δ = {delta_text(delta)}: {accountant} (solid) is in force",
        separators=". ",
        xaxis=count_axis(n_max, counted),
        yaxis={"title": "total ε", "rangemode": "tozero"},
        height=420 + 22 * len(names),
    )  # fmt: skip
    return figure


def budget_gauge(spent: float, budget: float, accountant: str) -> go.Figure:
    """The share of the budget spent under the dataset's accountant."""
    figure = go.Figure(go.Indicator(
        mode="gauge+number", value=spent, number={"valueformat": ".4g", "suffix": f" of {budget:g}"},
        title={"text": f"ε spent ({accountant}, in force)"},
        gauge={"axis": {"range": [0, budget]}, "bar": {"color": "#D55E00" if spent >= budget else "#0072B2"},
               "steps": [{"range": [0, budget], "color": "#EEF2F6"}]},
    ))  # fmt: skip
    figure.update_layout(height=260, margin={"l": 30, "r": 30, "t": 60, "b": 10})
    return figure


def cumulative_table(
    rows: list[tuple[int, dict[str, float | None]]], accountant: str, counted: str = "releases"
) -> pd.DataFrame:
    """The step chart's numbers: one row per n, one column per accountant (the one in force first)."""
    names = sorted(rows[0][1], key=lambda n: n != accountant) if rows else []
    header = {name: f"{name} (in force)" if name == accountant else name for name in names}
    return pd.DataFrame(
        [{counted: n, **{header[name]: "n/a" if totals.get(name) is None else f"{totals[name]:.6g}"
                         for name in names}} for n, totals in rows]
    )  # fmt: skip
