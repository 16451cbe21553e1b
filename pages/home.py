"""Home: what dpdash is for, a short guide to its pages, and the first-run checklist for the active table."""

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py (docs/contributing.md, Layout)

import streamlit as st

from dpdash.access import Action
from ui.access import guard_page
from ui.checklist import render_checklist
from ui.roles import table_role
from ui.state import active_table, allowed

st.title("dpdash")
guard_page(__file__)
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

table = active_table()
if allowed(table, Action.DECLARE):  # the first run's steps are the owner's
    render_checklist(table)
else:
    role = table_role(table)
    can = (
        "preview the accuracy of releases (without true values) and request releases, which an owner "
        "approves or declines on **Query & release**; read the **Budget**"
        if allowed(table, Action.PREVIEW)
        else "read the **Budget**, what was released and the stakeholder report, and **What does ε mean?**"
    )
    st.info(f"You are {role.article} {role.value} on this table: you can {can}. The pages you can open are "
            "in the navigation.", icon=":material/badge:")  # fmt: skip

