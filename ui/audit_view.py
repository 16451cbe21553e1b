"""The Audit page's evidence: the ε lower bound against the claim, the event that told the two inputs
apart, the histograms and the bound's progress, with what the bound means (``dpdash.audit``)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.audit import AuditState
from ui.chart_view import show_chart
from ui.charts import audit_histograms, audit_progress
from ui.numbers import thousands

__all__ = ["render_audit"]


def render_audit(state: AuditState, done: int = 0, total: int = 0, *, progress: Any, results: Any) -> None:
    """The evidence so far, drawn into the ``results`` placeholder, with the run's share done in ``progress``
    (once per step while a run draws)."""
    result = state.result
    if result is None:
        return
    if total:
        progress.progress(done / total, text=f"{thousands(state.trials)} trials per side drawn…")
    with results.container():
        claimed = result.claimed_epsilon
        cols = st.columns(4 if result.target.delta else 3)
        bound_label = f"ε lower bound ({100 * result.confidence:g}% confidence)"
        cols[0].metric(bound_label, f"{result.epsilon_lower:.3f}")
        cols[1].metric("claimed ε", f"{claimed:g}")
        if result.target.delta:
            cols[2].metric("claimed δ", f"{result.target.delta:g}")
        cols[-1].metric("trials per side", thousands(result.trials))
        if result.refutes_claim:
            st.error(result.verdict, icon=":material/gpp_bad:")
        else:
            st.success(result.verdict, icon=":material/verified_user:")
        if result.epsilon_lower == 0:
            st.info("No event told the two inputs apart in these trials, so the bound says nothing beyond "
                    "ε ≥ 0: consistent with the claim, but no evidence for it. More trials may help; on a "
                    "large table one person may not move the answer at all (a median, often).",
                    icon=":material/info:")  # fmt: skip
        favoured = "first" if result.event.forward else "second"
        likelier = f", more likely on the {favoured} input" if result.epsilon_lower > 0 else ""
        st.markdown(
            f"**Chosen event** (on the search half): {result.event.describe()}{likelier}. "
            f"Counted on the other half: first input {thousands(result.hits_first)} of "
            f"{thousands(result.evaluation_first)}, second input {thousands(result.hits_second)} of "
            f"{thousands(result.evaluation_second)}; plug-in estimate of its log-ratio "
            f"{result.epsilon_estimate:.3g}."
        )
        key = f"{id(state)}_{state.trials}"
        show_chart(audit_histograms(result), key=f"audit_histograms_{key}")
        show_chart(audit_progress(state.history, claimed), key=f"audit_progress_{key}")
        st.caption(
            "Bound: one-sided Clopper–Pearson bounds on both probabilities (Bonferroni), event chosen on "
            "half the trials and counted on the other half; ε ≥ ln((p̲ − δ)/q̄). "
            f"Neighbours: {result.target.pair}. "
            "A bound at or below the claim is consistent with it but is not a proof (one pair of inputs, "
            "one family of events); a bound above it refutes the claim at the stated confidence. "
            f"{thousands(state.trials)} trials per side in "
            + (f"{state.seconds:.1f} s." if state.seconds >= 0.1 else "under 0.1 s.")
        )
        st.caption(":material/warning: Decide the number of trials before you look: stopping a run when the "
                   "bound looks largest inflates it.")  # fmt: skip
