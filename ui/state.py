"""Per-user state: the loaded table and this browser session's ledger handle, in ``st.session_state``.

Nothing here is shared between users (no module globals, no ``st.cache_resource``). The budget itself
lives in the persistent ledger (``dpdash.ledger.Ledger``, an SQLite file), so it survives refreshes
and restarts; the session only keeps a handle to it. The tables the owner chose, their type changes and
declared facts are kept in the workspace beside the ledger (``dpdash.workspace``): a new browser session
(a reload, a server restart) opens the workspace's active table again.

Roles (``ui.auth``, ``dpdash.access``) are checked here, in the code that produces what they guard, not only
by the pages that hide a button: the true answers (``evaluate``), the rows (``sample_rows``,
``table_rows``), the row count (``row_count``), loading and connecting (``use_example``, ``use_table``,
``use_connection``, ``forget``), the facts (``update_table``), the ledger's records (``owner_ledger``) and
every release (``draw_release``, ``record_release``). Without sign-in the one local owner passes them all.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from dpdash.access import Action, DatasetRef, Role
from dpdash.datasets import EXAMPLES, PublicFacts, load_example
from dpdash.engines import Source, SourceSpec
from dpdash.errors import AccessDenied, DPDashError
from dpdash.facts import Facts
from dpdash.ledger import BudgetStatus, Dataset, fingerprint
from dpdash.ledger.actions import short
from dpdash.loading import coerce_column, load_table
from dpdash.release import dataset_fingerprint
from dpdash.workspace import StoredTable, Workspace
from ui import auth
from ui.active_table import ActiveTable
from ui.ledger_session import (
    ledger,
    locked_with_bounding,
    recorded_unit,
    registered,
    with_unit,
)
from ui.roles import check, check_new, dataset_ref, ref_for, role
from ui.text import md

_DATASET = "dpdash_dataset"
_WORKSPACE = "dpdash_workspace"
_NOTICES = "dpdash_workspace_notices"
DEFAULT_EXAMPLE = "patients"
T = TypeVar("T")


@st.cache_data(show_spinner="Loading the example…", max_entries=4)
def _example(name: str) -> tuple[pd.DataFrame, PublicFacts, str, str, str]:
    example = load_example(name)
    data = example.data
    return data, example.facts, example.title, dataset_fingerprint(data), fingerprint(data)


def _record(action: str, user: str | None, identity: str, **details: Any) -> None:
    """Record in the ledger's log what the app did that the ledger cannot see (a load, a connection, saved
    facts), when a ``user`` did it; a ledger that cannot record it is a notice, the table is kept."""
    if user is not None:
        _try(lambda: ledger().record_action(action, user=user, dataset=identity, details=details))


def use_example(name: str, *, persist: bool = True, user: str | None = None) -> ActiveTable:
    """Make a built-in example the active table (and, with ``persist``, the workspace's active one; the
    facts declared for it before are kept). Loading one (``persist``) is for owners (``AccessDenied``); with
    ``user``, a "load" action is recorded."""
    if persist:
        check_new(Action.LOAD)
        _, _, title, _, identity = _example(name)
        check(ref_for(identity, title), Action.LOAD)
    return _use_example(name, persist=persist, user=user)


def _use_example(name: str, *, persist: bool, user: str | None = None) -> ActiveTable:
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


def open_example(name: str) -> ActiveTable:
    """Open a built-in example for anyone with a role on it (the workspace's active table only for an
    owner)."""
    _, _, title, _, identity = _example(name)
    persist = check(ref_for(identity, title), Action.OPEN) is Role.OWNER
    return _use_example(name, persist=persist)


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
    workspace; for a table already there, its facts and type changes are updated. For owners only
    (``AccessDenied``): of new tables, and of this one. With ``user``, a "load" action is recorded."""
    if raw is not None or identity is None:
        check_new(Action.LOAD)
    identity = fingerprint(data) if identity is None else identity
    check(ref_for(identity, name), Action.LOAD)
    return _use_table(name, source, data, facts, identity=identity, coercions=coercions, lossy=lossy, raw=raw,
                      filename=filename, user=user)  # fmt: skip


def _use_table(
    name: str,
    source: str,
    data: pd.DataFrame,
    facts: PublicFacts,
    *,
    identity: str,
    coercions: tuple[tuple[str, str], ...] = (),
    lossy: bool = False,
    raw: bytes | None = None,
    filename: str = "",
    persist: bool = True,
    user: str | None = None,
) -> ActiveTable:
    table = ActiveTable(name, source, data, facts, dataset_fingerprint(data), identity, coercions, lossy)
    st.session_state[_DATASET] = table
    _record("load", user, identity, name=short(name), source=short(source), rows=len(data))
    ws = workspace()
    if raw is not None:
        _try(lambda: ws.store_upload(identity, filename=filename or name, name=name, data=raw))
    if persist and _try(lambda: ws.table(identity)) is not None:
        _try(lambda: (ws.update(identity, name=name, facts=facts, coercions=coercions, lossy=lossy),
                      ws.set_active(identity)))  # fmt: skip
    return table


