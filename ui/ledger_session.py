"""This browser session's handle on the budget ledger (``$DPDASH_LEDGER``) and its entry in it, and what
the ledger says of the active table: its budget and the unit of privacy locked with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ui.active_table import ActiveTable
import dataclasses

import streamlit as st

from dpdash.datasets import PublicFacts
from dpdash.errors import DPDashError
from dpdash.facts import Facts
from dpdash.ledger import Dataset, Ledger, Session
from dpdash.ledger.versions import RecordedUnit
from ui import auth
from ui.text import md

__all__ = [
    "budget_set_or_stop",
    "ledger",
    "ledger_session",
    "ledger_session_uid",
    "locked_with_bounding",
    "recorded_unit",
    "registered",
    "registered_or_stop",
    "with_unit",
]


_LEDGER = "dpdash_ledger"


_SESSION = "dpdash_ledger_session"


def ledger() -> Ledger:
    """This session's handle on the persistent ledger ($DPDASH_LEDGER, a file or a postgresql:// URL, or
    the default file)."""
    handle = st.session_state.get(_LEDGER)
    if handle is None:
        handle = Ledger()
        st.session_state[_LEDGER] = handle
    return handle


def ledger_session() -> Session:
    """This browser session's entry in the ledger (releases are attributed to it, and to the signed-in
    person it names)."""
    session = st.session_state.get(_SESSION)
    if session is None:
        user = auth.current_user()
        who = "" if user is None or user.local else f": {user.label}"
        session = ledger().start_session(f"dpdash app{who}")
        st.session_state[_SESSION] = session
    return session


def ledger_session_uid() -> str | None:
    """This browser session's uid in the ledger if it has one yet (nothing is written to find out)."""
    session = st.session_state.get(_SESSION)
    return None if session is None else session.uid


def registered(table: ActiveTable) -> Dataset | None:
    """The ledger's record of this table (its budget and accountant), or None before a budget is set."""
    return ledger().find_dataset(table.identity)


def registered_or_stop(table: ActiveTable) -> Dataset | None:
    """``registered(table)``; a ledger that cannot be read ends the page with its message (never a
    traceback), the session's table kept."""
    try:
        return registered(table)
    except DPDashError as error:
        st.error(f"The budget ledger cannot be read: {md(error)}", icon=":material/error:")
        st.stop()


def budget_set_or_stop(record: Dataset | None, owner: bool, requested: str) -> Dataset:
    """``record`` when the table has a budget; otherwise a warning that says who sets it, and the page ends
    there. ``requested`` completes the analyst's sentence "…before <requested>"."""
    if record is None:
        st.warning(
            "Set this table's privacy budget on the **Data** page before releasing." if owner else
            f"An owner of this table has to set its privacy budget before {requested}.",
            icon=":material/lock:",
        )  # fmt: skip
        st.stop()
    return record


def recorded_unit(table: ActiveTable) -> RecordedUnit | None:
    """The unit of privacy recorded with the table's budget, or None (no budget, or none recorded)."""
    record = registered(table)
    return None if record is None else ledger().unit(record)


def with_unit(facts: PublicFacts, unit: Facts) -> PublicFacts:
    """The facts with another unit of privacy (the id column's bounds or categories dropped)."""
    drop = unit.id_column
    return PublicFacts(
        bounds={c: b for c, b in facts.bounds.items() if c != drop},
        categories={c: v for c, v in facts.categories.items() if c != drop},
        unit=unit,
        notes=facts.notes,
        # Per-group bounds need the id column; a unit without one drops them.
        group_bounds={c: b for c, b in facts.group_bounds.items() if c != drop} if drop is not None else {},
    )


def locked_with_bounding(locked: Facts, bounding: str) -> Facts:
    """The locked unit of privacy, its c enforced by ``bounding`` (weights need its id column)."""
    return dataclasses.replace(locked, bounding=bounding if locked.id_column is not None else "sample")
