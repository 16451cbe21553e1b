"""Home: what dpdash is for, a short guide to its pages, and the first-run checklist for the active table."""

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py's shell (README, Layout)

import streamlit as st

from ui.checklist import render_checklist
from ui.state import active_table

st.title("dpdash")
st.subheader("A differential-privacy budget explorer")

st.markdown(
    """
Differential privacy protects the people in a table by adding random noise to every number released from
it. Each release spends part of the table's privacy budget, ε (and, for Gaussian noise, δ): the smaller the
budget, the more the noise hides any one person, and the less exact the numbers. Once the budget is spent,
nothing more can be released. dpdash shows that trade-off before you make it, and keeps the account.

**The pages**
- **Data**: load a table (CSV, TSV, Parquet, Excel or an example), say who is protected (a row, or a
  person with up to c rows), declare public bounds and categories, and set the budget (fixed once set).
- **Datasets**: every table with a budget, how much each has left, and which one to work on.
- **Query & release**: pick a query and a noise mechanism (Laplace, Gaussian, geometric, discrete Gaussian
  or staircase noise; for choices, the exponential mechanism, permute-and-flip or report-noisy-max), see
  a simulated preview of the ± you would get (free), then release for real (spends budget, cannot be
  undone) and download the values.
- **Budget**: what has been spent and what remains, each release, and a one-page report for stakeholders.
- **Planner**: share a budget between the releases you plan, and see each one's ± before spending.
- **What does ε mean?**: ε as an attacker's odds: how much more sure anyone can become about a person.
- **Mechanism explorer**: all the noise mechanisms side by side at the same ε: how much noise each adds.
- **Audit**: test by experiment that a release keeps the ε it claims.
"""
)

render_checklist(active_table())
