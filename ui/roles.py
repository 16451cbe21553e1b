"""The current person's role on a table, as the roles file decides it (``ui.auth``, ``dpdash.access``):
the table as roles see it (its fingerprints and names), and the checks the code that produces what a role
guards makes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ui.ledger_session import ledger

if TYPE_CHECKING:
    from ui.active_table import ActiveTable
from dpdash.access import Action, DatasetRef, Role
from ui import auth

__all__ = ["acting_user", "check", "check_new", "dataset_ref", "ref_for", "role", "table_role"]


# ---- roles: checked where what they guard is produced ------------------------------------------------
def ref_for(identity: str, name: str, read: tuple[str, ...] = ()) -> DatasetRef:
    """A table as the roles file sees it; ``read``: the names of what it reads (a connected source's files
    or resolved table), matched whatever name an owner gives it. The ledger is read only with sign-in (the
    one local owner owns every table)."""
    if not auth.sign_in_on():
        return DatasetRef((identity,), (name, *read))
    record = ledger().find_dataset(identity)
    if record is None:
        return DatasetRef((identity,), (name, *read))
    # Once budgeted, the budget's name (set by an owner, kept in the append-only ledger) is the one matched.
    return DatasetRef((identity, record.fingerprint), (record.name, *read))


def dataset_ref(table: ActiveTable) -> DatasetRef:
    """The active table as the roles file sees it: its fingerprints and its names."""
    return ref_for(table.identity, table.name, () if table.engine is None else table.engine.names)


def role(ref: DatasetRef | None) -> Role | None:
    """The current person's role on a table (``None``: none; ``ref`` ``None``: a table not loaded yet)."""
    return auth.role_of(ref)


def table_role(table: ActiveTable) -> Role | None:
    """The current person's role on ``table``."""
    return role(dataset_ref(table))


def check(ref: DatasetRef | None, action: Action) -> Role:
    """The current person's role on a table if it allows ``action``, else ``AccessDenied``."""
    return auth.check(action, ref)


def check_new(action: Action) -> Role:
    """``check`` for a table not loaded yet (the roles file's top level)."""
    return auth.check(action, None)


def acting_user() -> str:
    """Who acts in this session, as the ledger records it (``Ledger.actions``): every write the app makes
    passes ``user=acting_user()``. The signed-in person's label; without sign-in, "local owner"."""
    user = auth.current_user()
    return "local owner" if user is None or user.local else user.label
