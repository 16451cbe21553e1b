"""dpdash entry point: page config, navigation over pages/, and the shared sidebar.

Run with ``make run`` (or ``streamlit run app.py``); the server listens on
http://localhost:8501. Pages live one per file in ``pages/`` and never import
from each other; Streamlit-only helpers live in ``ui/``, the maths in ``dpdash/``.
"""

from pathlib import Path

import streamlit as st

from ui.shell import load_modules

load_modules()  # every ui and dpdash module, once, before two sessions' first runs import them at once

from dpdash.errors import AccessDenied, DPDashError  # noqa: E402
from ui.access import visible_pages  # noqa: E402
from ui.auth import sign_in_gate, user_box  # noqa: E402
from ui.preload import preload_element_code  # noqa: E402
from ui.roles import table_role  # noqa: E402
from ui.shell import inside_shell  # noqa: E402
from ui.sidebar import render_sidebar  # noqa: E402
from ui.state import active_table, leave_table  # noqa: E402
from ui.text import md  # noqa: E402
from ui.warm import warm_server  # noqa: E402

STATIC = Path(__file__).resolve().parent / "static"

st.set_page_config(
    page_title="dpdash",
    # A local file (sent inline as a data URL): a Material icon here is fetched from an outside font host.
    page_icon=str(STATIC / "favicon.svg"),
    layout="wide",
)
st.html(STATIC / "theme.css")  # what the theme options cannot reach (chart text contrast); takes no space
preload_element_code()  # chart and table code evaluated while the browser is idle, not on first use

# Every page module starts with ui.shell.run_through_app(), so that a bookmarked URL opened first on a fresh
# server (which Streamlit runs through its own discovery of pages/) also runs through this file.
# No icons: a Material icon's name is read aloud as part of the link ("account_balance_wallet Budget").
PAGES = [
    st.Page("pages/home.py", title="Home", default=True),
    st.Page("pages/data.py", title="Data"),
    st.Page("pages/datasets.py", title="Datasets"),
    st.Page("pages/explorer.py", title="Mechanism explorer"),
    st.Page("pages/release.py", title="Query & release"),
    st.Page("pages/synthetic.py", title="Synthetic table"),
    st.Page("pages/budget.py", title="Budget"),
    st.Page("pages/planner.py", title="Planner"),
    st.Page("pages/risk.py", title="What does ε mean?"),
    st.Page("pages/audit.py", title="Audit"),
]

# Without sign-in (the default) the one local owner; with it, only the sign-in page until someone signs in.
user = sign_in_gate()
try:
    role = table_role(active_table())
    if role is None:  # this session's table is no longer this person's (the roles file changed): another
        leave_table()
        role = table_role(active_table())
except DPDashError as error:  # no table this person has a role on, a roles file or a ledger that fails
    role, problem = None, error
else:
    problem = AccessDenied(f"{user.label} has no role on this table; open another on the Datasets page")
if role is None:
    with st.sidebar:
        user_box(user, None)
    st.error(f"dpdash cannot open a table for you: {md(problem)}", icon=":material/lock:")
    st.stop()

# Only the pages this role on the active table opens; each page checks again, and so does the code that
# spends or shows a true value (ui/state.py).
page = st.navigation(visible_pages(PAGES, role))

# The sidebar is drawn first so that it shows even when a page stops early (st.stop); pages rerun
# after anything that changes it (a new table, a budget, a release).
with st.sidebar:
    render_sidebar()
    user_box(user, role)
    st.caption("dpdash · differential-privacy budget explorer · runs locally, sends nothing out")

# A problem a person can cause or fix (an unreadable ledger, a bad value) that a page did not handle
# itself ends the page with its message, never a traceback; the session's table and the ledger are kept.
try:
    with inside_shell():
        page.run()
except DPDashError as error:
    st.error(f"This page cannot go on: {md(error)}", icon=":material/error:")

warm_server()  # once per server process, after the first page has been drawn (ui/warm.py)
