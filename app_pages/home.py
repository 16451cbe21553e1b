"""Home: what dpdash is for and what is on the way."""

import streamlit as st

st.title("dpdash")
st.subheader("A differential-privacy budget explorer")

st.markdown(
    """
Differential privacy protects the people in a dataset by adding calibrated random
noise to every answer released from it. Each release spends part of a privacy
budget (ε, and for some mechanisms δ); once the budget is spent, nothing more
can be released. dpdash helps you see what that trade-off means before you make it.

**What it is for**

- **Compare noise mechanisms**: Laplace, Gaussian, geometric, discrete Gaussian and
  staircase noise, side by side for the same query, ε, δ and sensitivity Δ.
- **Preview, then release**: simulated previews show the accuracy you can expect and
  spend nothing; only a real release spends budget.
- **Track the budget**: every release is recorded, so you can see what has been spent
  and what remains.
"""
)

st.page_link("app_pages/explorer.py", label="Open the Mechanism explorer", icon=":material/compare:")

st.info(
    "This is an early version. The **Mechanism explorer** is ready; pages for **Data**, **Release** "
    "and **Budget** are coming next.",
    icon=":material/construction:",
)