def active_table() -> ActiveTable:
    """The active table: this session's; else the workspace's active one (a reload, a restart); else the
    synthetic patients example. With sign-in, only a table the person has a role on: else the first such
    table of the workspace, else the example.

    Raises:
        AccessDenied: with sign-in, the person has a role on none of them.
    """
    table = st.session_state.get(_DATASET)
    if table is not None:
        return table
    stored = _try(lambda: workspace().active())
    if stored is not None and auth.sign_in_on() and role(_stored_ref(stored)) is None:
        kept = _try(lambda: workspace().tables()) or []
        stored = next((t for t in kept if role(_stored_ref(t)) is not None), None)
    if stored is not None:
        with st.spinner(f"Opening {md(stored.name)} from the workspace…"):  # a large upload takes seconds
            restored = _try(lambda: restore(stored))
        if restored is not None:
            return restored
    if auth.sign_in_on():
        _, _, title, _, identity = _example(DEFAULT_EXAMPLE)
        check(ref_for(identity, title), Action.OPEN)
    return _use_example(DEFAULT_EXAMPLE, persist=False)


def leave_table() -> None:
    """Forget this session's table (its connection closed): the next ``active_table`` chooses again."""
    table = st.session_state.pop(_DATASET, None)
    if table is not None and table.engine is not None:
        table.engine.close()


#: Rows of a connected table shown to its owner (NOT PRIVATE), and what column kinds are guessed from.
SAMPLE_ROWS = 200


def use_connection(spec: SourceSpec, source: Source, *, user: str | None = None) -> ActiveTable:
    """Make a connected table the active one (and the workspace's: where it lives, never a password). The
    same source connected again keeps its name and declared facts. For owners only (``AccessDenied``,
    checked before anything of the table is read). With ``user``, a "connect" action is recorded (where it
    lives, never a password)."""
    check_new(Action.LOAD)
    identity = source.fingerprint()
    # The names of what is read (its files, the table the database resolved), not only the spelling typed.
    check(ref_for(identity, spec.table.strip() or spec.path, source.names), Action.LOAD)
    return _use_connection(spec, source, identity=identity, user=user)


def _use_connection(
    spec: SourceSpec, source: Source, *, identity: str, persist: bool = True, user: str | None = None
) -> ActiveTable:
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
    if persist:
        _try(lambda: (workspace().store_connection(identity, connection=spec, name=name, names=source.names),
                      workspace().set_active(identity)))  # fmt: skip
    return table


def update_table(
    table: ActiveTable, *, name: str | None = None, facts: PublicFacts | None = None, user: str | None = None
) -> ActiveTable:
    """The active table with a new owner-given name or declared facts, kept in the session and the
    workspace (the data, its identity and its connection are unchanged). For owners (``AccessDenied``).
    With ``user``, a "facts" action is recorded (the unit of privacy, how many columns have bounds and
    categories; never their values)."""
    check(dataset_ref(table), Action.DECLARE)
    return _update_table(table, name=name, facts=facts, user=user)


def _update_table(
    table: ActiveTable,
    *,
    name: str | None = None,
    facts: PublicFacts | None = None,
    persist: bool = True,
    user: str | None = None,
) -> ActiveTable:
    changed = dataclasses.replace(table, name=table.name if name is None else name,
                                  facts=table.facts if facts is None else facts)  # fmt: skip
    st.session_state[_DATASET] = changed
    declared, unit = changed.facts, short(changed.facts.unit.describe(), 300)
    _record("facts", user, table.identity, name=short(changed.name), unit=unit, bounds=len(declared.bounds),
            categories=len(declared.categories))  # fmt: skip
    ws = workspace()
    if persist and _try(lambda: ws.table(table.identity)) is not None:
        _try(lambda: (ws.update(table.identity, name=changed.name, facts=changed.facts),
                      ws.set_active(table.identity)))  # fmt: skip
    return changed


