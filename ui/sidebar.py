"""The sidebar every page shows: the table, who is protected (in plain words), and its budget."""

from __future__ import annotations

import streamlit as st

# First, the whole package: on a cold server, two sessions' threads run app.py at once, and one may meet
# dpdash.accounting half-imported by the other (a partially initialised module). A plain `import dpdash`
# waits until the other thread has finished importing the package (Python's per-module import lock).
import dpdash  # noqa: F401
from dpdash.errors import DPDashError
from dpdash.identity import short_identity
from dpdash.wording import guarantee
from ui.ledger_session import registered
from ui.numbers import left_text, spent_text
from ui.state import active_table, aligned_table, budget_status, row_count
from ui.text import md, show_guarantee

#: What the sidebar's guarantee covers: the budget caps everything released from the table.
_SCOPE = "all releases from this table together (its whole budget)"


def render_sidebar() -> None:
    """Dataset, who is protected, and budget; a broken ledger is a message here, never a traceback."""
    try:
        # The locked unit of privacy (recorded with the budget) is the one every page and query uses.
        table, _ = aligned_table()
    except DPDashError:
        table = active_table()  # the ledger's problem is shown below
    rows = row_count(table)  # a count is a true answer: the owner's alone (None for anyone else)
    columns = f"{table.data.shape[1]} columns"
    shape = columns if rows is None else f"{rows:,} rows × {columns}"
    st.markdown(f"**Data:** {md(table.name)}  \n{shape}  \nidentity `{short_identity(table.identity)}`",
                help="The content identity this table's budget is kept under (the same rows in any order, "
                     "format or column types have the same one); the Data page shows it whole.")  # fmt: skip
    unit = table.facts.unit
    try:
        status = budget_status(table)
        record = registered(table)
    except DPDashError as error:
        show_guarantee(guarantee(unit), lead="**Who is protected:** ", key="sidebar_guarantee", caption=False)
        st.error(f"The budget ledger cannot be read: {md(error)}", icon=":material/error:")
        return
    if status is None or record is None:
        show_guarantee(guarantee(unit), lead="**Who is protected:** ", key="sidebar_guarantee", caption=False)
        where = "set one on the **Data** page" if rows is not None else "an owner of the table sets it"
        st.info(f"No budget set for this table yet: {where}.", icon=":material/info:")
        return
    # Releases as people count them (release_count): a mean's sum and count are two entries, one release.
    budget, spent, releases = status.budget, status.spent.epsilon, status.releases
    share = min(1.0, spent / budget.epsilon)
    delta = f", δ = {budget.delta:g}" if budget.delta else ""
    st.markdown(f"**Budget:** ε = {budget.epsilon:g}{delta}")
    if record.fingerprint != table.identity:  # a version continues the budget of the table it follows
        st.caption(f"The budget of {md(record.name)} (identity `{short_identity(record.fingerprint)}`): "
                   "this table is a version of it.")  # fmt: skip
    remaining = status.remaining_epsilon
    st.progress(share, text=f"spent ε = {spent_text(spent)} · remaining ε = {left_text(remaining)}")
    st.caption(f"{releases} release{'' if releases == 1 else 's'}; spent as counted by the "
               f"**{md(record.accountant)}** accountant at δ = {budget.delta:g}; shown rounded, spent up and "
               "remaining down.",
               help=f"Exactly: spent ε = {spent!r}, remaining ε = {remaining!r}.")  # fmt: skip
    if status.exhausted:
        st.error("The budget is spent: no more releases from this table.", icon=":material/block:")
    words = guarantee(unit, budget.epsilon, budget.delta, scope=_SCOPE, accountant=record.accountant)
    show_guarantee(words, lead="**Who is protected:** ", key="sidebar_guarantee", caption=False)
