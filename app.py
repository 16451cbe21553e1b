"""dpdash entry point: page config, navigation over pages/, and the shared sidebar.

Run with ``make run`` (or ``streamlit run app.py``); the server listens on
http://localhost:8501. Pages live one per file in ``pages/`` and never import
from each other; Streamlit-only helpers live in ``ui/``, the maths in ``dpdash/``.
"""

import streamlit as st

from dpdash.errors import DPDashError
from ui.shell import inside_shell
from ui.sidebar import render_sidebar
from ui.text import md

st.set_page_config(
    page_title="dpdash",
    page_icon=":material/shield_lock:",
    layout="wide",
)

# TODO(issue 14): a bookmarked page URL opened first on a fresh server must run through this entry point.
PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/data.py", title="Data", icon=":material/table:"),
    st.Page("pages/datasets.py", title="Datasets", icon=":material/dataset:"),
    st.Page("pages/explorer.py", title="Mechanism explorer", icon=":material/compare:"),
    st.Page("pages/release.py", title="Query & release", icon=":material/send:"),
    st.Page("pages/budget.py", title="Budget", icon=":material/account_balance_wallet:"),
    st.Page("pages/planner.py", title="Planner", icon=":material/tune:"),
    st.Page("pages/risk.py", title="What does ε mean?", icon=":material/psychology_alt:"),
    st.Page("pages/audit.py", title="Audit", icon=":material/science:"),
]

page = st.navigation(PAGES)

# The sidebar is drawn first so that it shows even when a page stops early (st.stop); pages rerun
# after anything that changes it (a new table, a budget, a release).
with st.sidebar:
    render_sidebar()
    st.caption("dpdash · differential-privacy budget explorer · runs locally, sends nothing out")

# A problem a person can cause or fix (an unreadable ledger, a bad value) that a page did not handle
# itself ends the page with its message, never a traceback; the session's table and the ledger are kept.
try:
    with inside_shell():
        page.run()
except DPDashError as error:
    st.error(f"This page cannot go on: {md(error)}", icon=":material/error:")
