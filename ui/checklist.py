"""The guided first run: a checklist for the active table, in the spirit of OpenDP's DP Wizard.

Each step says whether it is done for the active table and links to the page where it is done:
loaded → unit of privacy → bounds and categories → budget → first preview → first release.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from dpdash.errors import DPDashError
from dpdash.facts import Facts
from dpdash.wording import protected_unit
from ui.ledger_session import ledger, registered
from ui.state import ActiveTable
from ui.text import md

# Pages set this (a set of table identities) when they have shown a simulated preview of a query.
PREVIEWED = "dpdash_previewed"


@dataclass(frozen=True, slots=True)
class Step:
    """One step of the first run: its title, whether it is done, what it means, and where it is done."""

    title: str
    done: bool
    detail: str
    page: str
    link: str


def mark_previewed(table: ActiveTable) -> None:
    """Record that a preview was shown for this table in this session (the checklist's fifth step)."""
    st.session_state.setdefault(PREVIEWED, set()).add(table.identity)


def steps(table: ActiveTable) -> list[Step]:
    """The six steps for ``table``; the ledger is read for the budget and the releases."""
    facts = table.facts
    unit = facts.unit
    record = registered(table)
    declared_unit = unit != Facts() or record is not None
    status = None if record is None else ledger().status(record)
    releases = 0 if status is None else status.releases  # as every page counts them (release_count)
    shape = f"protects {protected_unit(unit)}"
    return [
        Step("Load a table", True, f"{table.name} ({table.source})", "pages/data.py", "Data"),
        Step(
            "Declare who is protected (the unit of privacy)",
            declared_unit,
            f"now: {shape}" + ("" if declared_unit else " (the default: check it)"),
            "pages/data.py",
            "Data",
        ),
        Step(
            "Declare public bounds and categories",
            bool(facts.bounds or facts.categories),
            f"{len(facts.bounds)} column(s) with bounds, {len(facts.categories)} with categories",
            "pages/data.py",
            "Data",
        ),
        Step(
            "Set the privacy budget",
            status is not None,
            "not set" if status is None else f"ε = {status.budget.epsilon:g}, δ = {status.budget.delta:g}",
            "pages/data.py",
            "Data",
        ),
        Step(
            "Preview a query (simulated: spends nothing)",
            table.identity in st.session_state.get(PREVIEWED, set()) or releases > 0,
            "see the accuracy a release would have",
            "pages/release.py",
            "Query & release",
        ),
        Step(
            "Make a first release (spends budget)",
            releases > 0,
            f"{releases} release{'' if releases == 1 else 's'} from this table",
            "pages/release.py",
            "Query & release",
        ),
    ]


def render_checklist(table: ActiveTable) -> None:
    """The checklist as a bordered box; a ledger problem is a message, never a traceback."""
    try:
        found = steps(table)
    except DPDashError as error:
        st.error(f"The budget ledger cannot be read: {md(error)}", icon=":material/error:")
        return
    done = sum(step.done for step in found)
    with st.container(border=True, key="first_run_checklist"):
        st.markdown(f"**First run for {md(table.name)}:** {done} of {len(found)} steps done")
        for number, step in enumerate(found, start=1):
            mark = ":material/check_circle:" if step.done else ":material/radio_button_unchecked:"
            left, right = st.columns([4, 1])
            left.markdown(f"{mark} {number}. **{md(step.title)}** · {md(step.detail)}")
            right.page_link(step.page, label=step.link)
