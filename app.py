"""dpdash entry point: page config, navigation over pages/, and the shared sidebar.

Run with ``make run`` (or ``streamlit run app.py``); the server listens on
http://localhost:8501. Pages live one per file in ``pages/`` and never import
from each other; Streamlit-only helpers live in ``ui/``, the maths in ``dpdash/``.
"""

import streamlit as st

from ui.sidebar import render_sidebar

st.set_page_config(
    page_title="dpdash",
    page_icon=":material/shield_lock:",
    layout="wide",
)

PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/data.py", title="Data", icon=":material/table:"),
    st.Page("pages/explorer.py", title="Mechanism explorer", icon=":material/compare:"),
    st.Page("pages/release.py", title="Query & release", icon=":material/send:"),
    st.Page("pages/risk.py", title="What does ε mean?", icon=":material/psychology_alt:"),
]

page = st.navigation(PAGES)

with st.sidebar:
    render_sidebar()
    st.caption("dpdash · differential-privacy budget explorer · runs locally, sends nothing out")

page.run()
