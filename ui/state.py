"""Per-user state: the loaded table and this browser session's ledger handle, in ``st.session_state``.

Nothing here is shared between users (no module globals, no ``st.cache_resource``). The budget itself
lives in the persistent ledger (``dpdash.accounting.Ledger``, an SQLite file), so it survives refreshes
and restarts; the session only keeps a handle to it. The tables the owner chose, their type changes and
declared facts are kept in the workspace beside the ledger (``dpdash.workspace``): a new browser session
(a reload, a server restart) opens the workspace's active table again.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from dpdash.accounting import BudgetStatus, Dataset, Ledger, Session, fingerprint
from dpdash.accounting.actions import short
from dpdash.accounting.versions import RecordedUnit
from dpdash.datasets import EXAMPLES, PublicFacts, load_example
from dpdash.engines import Source, SourceSpec
from dpdash.engines import evaluate as evaluate_in_engine
from dpdash.errors import DPDashError
from dpdash.facts import Facts
from dpdash.loading import coerce_column, load_table
from dpdash.queries import Evaluation, Query
from dpdash.release import dataset_fingerprint
from dpdash.workspace import StoredTable, Workspace
from ui.text import md

_DATASET = "dpdash_dataset"
_LEDGER = "dpdash_ledger"
_SESSION = "dpdash_ledger_session"
_EVALUATIONS = "dpdash_evaluations"
_EVALUATIONS_KEPT = 16
_WORKSPACE = "dpdash_workspace"
_NOTICES = "dpdash_workspace_notices"
DEFAULT_EXAMPLE = "patients"
T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class ActiveTable:
    """The table this session works on, with its declared public facts.

    ``identity`` is the key its budget is kept under (``dpdash.accounting.fingerprint`` of the table as
    first loaded: the same whatever types are chosen later); ``fingerprint`` is the exact table as it is now
    (``dataset_fingerprint``, what a release record states); ``coercions`` are the type changes applied
    since loading, in order, as (column, kind), with ``lossy`` whether values that did not convert became
    missing.

    A connected table (Parquet files, a DuckDB file, PostgreSQL, Spark) stays where it lives: ``engine`` is
    its open ``dpdash.engines.Source``, ``connection`` where it lives (no password), ``data`` only the
    owner's sample of its first rows, and ``row_count`` the engine's count; both fingerprints are the
    source's ``fingerprint()``.
    """

    name: str
    source: str
    data: pd.DataFrame
    facts: PublicFacts
    fingerprint: str
    identity: str
    coercions: tuple[tuple[str, str], ...] = ()
    lossy: bool = False
    engine: Source | None = None
    connection: SourceSpec | None = None
    row_count: int | None = None

    @property
    def rows(self) -> int:
        """The table's number of rows (the engine's count for a connected table)."""
        return len(self.data) if self.row_count is None else self.row_count

    @property
    def queryable(self) -> pd.DataFrame | Source:
        """What queries and releases run on: the DataFrame, or the connected source."""
        return self.data if self.engine is None else self.engine


@st.cache_data(show_spinner="Loading the example…", max_entries=4)
def _example(name: str) -> tuple[pd.DataFrame, PublicFacts, str, str, str]:
    example = load_example(name)
    data = example.data
    return data, example.facts, example.title, dataset_fingerprint(data), fingerprint(data)


def acting_user() -> str:
    """Who acts in this session, as the ledger records it (``Ledger.actions``): every write the app makes
    passes ``user=acting_user()``. Single-user mode: "local owner"."""
    return "local owner"


def _record(action: str, user: str | None, identity: str, **details: Any) -> None:
    """Record in the ledger's log what the app did that the ledger cannot see (a load, a connection, saved
    facts), when a ``user`` did it; a ledger that cannot record it is a notice, the table is kept."""
    if user is not None:
        _try(lambda: ledger().record_action(action, user=user, dataset=identity, details=details))


def use_example(name: str, *, persist: bool = True, user: str | None = None) -> ActiveTable:
    """Make a built-in example the active table (and, with ``persist``, the workspace's active one; the
    facts declared for it before are kept); with ``user``, a "load" action is recorded."""
    data, facts, title, digest, identity = _example(name)
    stored = _try(lambda: workspace().table(identity))
    if stored is not None:
        facts = stored.facts
    table = ActiveTable(title, f"built-in example '{name}'", data, facts, digest, identity)
    st.session_state[_DATASET] = table
    _record("load", user, identity, name=short(title), source=table.source, rows=len(data))
    if persist:
        _try(lambda: (workspace().store_example(identity, example=name, name=title, facts=facts),
                      workspace().set_active(identity)))  # fmt: skip
    return table


def example_identities() -> dict[str, str]:
    """identity → example name, for every built-in example."""
    return {_example(name)[4]: name for name in EXAMPLES}


def use_table(
    name: str,
    source: str,
    data: pd.DataFrame,
    facts: PublicFacts,
    *,
    identity: str | None = None,
    coercions: tuple[tuple[str, str], ...] = (),
    lossy: bool = False,
    raw: bytes | None = None,
    filename: str = "",
    user: str | None = None,
) -> ActiveTable:
    """Make an uploaded (or edited) table the active one; ``identity`` is the loaded table's (computed
    here when None: a new load). ``raw`` (a new upload's bytes, with its ``filename``) is kept in the
    workspace; for a table already there, its facts and type changes are updated. With ``user``, a "load"
    action is recorded."""
    identity = fingerprint(data) if identity is None else identity
    table = ActiveTable(name, source, data, facts, dataset_fingerprint(data), identity, coercions, lossy)
    st.session_state[_DATASET] = table
    _record("load", user, identity, name=short(name), source=short(source), rows=len(data))
    ws = workspace()
    if raw is not None:
        _try(lambda: ws.store_upload(identity, filename=filename or name, name=name, data=raw))
    if _try(lambda: ws.table(identity)) is not None:
        _try(lambda: (ws.update(identity, name=name, facts=facts, coercions=coercions, lossy=lossy),
                      ws.set_active(identity)))  # fmt: skip
    return table


def active_table() -> ActiveTable:
    """The active table: this session's; else the workspace's active one (a reload, a restart); else the
    synthetic patients example."""
    table = st.session_state.get(_DATASET)
    if table is not None:
        return table
    stored = _try(lambda: workspace().active())
    if stored is not None:
        with st.spinner(f"Opening {md(stored.name)} from the workspace…"):  # a large upload takes seconds
            restored = _try(lambda: restore(stored))
        if restored is not None:
            return restored
    return use_example(DEFAULT_EXAMPLE, persist=False)


#: Rows of a connected table shown to its owner (NOT PRIVATE), and what column kinds are guessed from.
SAMPLE_ROWS = 200


def use_connection(spec: SourceSpec, source: Source, *, user: str | None = None) -> ActiveTable:
    """Make a connected table the active one (and the workspace's: where it lives, never a password). The
    same source connected again keeps its name and declared facts. With ``user``, a "connect" action is
    recorded (where it lives, never a password)."""
    identity = source.fingerprint()
    rows = source.row_count()
    sample = source.head(SAMPLE_ROWS)
    before = _try(lambda: workspace().table(identity))
    fallback = spec.table.strip() or Path(spec.path.strip()).name or spec.path
    name = before.name if before is not None else fallback
    facts = before.facts if before is not None else PublicFacts(unit=Facts())
    previous = st.session_state.get(_DATASET)
    if previous is not None and previous.engine is not None and previous.engine is not source:
        previous.engine.close()  # one open connection per session
    table = ActiveTable(name, spec.describe(), sample, facts, identity, identity, engine=source,
                        connection=spec, row_count=rows)  # fmt: skip
    st.session_state[_DATASET] = table
    _record("connect", user, identity, name=short(name), source=short(spec.describe()), rows=rows)
    _try(lambda: (workspace().store_connection(identity, connection=spec, name=name),
                  workspace().set_active(identity)))  # fmt: skip
    return table


def update_table(
    table: ActiveTable, *, name: str | None = None, facts: PublicFacts | None = None, user: str | None = None
) -> ActiveTable:
    """The active table with a new owner-given name or declared facts, kept in the session and the
    workspace (the data, its identity and its connection are unchanged). With ``user``, a "facts" action
    is recorded (the unit of privacy, how many columns have bounds and categories; never their values)."""
    changed = dataclasses.replace(table, name=table.name if name is None else name,
                                  facts=table.facts if facts is None else facts)  # fmt: skip
    st.session_state[_DATASET] = changed
    declared, unit = changed.facts, short(changed.facts.unit.describe(), 300)
    _record("facts", user, table.identity, name=short(changed.name), unit=unit, bounds=len(declared.bounds),
            categories=len(declared.categories))  # fmt: skip
    ws = workspace()
    if _try(lambda: ws.table(table.identity)) is not None:
        _try(lambda: (ws.update(table.identity, name=changed.name, facts=changed.facts),
                      ws.set_active(table.identity)))  # fmt: skip
    return changed


def restore(stored: StoredTable) -> ActiveTable:
    """Open a table kept in the workspace: an example is rebuilt, an upload re-read from its bytes with its
    type changes applied again, a connected table opened where it lives; the same identity, and the facts
    declared for it.

    Raises:
        DPDashError: the stored file cannot be read, the source cannot be opened (a PostgreSQL password is
            never kept: connect again), or it no longer gives the same table.
    """
    if stored.example is not None:
        table = use_example(stored.example)
        return table
    if stored.connection is not None:
        try:
            source = stored.connection.open()
        except DPDashError as error:
            raise DPDashError(
                f"{stored.name!r} could not be opened again ({error}): connect it again on the Data page "
                "(a PostgreSQL password is never kept; give it again, or keep it in a ~/.pgpass file)"
            ) from None
        if source.fingerprint() != stored.identity:
            source.close()
            raise DPDashError(
                f"{stored.name!r} ({stored.connection.describe()}) has changed since it was connected (its "
                "files, columns or row count): connect it again on the Data page; a changed table is checked "
                "against the budgets in the ledger there"
            )
        return use_connection(stored.connection, source)
    loaded = load_table(workspace().source_bytes(stored.identity), stored.filename)
    if fingerprint(loaded.data) != stored.identity:
        raise DPDashError(
            f"the stored file of {stored.name!r} no longer gives the table its budget was set for; "
            "upload it again"
        )
    data = loaded.data
    for column, kind in stored.coercions:
        data = coerce_column(data, column, kind, drop_invalid=stored.lossy)
    return use_table(
        stored.name, f"upload '{stored.filename}'", data, stored.facts, identity=stored.identity,
        coercions=stored.coercions, lossy=stored.lossy,
    )  # fmt: skip


def workspace() -> Workspace:
    """The workspace ($DPDASH_WORKSPACE, or beside the ledger)."""
    handle = st.session_state.get(_WORKSPACE)
    if handle is None:
        handle = Workspace()
        st.session_state[_WORKSPACE] = handle
    return handle


def _try(action: Callable[[], T]) -> T | None:
    """Run a workspace step; a problem becomes a notice for the page (the session's table is kept)."""
    try:
        return action()
    except DPDashError as error:
        notices: list[str] = st.session_state.setdefault(_NOTICES, [])
        if str(error) not in notices:
            notices.append(str(error))
        return None


def workspace_notices() -> list[str]:
    """The workspace problems met in this session, once each (cleared when read)."""
    return st.session_state.pop(_NOTICES, [])


def forget(table: ActiveTable) -> bool:
    """Delete the table's files from the workspace (its budget history stays in the ledger)."""
    return bool(_try(lambda: workspace().forget(table.identity)))


def stored(table: ActiveTable) -> StoredTable | None:
    """The workspace's record of the table, or None."""
    return _try(lambda: workspace().table(table.identity))


def ledger() -> Ledger:
    """This session's handle on the persistent ledger ($DPDASH_LEDGER, a file or a postgresql:// URL, or
    the default file)."""
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


def registered_or_stop(table: ActiveTable) -> Dataset | None:
    """``registered(table)``; a ledger that cannot be read ends the page with its message (never a
    traceback), the session's table kept."""
    try:
        return registered(table)
    except DPDashError as error:
        st.error(f"The budget ledger cannot be read: {md(error)}", icon=":material/error:")
        st.stop()


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
    )


def aligned_table() -> tuple[ActiveTable, bool]:
    """The active table, its unit of privacy made the one recorded with its budget if they differ (and
    whether that was needed): widgets and queries always use the locked unit."""
    table = active_table()
    locked = recorded_unit(table)
    if locked is None or locked.unit == table.facts.unit:
        return table, False
    return update_table(table, facts=with_unit(table.facts, locked.unit)), True


def widget_suffix(table: ActiveTable) -> str:
    """A key suffix for the widgets that show a table's facts: another table, or a unit of privacy set
    from elsewhere (saved, restored, locked by the ledger), gets fresh widgets that show those facts,
    never values left from before (Streamlit keeps a keyed widget's value over its ``value=``)."""
    unit = table.facts.unit.to_dict()
    return hashlib.sha256(f"{table.fingerprint}|{sorted(unit.items())}".encode()).hexdigest()[:16]


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
        cache[key] = evaluate_in_engine(query, table.queryable)
    return cache[key]
