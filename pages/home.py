"""Home: what dpdash is for, and the first-run checklist for the active table."""

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py's shell (README, Layout)

import streamlit as st

from ui.checklist import render_checklist
from ui.state import active_table

st.title("dpdash")
st.subheader("A differential-privacy budget explorer")

st.markdown(
    """
Differential privacy protects the people in a dataset by adding calibrated random noise to every answer
released from it. Each release spends part of a privacy budget (ε, and for some mechanisms δ); once the
budget is spent, nothing more can be released. dpdash shows what that trade-off means before you make it.

- **Data**: load your table (or an example), say who is protected and what is publicly known about it,
  and set its budget.
- **Query & release**: compare the noise mechanisms for a query (Laplace, Gaussian, geometric,
  discrete Gaussian and staircase noise; randomized response; the exponential mechanism,
  permute-and-flip and report-noisy-max for choices), preview a simulated release (spends
  nothing), then release with the exact sampler (spends budget, recorded in the ledger).
- **Budget**, **Planner**, **What does ε mean?**, **Mechanism explorer**, **Audit**: what has been spent,
  what a budget buys, what ε means for a person, and how each mechanism behaves.
"""
)

render_checklist(active_table())
