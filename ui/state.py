"""Per-user state: the loaded table and this browser session's ledger handle, in ``st.session_state``.

Nothing here is shared between users (no module globals, no ``st.cache_resource``). The budget itself
lives in the persistent ledger (``dpdash.accounting.Ledger``, an SQLite file), so it survives refreshes
and restarts; the session only keeps a handle to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dpdash.accounting import BudgetStatus, Dataset, Ledger, Session, fingerprint
from dpdash.datasets import PublicFacts, load_example
from dpdash.queries import Evaluation, Query
from dpdash.release import dataset_fingerprint

_DATASET = "dpdash_dataset"
_LEDGER = "dpdash_ledger"
_SESSION = "dpdash_ledger_session"
_EVALUATIONS = "dpdash_evaluations"
_EVALUATIONS_KEPT = 16
DEFAULT_EXAMPLE = "patients"


@dataclass(frozen=True, eq=False)
class ActiveTable:
    """The table this session works on, with its declared public facts.

    ``identity`` is the key its budget is kept under (``dpdash.accounting.fingerprint`` of the table as
    first loaded: the same whatever types are chosen later); ``fingerprint`` is the exact table as it is now
    (``dataset_fingerprint``, what a release record states); ``coercions`` are the type changes applied
    since loading, in order, as (column, kind), with ``lossy`` whether values that did not convert became
    missing.
    """

    name: str
    source: str
    data: pd.DataFrame
    facts: PublicFacts
    fingerprint: str
    identity: str
    coercions: tuple[tuple[str, str], ...] = ()
    lossy: bool = False


@st.cache_data(show_spinner="Loading the example…", max_entries=4)
def _example(name: str) -> tuple[pd.DataFrame, PublicFacts, str, str, str]:
    example = load_example(name)
    data = example.data
    return data, example.facts, example.title, dataset_fingerprint(data), fingerprint(data)


def use_example(name: str) -> ActiveTable:
    """Make a built-in example the active table."""
    data, facts, title, digest, identity = _example(name)
    table = ActiveTable(title, f"built-in example '{name}'", data, facts, digest, identity)
    st.session_state[_DATASET] = table
    return table


def use_table(
    name: str,
    source: str,
    data: pd.DataFrame,
    facts: PublicFacts,
    *,
    identity: str | None = None,
    coercions: tuple[tuple[str, str], ...] = (),
    lossy: bool = False,
) -> ActiveTable:
    """Make an uploaded (or edited) table the active one; ``identity`` is the loaded table's (computed
    here when None: a new load)."""
    identity = fingerprint(data) if identity is None else identity
    table = ActiveTable(name, source, data, facts, dataset_fingerprint(data), identity, coercions, lossy)
    st.session_state[_DATASET] = table
    return table


def active_table() -> ActiveTable:
    """The active table; the synthetic patients example until the person picks another."""
    table = st.session_state.get(_DATASET)
    return table if table is not None else use_example(DEFAULT_EXAMPLE)


def ledger() -> Ledger:
    """This session's handle on the persistent ledger (path: $DPDASH_LEDGER or the default)."""
    handle = st.session_state.get(_LEDGER)
    if handle is None:
        handle = Ledger()
        st.session_state[_LEDGER] = handle
    return handle


def ledger_session() -> Session:
    """This browser session's entry in the ledger (releases are attributed to it)."""
    session = st.session_state.get(_SESSION)
    if session is None:
        session = ledger().start_session("dpdash app")
        st.session_state[_SESSION] = session
    return session


def registered(table: ActiveTable) -> Dataset | None:
    """The ledger's record of this table (its budget and accountant), or None before a budget is set."""
    return ledger().find_dataset(table.identity)


def budget_status(table: ActiveTable) -> BudgetStatus | None:
    record = registered(table)
    return None if record is None else ledger().status(record)


def evaluate(table: ActiveTable, query: Query) -> Evaluation:
    """The query's true answer and report on the table (NOT PRIVATE), computed once per (table, query)
    and kept in this session only: reruns that change ε or the mechanism do not rescan the table."""
    cache: dict[tuple[str, str], Evaluation] = st.session_state.setdefault(_EVALUATIONS, {})
    key = (table.fingerprint, repr(query.to_dict()))
    if key not in cache:
        if len(cache) >= _EVALUATIONS_KEPT:
            cache.pop(next(iter(cache)))
        cache[key] = query.evaluate(table.data)
    return cache[key]