def restore(stored: StoredTable) -> ActiveTable:
    """Open a table kept in the workspace: an example is rebuilt, an upload re-read from its bytes with its
    type changes applied again, a connected table opened where it lives; the same identity, and the facts
    declared for it.

    Raises:
        AccessDenied: the person has no role on it (it is made the workspace's active table only by an
            owner).
        DPDashError: the stored file cannot be read, the source cannot be opened (a PostgreSQL password is
            never kept: connect again), or it no longer gives the same table.
    """
    persist = check(_stored_ref(stored), Action.OPEN) is Role.OWNER
    if stored.example is not None:
        return _use_example(stored.example, persist=persist)
    if stored.connection is not None:
        try:
            source = stored.connection.open()
        except DPDashError as error:
            raise DPDashError(
                f"{stored.name!r} could not be opened again ({error}): connect it again on the Data page "
                "(a PostgreSQL password is never kept: give it again)"
            ) from None
        try:  # the roles of what it reads now (a rule may name one of its files)
            persist = check(ref_for(stored.identity, stored.name, source.names), Action.OPEN) is Role.OWNER
        except AccessDenied:
            source.close()
            raise
        if source.fingerprint() != stored.identity:
            source.close()
            raise DPDashError(
                f"{stored.name!r} ({stored.connection.describe()}) has changed since it was connected (its "
                "files, columns or row count): connect it again on the Data page; a changed table is checked "
                "against the budgets in the ledger there"
            )
        return _use_connection(stored.connection, source, identity=stored.identity, persist=persist)
    loaded = load_table(workspace().source_bytes(stored.identity), stored.filename)
    if fingerprint(loaded.data) != stored.identity:
        raise DPDashError(
            f"the stored file of {stored.name!r} no longer gives the table its budget was set for; "
            "upload it again"
        )
    data = loaded.data
    for column, kind in stored.coercions:
        data = coerce_column(data, column, kind, drop_invalid=stored.lossy)
    return _use_table(
        stored.name, f"upload '{stored.filename}'", data, stored.facts, identity=stored.identity,
        coercions=stored.coercions, lossy=stored.lossy, persist=persist,
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
    """Delete the table's files from the workspace (its budget history stays in the ledger). Owners only."""
    check(dataset_ref(table), Action.LOAD)
    return bool(_try(lambda: workspace().forget(table.identity)))


def stored(table: ActiveTable) -> StoredTable | None:
    """The workspace's record of the table, or None."""
    return _try(lambda: workspace().table(table.identity))


def aligned_table() -> tuple[ActiveTable, bool]:
    """The active table, its unit of privacy made the one recorded with its budget if they differ (and
    whether that was needed): widgets and queries always use the locked unit."""
    table = active_table()
    locked = recorded_unit(table)
    if locked is None or locked.unit == table.facts.unit.unit_only:
        return table, False
    # The ledger's unit is the one in force for everyone; only an owner's session writes it back. How c
    # is enforced (sampled or weighted rows) is not part of it, and stays the table's.
    owner = role(dataset_ref(table)) is Role.OWNER
    unit = locked_with_bounding(locked.unit, table.facts.unit.bounding)
    return _update_table(table, facts=with_unit(table.facts, unit), persist=owner), True


def widget_suffix(table: ActiveTable) -> str:
    """A key suffix for the widgets that show a table's facts: another table, or a unit of privacy set
    from elsewhere (saved, restored, locked by the ledger), gets fresh widgets that show those facts,
    never values left from before (Streamlit keeps a keyed widget's value over its ``value=``)."""
    unit = table.facts.unit.to_dict()
    return hashlib.sha256(f"{table.fingerprint}|{sorted(unit.items())}".encode()).hexdigest()[:16]


def budget_status(table: ActiveTable) -> BudgetStatus | None:
    record = registered(table)
    return None if record is None else ledger().status(record)


def _stored_ref(stored: StoredTable) -> DatasetRef:
    return ref_for(stored.identity, stored.name, stored.names)


def dataset_role(record: Dataset) -> Role | None:
    """The current person's role on a budgeted dataset of the ledger (its fingerprint and name)."""
    if not auth.sign_in_on():
        return role(None)
    kept = _try(lambda: workspace().table(record.fingerprint))  # a connected table's names, kept at Connect
    return role(DatasetRef((record.fingerprint,), (record.name, *(kept.names if kept is not None else ()))))


def allowed(table: ActiveTable, action: Action) -> bool:
    """Whether the current person's role on ``table`` allows ``action`` (to choose what to draw; the code
    that does it checks again)."""
    try:
        check(dataset_ref(table), action)
    except AccessDenied:
        return False
    return True


def may_load() -> bool:
    """Whether the current person may load or connect a new table."""
    try:
        check_new(Action.LOAD)
    except AccessDenied:
        return False
    return True


def sample_rows(table: ActiveTable, n: int = SAMPLE_ROWS) -> pd.DataFrame:
    """The table's first ``n`` rows (NOT PRIVATE: for owners only, ``AccessDenied``)."""
    check(dataset_ref(table), Action.SEE_TRUTH)
    return table.data.head(n)


def table_rows(table: ActiveTable) -> pd.DataFrame:
    """Every row of an in-memory table (the audit of a query on it; NOT PRIVATE: owners only)."""
    check(dataset_ref(table), Action.SEE_TRUTH)
    return table.data


def row_count(table: ActiveTable) -> int | None:
    """The table's number of rows for an owner; ``None`` for anyone else (a count is a true answer), and
    when the role cannot be read (the ledger's problem is shown where it is read)."""
    try:
        return table.rows if allowed(table, Action.SEE_TRUTH) else None
    except DPDashError:
        return None


def table_caption(table: ActiveTable, more: str = "") -> None:
    """The page's line under its title: the table's name, its rows (owner only: ``row_count``) and whom
    its budget protects, then ``more`` (Markdown, already escaped)."""
    from dpdash.wording import protected_unit

    rows = row_count(table)
    st.caption(
        f"Table: **{md(table.name)}**{'' if rows is None else f' · {rows:,} rows'} · protects "
        f"{md(protected_unit(table.facts.unit))}{more}"
    )
