"""Mechanism explorer: every noise mechanism at the same ε (and δ), side by side."""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py (docs/contributing.md, Layout)

import pandas as pd
import streamlit as st

from dpdash import comparison
from dpdash.wording import guarantee
from ui.access import guard_page
from ui.chart_view import show_chart
from ui.charts import accuracy_curve_figure, noise_figure
from ui.explorer_tables import DEFAULT_ALPHA, DEFAULTS, compared, count_sensitivity, inverted, protected_by
from ui.explorer_tables import curves as curve_table
from ui.numbers import all_of, delta_text, plural
from ui.state import active_table
from ui.text import show_guarantee
from ui.widgets import delta_control, epsilon_control

st.title("Mechanism explorer")
guard_page(__file__)
st.caption(
    "How much noise each mechanism adds for the same privacy budget, and how accurate the answers are. "
    "Everything here is exact mathematics; nothing is released and no budget is spent."
)


unit = active_table().facts.unit
if st.session_state.get("explorer_unit") != unit:  # a new table: its count's sensitivity is the default
    st.session_state["explorer_unit"] = unit
    st.session_state["explorer_l1"] = st.session_state["explorer_l2"] = count_sensitivity(unit)
controls, settings = st.columns([3, 2], gap="large")
with controls:
    epsilon = epsilon_control("explorer_epsilon", label="ε to compare the mechanisms at")
    delta = delta_control("explorer_delta")
with settings:
    l1 = st.number_input(
        "ℓ1 sensitivity Δ₁", min_value=1e-6, step=1.0, format="%g", key="explorer_l1",
        help="The most the answers (all k together, summed) can change when one record is added or "
        "removed. Laplace and geometric noise scale with it; the staircase and discrete Gaussian take it "
        "as the change of one answer.",
    )  # fmt: skip
    l2 = st.number_input(
        "ℓ2 sensitivity Δ₂", min_value=1e-6, step=1.0, format="%g", key="explorer_l2",
        help="The same change measured in ℓ2 (Euclidean) length; Gaussian noise scales with it.",
    )  # fmt: skip
    k = int(st.number_input("answers released together, k", min_value=1, max_value=1_000_000,
                            value=DEFAULTS["k"], step=1, key="explorer_k"))  # fmt: skip
    confidence = st.select_slider(
        "confidence", options=(0.8, 0.9, 0.95, 0.99, 0.999), value=DEFAULTS["confidence"],
        format_func=lambda c: f"{c:.1%}", key="explorer_confidence",
    )  # fmt: skip

covered, lead = protected_by(unit, l1, l2)  # the caption follows the Δ entered and the table's unit
if covered is None:
    st.caption(lead)
else:
    show_guarantee(guarantee(covered, epsilon, delta, scope="each mechanism here", caveat=False),
                   key="explorer_guarantee", lead=lead)  # fmt: skip

if epsilon is None:
    st.stop()

table = compared(epsilon, delta, l1, l2, k, confidence)
candidates = comparison.lineup(epsilon=epsilon, delta=delta, l1_sensitivity=l1, l2_sensitivity=l2)

show_chart(noise_figure(candidates), key="explorer_noise_chart")

answers = all_of(k, "answer") + ("" if k == 1 else " at once")
st.subheader(f"Accuracy at ε = {epsilon:g}")
st.markdown(
    f"**±a** is the exact half-width: with probability {confidence:.1%} the noise on {answers} is "
    "within ±a (integer mechanisms: a whole number). The **union bound** is the textbook bound "
    "(Dwork & Roth, Thm 3.8), shown for comparison: it is never tighter."
)


def _readable(frame: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """``frame`` with ``columns`` renamed, numbers to 4 significant digits and δ written out; a mechanism
    that does not apply reads "n/a" in each cell, with the reason in its "why n/a" column (never None)."""
    shown = frame.assign(**{c: frame[c].map(delta_text) for c in ("delta",) if c in frame})
    numbers = [c for c in columns if c not in ("mechanism", "delta") and c in frame]
    for column in numbers:
        shown[column] = [v if isinstance(v, str) else "n/a" if v != v else f"{v:.4g}" for v in frame[column]]
    return shown.rename(columns=columns | {"note": "why n/a"})[[*columns.values(), "why n/a"]]


shown = _readable(
    table,
    {
        "mechanism": "mechanism",
        "delta": "δ",
        "sensitivity": "Δ",
        "sensitivity_norm": "Δ measured as",
        "scale": "scale (b or σ)",
        "sd": "SD",
        "half_width_1": f"±a, one answer ({confidence:.0%})",
        # for k = 1 the same column as the one before
        **({} if k == 1 else {"half_width_k": f"±a, {all_of(k, 'answer')} at once ({confidence:.0%})"}),
        "union_bound_k": f"union bound, {plural(k, 'answer')}",
    },
)
st.dataframe(shown, hide_index=True, width="stretch", key="explorer_table")
for _, row in table[table["note"] != ""].iterrows():
    st.caption(f"**{row['mechanism']}** (n/a): {row['note']}")
st.download_button(
    "Download this table (CSV)", table.to_csv(index=False).encode(),
    file_name=f"mechanisms_eps{epsilon:g}.csv", mime="text/csv", key="explorer_download_table",
    on_click="ignore",
)  # fmt: skip

curves = curve_table(delta, l1, l2, k, confidence)
show_chart(
    accuracy_curve_figure(curves, current_epsilon=epsilon, confidence=confidence, k=k),
    key="explorer_curve_chart",
    table=curves.pivot(index="epsilon", columns="mechanism", values="half_width").reset_index()
    .rename(columns={"epsilon": "ε"}).map(lambda v: "n/a" if v != v else f"{v:.4g}"),
    summary=f"Exact ±a for {answers} at {confidence:.1%} against ε, one column per mechanism; "
    f"ε now = {epsilon:g}. n/a: the mechanism does not apply at that ε.",
)  # fmt: skip

st.subheader("What ε does an accuracy cost?")
alpha = st.number_input(
    f"I can accept an error of ± (for {answers}, at {confidence:.1%})", min_value=1e-6, value=DEFAULT_ALPHA,
    step=1.0, format="%g", key="explorer_alpha",
)  # fmt: skip
inverse = inverted(alpha, delta, l1, l2, k, confidence)
st.dataframe(
    _readable(inverse, {"mechanism": "mechanism", "epsilon": "smallest ε", "half_width_k": "±a at that ε"}),
    hide_index=True, width="stretch", key="explorer_inverse",
)  # fmt: skip
for _, row in inverse[inverse["note"] != ""].iterrows():
    st.caption(f"**{row['mechanism']}** (n/a): {row['note']}")
st.caption(
    f"δ = {delta_text(delta)} is kept fixed for the Gaussian-type mechanisms. Integer mechanisms can reach "
    "±0 (exact answers at this confidence) at large ε; the log-scale chart above leaves those points out."
)
