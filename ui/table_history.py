"""What dpdash already knows about a table as it is loaded: the same rows loaded before (under which name,
since when), said in words on the Data page; and, for a new version that continues a budget, the public
facts of the version before it, declared again for the columns that still fit."""

from __future__ import annotations

import streamlit as st

from dpdash.datasets import PublicFacts, carried_facts
from dpdash.errors import DPDashError
from dpdash.identity import short_identity
from dpdash.ledger import Dataset
from dpdash.loading import column_types
from dpdash.workspace import StoredTable
from ui.ledger_session import ledger, locked_with_bounding, with_unit
from ui.roles import acting_user
from ui.state import ActiveTable, update_table, workspace
from ui.text import md

__all__ = [
    "carried_notice",
    "carry_facts_over",
    "facts_saved",
    "forget_same_rows",
    "remember_same_rows",
    "same_rows_notice",
]

_SAME = "data_upload_same"  # (identity, the words) of the last upload whose rows were known
_CARRIED = "data_facts_carried"  # (identity, the previous version's name, the columns carried)


def _when(timestamp: str) -> str:
    return f"{timestamp[:16].replace('T', ' ')} UTC" if timestamp else "earlier"


def remember_same_rows(identity: str, stored: StoredTable | None) -> None:
    """Before an upload with this content ``identity`` is made active: if the same rows were loaded before
    (kept in the workspace as ``stored``, or known to the ledger), keep the words that say so for the page
    to show after its rerun; otherwise forget any earlier words."""
    st.session_state.pop(_SAME, None)
    try:
        record = ledger().find_dataset(identity)
        loads = [a for a in ledger().actions(identity)
                 if a.dataset == identity and a.action in ("load", "connect")]  # fmt: skip
        versions = ledger().versions(record) if record is not None else []
    except DPDashError:  # the ledger's problem is said where the page reads it
        record, loads, versions = None, [], []
    if stored is None and record is None and not loads:
        return
    named = [v.name for v in versions if v.fingerprint == identity]
    if stored is not None:
        name = stored.name
    elif record is not None:
        name = named[0] if named else record.name
    else:
        name = str(loads[0].details.get("name") or "an earlier upload")
    when = loads[0].created_at if loads else stored.saved_at if stored is not None else record.created_at
    if record is not None:
        budget = "its budget continues" if record.fingerprint == identity else (
            f"the budget of {md(record.name)} it continues goes on"
        )  # fmt: skip
    elif stored is not None:
        budget = "its name and public facts are kept (no budget is set yet)"
    else:
        budget = "no budget is set for it yet"
    words = (f"**Same rows as {md(name)}** (loaded {_when(when)}): {budget}. The same content in any row "
             f"order, file format or column types is one dataset, identity `{short_identity(identity)}`.")
    st.session_state[_SAME] = (identity, words)


def forget_same_rows() -> None:
    """Another table was made active: the words about an upload no longer apply."""
    st.session_state.pop(_SAME, None)


def same_rows_notice(table: ActiveTable) -> None:
    """Say, for the active table, that its upload had the rows of a table loaded before."""
    said = st.session_state.get(_SAME)
    if said is not None and said[0] == table.identity:
        st.success(said[1], icon=":material/join_inner:")


def _previous(record: Dataset, identity: str) -> StoredTable | None:
    """The newest earlier version of ``record`` still kept in the workspace (the table itself excluded)."""
    fingerprints = [record.fingerprint, *(v.fingerprint for v in ledger().versions(record))]
    for fingerprint in reversed([f for f in fingerprints if f != identity]):
        try:
            kept = workspace().table(fingerprint)
        except DPDashError:
            kept = None
        if kept is not None:
            return kept
    return None


def carry_facts_over(table: ActiveTable, record: Dataset) -> None:
    """After ``table`` continued ``record``'s budget: declare again the bounds, categories and per-group
    bounds of the previous version for the columns that still exist and still fit,
    keeping any this version already declares, under this table's unit of privacy."""
    previous = _previous(record, table.identity)
    if previous is None:
        return
    own = table.facts
    locked = ledger().unit(record)  # the unit comes back with the budget; the carried facts must fit it
    unit = own.unit if locked is None else locked_with_bounding(locked.unit, own.unit.bounding)
    kinds = column_types(table.data)  # as the Data page's facts form reads them
    carried = carried_facts(previous.facts, kinds, unit=unit)
    columns = sorted((set(carried.bounds) | set(carried.categories)) - set(own.bounds) - set(own.categories))
    if not columns:
        return
    facts = with_unit(PublicFacts(
        bounds={**{c: carried.bounds[c] for c in columns if c in carried.bounds}, **own.bounds},
        categories={**{c: carried.categories[c] for c in columns if c in carried.categories},
                    **own.categories},
        notes={**{c: n for c, n in carried.notes.items() if c in columns}, **own.notes},
        group_bounds={**{c: g for c, g in carried.group_bounds.items() if c in columns}, **own.group_bounds},
    ), unit)  # fmt: skip
    update_table(table, facts=facts, user=acting_user())
    st.session_state[_CARRIED] = (table.identity, previous.name, columns)


def carried_notice(table: ActiveTable) -> None:
    """Say which facts came from the previous version, until the owner saves the facts of this one."""
    carried = st.session_state.get(_CARRIED)
    if carried is None or carried[0] != table.identity:
        return
    _, name, columns = carried
    st.info(
        f"The bounds and categories of {md(', '.join(columns))} were **carried over from the previous "
        f"version** ({md(name)}). They are public facts declared for this version too: check them and edit "
        "them here before this version's releases spend the budget. The unit of privacy stays locked "
        "with the budget.",
        icon=":material/history:",
    )


def facts_saved() -> None:
    """The owner saved this version's facts: they are now its own."""
    st.session_state.pop(_CARRIED, None)
