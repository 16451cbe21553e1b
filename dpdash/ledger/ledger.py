"""The persistent privacy-budget ledger: append-only, one transaction per spend, budget rules written once.

Where it lives: the location given to ``Ledger(location)``; else the ``DPDASH_LEDGER`` environment variable;
else ``$XDG_DATA_HOME/dpdash/ledger.sqlite``, or ``~/.local/share/dpdash/ledger.sqlite`` when
``XDG_DATA_HOME`` is unset (``default_ledger_location()``). The storage (``storage``) is an SQLite file
(``storage.sqlite``: its folder created 0700, the file's safety in ``ledger_file``), or, for a location
``postgresql://user@host:port/database``, a PostgreSQL database that many processes and machines share
(``storage.postgres``: the password from the URL or libpq's ``PGPASSWORD``/``~/.pgpass``, never shown).

What it holds: datasets (a content fingerprint, a name, a total budget (ε, δ) and the accountant that
keeps it, fixed at registration), sessions, and release entries (the event as JSON, the query, the
mechanism, the time, the session), and (schema 2, ``versions``) the unit of privacy recorded with a
budget, the versions that continue a budget and the owner's statements of a different population,
(schema 3, ``published``) the values each release published, (schema 4, ``request_ids``) the request
ids that make a release request sent again spend once, and (schema 5) the log of who did what
(``actions``: every write records its action, by its ``user=``, in its own transaction) and the release
requests an analyst makes and the owner approves or declines (``release_requests``). None of it can be
changed or deleted: the storage's triggers refuse it, so the history is append-only even for other clients
of the database; and (schema 6) every history table's rows are counted as they are added, so a ledger
that lost rows (deleted with the triggers switched off) is refused when opened. An older ledger is
upgraded when opened (new tables and triggers; nothing old changed).

This module holds the rules; the storage only runs its SQL. A spend is one write transaction: it locks the
dataset (``Store.lock_dataset``: in PostgreSQL its row, ``FOR UPDATE``; in SQLite, ``BEGIN IMMEDIATE`` has
taken the file's one write lock), re-reads the dataset's entries, checks the total with the new release under
the dataset's accountant, and records the entry, or refuses with ``BudgetExceededError`` and records nothing.
The expensive part, composing the history, is done before the lock from a read snapshot; under it only what
was added since is composed (``running``). Only the transaction holding the lock can spend, so concurrent
spends (two browser tabs, twenty processes) never overspend; a process killed mid-spend leaves no partial
entry (the transaction is rolled back). ``spend`` returns after the commit: hand out noisy values only after
it returns.

A storage that is not a dpdash ledger (another database, random bytes, a corrupted or truncated ledger, one
written by a newer dpdash) is refused with a ``LedgerError`` before anything is written to it. Exports
(``exports``) are signed with the ledger's Ed25519 key (``signing``), and an import only ever makes a
dataset's record more conservative (``import_json``).

>>> import tempfile, pathlib
>>> from dpdash import Laplace
>>> with tempfile.TemporaryDirectory() as folder, Ledger(pathlib.Path(folder) / "ledger.sqlite") as ledger:
...     ds = ledger.add_dataset(name="patients", fingerprint=fingerprint(b"id,age\\n1,40\\n"),
...                             budget=Budget(epsilon=1.0), accountant="basic")
...     entry = ledger.spend(ds, event_for(Laplace(epsilon=0.25, sensitivity=1.0), query="count"))
...     ledger.remaining(ds)
0.75
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from dpdash import _validation as check
from dpdash.accounting import running
from dpdash.accounting.accountant import PrivacyTotal
from dpdash.accounting.events import (
    PrivacyEvent,
    canonical_json,
    event_for,
    event_from_dict,
    events_for_release,
)
from dpdash.accounting.registry import ACCOUNTANT_NAMES, get_accountant
from dpdash.errors import (
    BudgetExceededError,
    DPDashError,
    LedgerError,
    ParameterError,
    ParameterTypeError,
    UnsupportedEventError,
)
from dpdash.ledger.actions import (
    APP_ACTIONS,
    details_of,
    insert_actions,
    new_action,
    read_actions,
    short,
    user_label,
)
from dpdash.ledger.exports import (
    EXPORT_FORMAT,
)
from dpdash.ledger.location import default_ledger_location, default_ledger_path, local_data_folder
from dpdash.ledger.published import (
    insert_published,
    read_published,
    record_of,
)
from dpdash.ledger.records import (
    DATASET_COLUMNS,
    INSERT_DATASET,
    INSERT_ENTRY,
    Action,
    Budget,
    BudgetStatus,
    Dataset,
    Entry,
    ImportReport,
    RequestRecord,
    Session,
    entry_row,
)
from dpdash.ledger.records import now as _now
from dpdash.ledger.records import text as _text
from dpdash.ledger.release_requests import (
    MAX_REASON,
    MAX_WAITING,
    STATUSES,
    insert_decision,
    insert_release_request,
    planned_release,
    query_label,
    read_release_requests,
    same_release,
    waiting_of,
)
from dpdash.ledger.request_ids import insert_request, read_request, request_id_of
from dpdash.ledger.storage import open_store
from dpdash.ledger.storage.base import SCHEMA_VERSION, Connection, Store
from dpdash.ledger.transfer import Transfer
from dpdash.ledger.versions import (
    DistinctPopulation,
    LookAlike,
    RecordedUnit,
    Version,
    columns_tuple,
    insert_distinct,
    insert_unit,
    insert_version,
    read_distinct,
    read_unit,
    read_versions,
    resolve,
    row_count,
    shapes,
    unit_mismatch,
    unit_of,
)

__all__ = [
    "EXPORT_FORMAT",
    "SCHEMA_VERSION",
    "Action",
    "Budget",
    "BudgetStatus",
    "Dataset",
    "Entry",
    "ImportReport",
    "Ledger",
    "RequestRecord",
    "Session",
    "default_ledger_location",
    "default_ledger_path",
    "fingerprint",
    "local_data_folder",
]

DEFAULT_ACCOUNTANT = "tightest"

# Tests set this to pause a spend after its entry is written and before the commit (to kill the process
# there). It is called with the write lock held.
_before_commit: Callable[[], None] | None = None

def fingerprint(data: Any) -> str:
    """A dataset's identity, ``"sha256:<hex>"``: the key its budget is kept under.

    A DataFrame gets ``dpdash.identity.content_fingerprint``: the same rows give the same identity whatever
    their order, the columns' order, the file's format or the columns' types, so the budget follows the
    people in the table, not how it was read. Bytes (a file) get their SHA-256.

    >>> fingerprint(b"abc")
    'sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        return "sha256:" + hashlib.sha256(bytes(data)).hexdigest()
    if hasattr(data, "columns") and hasattr(data, "dtypes"):
        from dpdash.identity import content_fingerprint

        return content_fingerprint(data)
    raise ParameterTypeError(f"data must be bytes or a pandas DataFrame, got {type(data).__name__}")


class Ledger(Transfer):
    """The budget ledger (see the module docstring for where and how).

    Args:
        path: the ledger's location: a file path (SQLite) or a ``postgresql://`` URL (PostgreSQL);
            ``None`` for ``default_ledger_location()``.
        timeout: seconds to wait for another process's lock before giving up.

    Raises:
        LedgerError: the storage exists but is not a dpdash ledger this version can read (it is left as it
            was), or cannot be reached.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, timeout: float = 60.0) -> None:
        self._timeout = check.positive_finite(timeout, "timeout")
        self._store: Store = open_store(default_ledger_location() if path is None else path, timeout=timeout)
        self._where = self._store.location
        # Entries are immutable, so parsed ones are cached per dataset id: (last entry id, entries).
        self._cache: dict[int, tuple[int, list[Entry]]] = {}

    def _need_schema(self, version: int, doing: str) -> None:
        if self._store.schema < version:
            raise LedgerError(
                f"cannot {doing}: the ledger {self._where} is read-only at schema {self._store.schema} (made "
                "by an older dpdash); open it once where it can be written to upgrade it"
            )

    def _need_v2(self, doing: str) -> None:
        self._need_schema(2, doing)

    @property
    def _v2(self) -> bool:
        return self._store.schema >= 2

    @property
    def _v3(self) -> bool:
        return self._store.schema >= 3

    def _user(self, user: object) -> str | None:
        """A write's ``user=``: ``None``, or a valid label (``actions.user_label``), on a ledger that keeps
        the log (schema 5). Labels, notes and reasons are never compared with the ledger's password: a check
        that answered differently would let anyone who can write a note guess it."""
        if user is None:
            return None
        label = user_label(user)
        self._need_schema(5, "record who did it")
        return label

    def _log(
        self, conn: Connection, action: str, user: str | None, dataset: str | None, details: dict[str, Any]
    ) -> Action | None:
        """Record ``action`` in the write transaction ``conn``, so that it is committed with the change, or
        not at all. A ledger older than the log (schema < 5, read-only) keeps none."""
        if self._store.schema < 5:
            return None
        made = new_action(action, user, dataset, details)
        insert_actions(conn, [made])
        return made

    # ---- plumbing --------------------------------------------------------------------------------
    @property
    def path(self) -> Path | None:
        """The ledger file (SQLite); ``None`` for a ledger in PostgreSQL."""
        return self._store.path

    @property
    def location(self) -> str:
        """Where the ledger is, for people: its file, or its PostgreSQL URL without the password."""
        return self._where

    def __repr__(self) -> str:
        return f"Ledger({self._where!r})"

    def close(self) -> None:
        """Close the connection (committed entries are already stored)."""
        self._store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _transaction(self, doing: str = "write to the ledger") -> Iterator[Connection]:
        """A write transaction of the storage (``Store.transaction``): committed when the block ends, rolled
        back if it raises; the storage's errors become ``LedgerError`` messages that say what to do."""
        with self._store.transaction(doing) as conn:
            yield conn

    @contextlib.contextmanager
    def _reading(self) -> Iterator[Connection]:
        """A consistent snapshot for several reads (``Store.reading``)."""
        with self._store.reading() as conn:
            yield conn

    # ---- datasets and sessions -------------------------------------------------------------------
    def add_dataset(
        self,
        *,
        name: str,
        fingerprint: str,
        budget: Budget,
        accountant: str = DEFAULT_ACCOUNTANT,
        unit: Any = None,
        columns: Sequence[str] | None = None,
        rows: int | None = None,
        user: str | None = None,
    ) -> Dataset:
        """Register a dataset with its total budget and the accountant that keeps it.

        Registering the same fingerprint (or a version's, ``link_version``) again with the same budget and
        accountant returns the existing dataset (its first name is kept); with another budget or accountant
        it is refused, because a dataset's budget is fixed once releases may have been made against it.

        With ``unit`` the unit of privacy (``dpdash.facts.Facts``) is recorded with the budget, in the same
        transaction, and locked: ``spend_release`` then refuses releases stated for any other unit.
        ``columns`` and ``rows`` (the table's column names and row count) are recorded with it, for
        ``looks_like``.

        Args:
            name: a name for people.
            fingerprint: the content fingerprint (``fingerprint(data)``); identifies the dataset.
            budget: the total (ε, δ).
            accountant: one of ``ACCOUNTANT_NAMES`` (default ``"tightest"``). Accountants that certify no
                finite ε at δ = 0 (zcdp, rdp) need a budget δ > 0.
            unit: the unit of privacy to lock with the budget, or ``None`` (none recorded: releases are
                not checked against one; ``record_unit`` can add it later, once).
            columns: the table's column names (any order), or ``None``.
            rows: the table's row count, or ``None``.
            user: who registers it (``actions``: a "budget" action is recorded with the dataset, in the
                same transaction; none when the dataset was already registered).
        """
        name = _text(name, "name")
        user = self._user(user)
        recorded = None
        if unit is not None or columns is not None or rows is not None:
            if unit is None:
                raise ParameterError("columns and rows are recorded with a unit of privacy: give unit= too")
            recorded = RecordedUnit(unit_of(unit), columns_tuple(columns), row_count(rows), "")
            self._need_v2("record the unit of privacy")
        fingerprint = _text(fingerprint, "fingerprint")
        if not isinstance(budget, Budget):
            raise ParameterTypeError(
                f"budget must be a Budget(epsilon=, delta=), got {type(budget).__name__}"
            )
        keeper = get_accountant(accountant)
        if budget.delta == 0.0 and not keeper.finite_at_zero_delta:
            able = [n for n in ACCOUNTANT_NAMES if get_accountant(n).finite_at_zero_delta]
            raise ParameterError(
                f"the {accountant} accountant certifies no finite ε at δ = 0, so it cannot keep a pure-DP "
                f"budget; give the budget a delta > 0 or choose one of {', '.join(able)}"
            )
        with self._transaction("register the dataset") as conn:
            self._store.lock_ledger(conn)
            existing = self._find(conn, fingerprint)
            if existing is not None:
                if existing.budget != budget or existing.accountant != accountant:
                    raise ParameterError(
                        f"dataset {existing.name!r} ({fingerprint}) is already registered with budget "
                        f"ε = {existing.budget.epsilon:g}, δ = {existing.budget.delta:g} under the "
                        f"{existing.accountant} accountant; a dataset's budget and accountant are fixed"
                    )
                if recorded is not None:
                    have = read_unit(conn, self._dataset_id(conn, existing.fingerprint), self._where)
                    if have is None or have.unit != recorded.unit:
                        raise ParameterError(
                            f"dataset {existing.name!r} ({fingerprint}) is already registered "
                            + ("without a recorded unit of privacy; use record_unit"
                               if have is None else f"with another unit of privacy ({have.unit.describe()})")
                        )  # fmt: skip
                return existing
            created = _now()
            (dataset_id,) = conn.execute(
                INSERT_DATASET + " RETURNING id",
                (fingerprint, name, budget.epsilon, budget.delta, accountant, created),
            ).fetchone()
            if recorded is not None:
                insert_unit(conn, int(dataset_id), _stamped(recorded, created))
            self._log(conn, "budget", user, fingerprint, {
                "name": short(name), "epsilon": budget.epsilon, "delta": budget.delta,
                "accountant": accountant,
                "unit": None if recorded is None else short(recorded.unit.describe(), 300),
            })  # fmt: skip
        return Dataset(fingerprint, name, budget, accountant, created)

    def _find(self, conn: sqlite3.Connection, fingerprint: str, *, versions: bool = True) -> Dataset | None:
        """The dataset with this fingerprint, or whose budget this fingerprint continues (a version)."""
        if versions and self._v2:
            fingerprint = resolve(conn, fingerprint) or fingerprint
        row = conn.execute(
            f"SELECT {DATASET_COLUMNS} FROM datasets WHERE fingerprint = ?",
            (fingerprint,),
        ).fetchone()
        return None if row is None else self._dataset_row(row)

    def _dataset_row(self, row: Sequence[Any]) -> Dataset:
        fp, name, epsilon, delta, accountant, created = row
        try:
            budget = Budget(epsilon, delta)
            if accountant not in ACCOUNTANT_NAMES:
                raise ParameterError(f"unknown accountant {accountant!r}")
        except DPDashError as error:
            raise LedgerError(
                f"the ledger {self._where} holds an invalid dataset {name!r}: {error}"
            ) from error
        return Dataset(fp, name, budget, accountant, created)

    def find_dataset(self, fingerprint: str) -> Dataset | None:
        """The dataset with this fingerprint, or the one whose budget it continues (``link_version``), or
        ``None``."""
        key = _text(fingerprint, "fingerprint")
        with self._reading() as conn:
            return self._find(conn, key)

    def dataset(self, dataset: Dataset | str) -> Dataset:
        """The registered dataset (given as a ``Dataset`` or a fingerprint), as stored in the ledger."""
        key = dataset.fingerprint if isinstance(dataset, Dataset) else _text(dataset, "dataset")
        found = self.find_dataset(key)
        if found is None:
            raise ParameterError(
                f"no dataset with fingerprint {key!r} in the ledger {self._where}; "
                "register it with add_dataset"
            )
        return found

    def datasets(self) -> list[Dataset]:
        """Every registered dataset, oldest first."""
        with self._reading() as conn:
            rows = conn.execute(f"SELECT {DATASET_COLUMNS} FROM datasets ORDER BY id").fetchall()
        return [self._dataset_row(row) for row in rows]

    # ---- the unit of privacy and versions (schema 2; see ``versions``) ---------------------------
    def unit(self, dataset: Dataset | str) -> RecordedUnit | None:
        """The unit of privacy recorded with the dataset's budget (``None``: none was recorded)."""
        ds = self.dataset(dataset)
        if not self._v2:
            return None
        with self._reading() as conn:
            return read_unit(conn, self._dataset_id(conn, ds.fingerprint), self._where)

    def record_unit(
        self,
        dataset: Dataset | str,
        unit: Any,
        *,
        columns: Sequence[str] | None = None,
        rows: int | None = None,
        user: str | None = None,
    ) -> RecordedUnit:
        """Record (once) the unit of privacy of a dataset registered without one; from then on it is locked.

        Recording the same unit again returns the record; another unit is refused (a unit is never changed).
        A "unit" action by ``user`` is recorded with it (``actions``).
        """
        ds = self.dataset(dataset)
        user = self._user(user)
        self._need_v2("record the unit of privacy")
        recorded = RecordedUnit(unit_of(unit), columns_tuple(columns), row_count(rows), _now())
        with self._transaction("record the unit of privacy") as conn:
            self._store.lock_ledger(conn)
            dataset_id = self._dataset_id(conn, ds.fingerprint)
            have = read_unit(conn, dataset_id, self._where)
            if have is not None:
                if have.unit != recorded.unit:
                    raise ParameterError(
                        f"dataset {ds.name!r} already has its unit of privacy recorded "
                        f"({have.unit.describe()}); it cannot be changed"
                    )
                return have
            insert_unit(conn, dataset_id, recorded)
            self._log(conn, "unit", user, ds.fingerprint, {"unit": short(recorded.unit.describe(), 300)})
        return recorded

    def versions(self, dataset: Dataset | str) -> list[Version]:
        """The other tables (fingerprints) whose releases spend this dataset's budget, oldest first."""
        ds = self.dataset(dataset)
        if not self._v2:
            return []
        with self._reading() as conn:
            return read_versions(conn, self._dataset_id(conn, ds.fingerprint), ds.fingerprint)

    def link_version(
        self,
        dataset: Dataset | str,
        *,
        fingerprint: str,
        name: str,
        reason: str,
        columns: Sequence[str] | None = None,
        rows: int | None = None,
        user: str | None = None,
    ) -> Version:
        """Continue ``dataset``'s budget for another table: releases from ``fingerprint`` spend it.

        For a new version of the same people (a corrected or extended file). Recorded for good, with a
        "version" action by ``user`` (``actions``); a fingerprint that already has a budget (its own, or as
        a version) is refused, since its releases already count somewhere.
        """
        ds = self.dataset(dataset)
        user = self._user(user)
        self._need_v2("link a version")
        fingerprint = _text(fingerprint, "fingerprint")
        version = Version(
            fingerprint, ds.fingerprint, _text(name, "name"), columns_tuple(columns), row_count(rows),
            _text(reason, "reason"), _now(),
        )  # fmt: skip
        with self._transaction("link the version") as conn:
            self._store.lock_ledger(conn)
            owner = resolve(conn, fingerprint)
            if owner is not None:
                if owner == ds.fingerprint and fingerprint != ds.fingerprint:
                    found = [v for v in read_versions(conn, self._dataset_id(conn, owner), owner)]
                    return next(v for v in found if v.fingerprint == fingerprint)
                raise ParameterError(
                    f"the table {fingerprint} already has a budget (dataset {owner}); it cannot continue "
                    f"another one"
                )
            insert_version(conn, self._dataset_id(conn, ds.fingerprint), version)
            reason = short(version.reason, 300)
            details = {"table": fingerprint, "name": short(version.name), "reason": reason}
            self._log(conn, "version", user, ds.fingerprint, details)
        return version

    def declare_distinct(
        self, fingerprint: str, looked_like: Dataset | str, *, reason: str, user: str | None = None
    ) -> DistinctPopulation:
        """State that the table ``fingerprint``, which looks like the budgeted ``looked_like``, holds other
        people (so it may get a budget of its own); recorded for good with the owner's ``reason``, and a
        "distinct" action by ``user`` about ``looked_like`` (``actions``)."""
        ds = self.dataset(looked_like)
        user = self._user(user)
        self._need_v2("record the statement")
        fingerprint = _text(fingerprint, "fingerprint")
        statement = DistinctPopulation(fingerprint, ds.fingerprint, _text(reason.strip(), "reason"), _now())
        with self._transaction("record the statement") as conn:
            self._store.lock_ledger(conn)
            if resolve(conn, fingerprint) is not None:
                raise ParameterError(f"the table {fingerprint} already has a budget; nothing was recorded")
            insert_distinct(conn, self._dataset_id(conn, ds.fingerprint), statement)
            self._log(
                conn,
                "distinct",
                user,
                ds.fingerprint,
                {"table": fingerprint, "reason": short(statement.reason, 300)},
            )
        return statement

    def distinct_populations(self, fingerprint: str) -> list[DistinctPopulation]:
        """The owner's statements that the table ``fingerprint`` holds other people than a dataset it
        resembled."""
        if not self._v2:
            return []
        with self._reading() as conn:
            return read_distinct(conn, _text(fingerprint, "fingerprint"))

    def looks_like(self, *, fingerprint: str, name: str, columns: Sequence[str]) -> list[LookAlike]:
        """The budgeted datasets the table resembles without being them: the same name, or the same set of
        column names, as the dataset or one of its versions, while ``fingerprint`` has no budget and no
        statement of a different population for that dataset. Empty when the table has a budget."""
        fingerprint = _text(fingerprint, "fingerprint")
        wanted = columns_tuple(columns)
        if not self._v2:
            return []
        with self._reading() as conn:
            if resolve(conn, fingerprint) is not None:
                return []
            declared = {s.looked_like for s in read_distinct(conn, fingerprint)}
            matches: dict[int, tuple[bool, bool]] = {}
            for dataset_id, known_name, known_columns in shapes(conn):
                same_name = known_name == name
                same_columns = known_columns is not None and known_columns == wanted
                if same_name or same_columns:
                    was = matches.get(dataset_id, (False, False))
                    matches[dataset_id] = (was[0] or same_name, was[1] or same_columns)
            found = []
            for dataset_id, (same_name, same_columns) in sorted(matches.items()):
                row = conn.execute(
                    f"SELECT {DATASET_COLUMNS} FROM datasets WHERE id = ?", (dataset_id,)
                ).fetchone()
                ds = self._dataset_row(row)
                if ds.fingerprint not in declared:
                    found.append(LookAlike(ds, same_name, same_columns))
        return found

    def start_session(self, label: str = "") -> Session:
        """Record a new session (e.g. a browser session) to attribute releases to."""
        session = Session(uuid.uuid4().hex, _text(label, "label", allow_empty=True), _now())
        with self._transaction("start a session") as conn:
            conn.execute(
                "INSERT INTO sessions (uid, label, started_at) VALUES (?, ?, ?)",
                (session.uid, session.label, session.started_at),
            )
        return session

    def sessions(self) -> list[Session]:
        """Every session, oldest first."""
        with self._reading() as conn:
            rows = conn.execute("SELECT uid, label, started_at FROM sessions ORDER BY id").fetchall()
        return [Session(*row) for row in rows]

    # ---- who did what (schema 5; see ``actions``) ------------------------------------------------
    def record_action(
        self,
        action: str,
        *,
        user: str,
        dataset: Dataset | str | None = None,
        details: dict[str, Any] | None = None,
    ) -> Action:
        """Record what the app did that the ledger cannot see: ``"load"`` (a table loaded), ``"connect"``
        (a table connected where it lives), ``"facts"`` (its public facts saved).

        The ledger's own writes record theirs (budget, release, import, export, ...) in their own
        transaction; those words are refused here, so the log never says a release or an approval
        happened when it did not.

        Args:
            action: one of ``actions.APP_ACTIONS``.
            user: who (``actions.user_label``): an e-mail, a sign-in subject, "local owner"; never a
                password.
            dataset: the table's fingerprint (it need not have a budget), a ``Dataset``, or ``None``.
            details: a small JSON object (``actions.details_of``): names and counts, never the data.

        Returns:
            The recorded ``Action``.
        """
        if action not in APP_ACTIONS:
            raise ParameterError(
                f"record_action takes {', '.join(APP_ACTIONS)}; the ledger records its own writes' actions "
                f"itself, got action={short(action, 40)!r}"
            )
        label = self._user(user_label(user))
        fp = dataset.fingerprint if isinstance(dataset, Dataset) else dataset
        if fp is not None and (not isinstance(fp, str) or not fp.strip() or len(fp) > 200):
            raise ParameterError(
                "dataset must be a Dataset, a fingerprint (text of at most 200 characters) or None"
            )
        checked = details_of(details)
        self._need_schema(5, "record the action")
        with self._transaction("record the action") as conn:
            made = self._log(conn, action, label, fp, checked)
        assert made is not None
        return made

    def actions(self, dataset: Dataset | str | None = None) -> list[Action]:
        """The log of who did what, oldest first: every action (``None``), or those about a dataset (given
        as a ``Dataset`` or a fingerprint: a registered dataset's include its versions'; any other
        fingerprint's are that table's). Empty on a ledger older than the log."""
        if self._store.schema < 5:
            return []
        with self._reading() as conn:
            tables = None
            if dataset is not None:
                key = dataset.fingerprint if isinstance(dataset, Dataset) else _text(dataset, "dataset")
                found = self._find(conn, key)
                tables = [key]
                if found is not None:
                    found_id = self._dataset_id(conn, found.fingerprint)
                    versions = read_versions(conn, found_id, found.fingerprint)
                    tables = [found.fingerprint, *(v.fingerprint for v in versions)]
            return read_actions(conn, tables, self._store.any_of, self._where)

    # ---- release requests (schema 5; see ``release_requests``) -------------------------------------
    def request_release(self, dataset: Dataset | str, request: dict[str, Any], *, user: str) -> RequestRecord:
        """Ask for a release from ``dataset``: store the planned release for its owner to approve or decline
        (``decide_request``), with a "request" action by ``user``. Nothing is drawn and no budget is spent.

        Args:
            dataset: a ``Dataset`` or its fingerprint (registered: the release would spend its budget).
            request: ``release``'s arguments but the data (``release_requests.planned_release``):
                ``{"query": query.to_dict(), "mechanism": "laplace", "epsilon": 0.5}``, and optionally
                ``delta``, ``confidence``, ``postprocess``, ``options``, ``note``.
            user: who asks (``actions.user_label``).

        Returns:
            The stored request, "pending".

        Raises:
            ParameterError: ``user`` already has ``MAX_WAITING`` requests waiting on this dataset (nothing
                recorded).
        """
        ds = self.dataset(dataset)
        label = self._user(user_label(user))
        planned = planned_release(request)
        self._need_schema(5, "record the release request")
        uid, created = uuid.uuid4().hex, _now()
        with self._transaction("record the release request") as conn:
            dataset_id = self._dataset_id(conn, ds.fingerprint)
            self._store.lock_dataset(conn, dataset_id)  # two requests at once count each other
            if waiting_of(conn, dataset_id, label) >= MAX_WAITING:
                raise ParameterError(
                    f"{label} already has {MAX_WAITING} release requests waiting on {ds.name!r}, the most "
                    "one person may have at a time: nothing was requested. Wait until an owner approves "
                    "or declines some of them."
                )
            insert_release_request(conn, uid, dataset_id, planned, label, created)
            self._log(conn, "request", label, ds.fingerprint, {
                "request": uid, "query": short(query_label(planned)), "mechanism": planned["mechanism"],
                "epsilon": planned["epsilon"], "delta": planned["delta"],
            })  # fmt: skip
        return RequestRecord(uid, ds.fingerprint, planned, label, created, "pending")

    def release_requests(self, dataset: Dataset | str, status: str | None = None) -> list[RequestRecord]:
        """The dataset's release requests, oldest first; only those with ``status`` ("pending",
        "approved" (not yet released), "declined", "released") if given."""
        ds = self.dataset(dataset)
        if status is not None:
            check.one_of(status, "status", STATUSES)
        if self._store.schema < 5:
            return []
        with self._reading() as conn:
            found = read_release_requests(
                conn, "r.dataset_id = ?", (self._dataset_id(conn, ds.fingerprint),), self._where
            )
        return [r for r in found if status is None or r.status == status]

    def decide_request(self, request_id: str, approve: bool, *, user: str, reason: str = "") -> RequestRecord:
        """Approve or decline a pending release request, once, with an "approve" or "decline" action by
        ``user``. The decision is a row of its own (the request is never changed). A request already
        decided is refused: of several owners deciding at once, exactly one decision is recorded.

        Approving spends nothing: the owner's app then makes the release and records it with
        ``spend_release(ds, release, request_id=request_id)``, which must fit the budget then.

        Returns:
            The request with its decision.

        Raises:
            ParameterError: no such request, or it was already decided (the message says by whom).
        """
        uid = _text(request_id, "request_id")
        if not isinstance(approve, bool):
            raise ParameterTypeError(f"approve must be True or False, got {type(approve).__name__}")
        label = self._user(user_label(user))
        reason = _text(reason, "reason", allow_empty=True).strip()
        if len(reason) > MAX_REASON:
            raise ParameterError(f"reason must be text of at most {MAX_REASON} characters")
        self._need_schema(5, "record the decision")
        with self._transaction("record the decision") as conn:
            row = conn.execute(
                "SELECT r.dataset_id, d.fingerprint FROM release_requests r "
                "JOIN datasets d ON d.id = r.dataset_id WHERE r.uid = ?",
                (uid,),
            ).fetchone()
            if row is None:
                raise ParameterError(f"no release request {short(uid, 80)!r} in the ledger {self._where}")
            self._store.lock_dataset(conn, int(row[0]))  # deciders of one dataset, one at a time
            (before,) = read_release_requests(conn, "r.uid = ?", (uid,), self._where)
            if before.status != "pending":
                raise ParameterError(
                    f"the release request {uid} was already {before.status} by {before.decided_by} at "
                    f"{before.decided_at}: a request is decided once. Nothing was recorded."
                )
            insert_decision(conn, uid, approve, label, reason, _now())
            details = {"request": uid, "reason": short(reason, 300)}
            self._log(conn, "approve" if approve else "decline", label, row[1], details)
            (after,) = read_release_requests(conn, "r.uid = ?", (uid,), self._where)
        return after

    def _check_requested(
        self, conn: Connection, ds: Dataset, request_id: str, record: dict[str, Any] | None
    ) -> None:
        """Under the spend's lock: a ``request_id`` that names a release request must name an approved one
        of this dataset, given to ``spend_release`` with the release approved."""
        if self._store.schema < 5:
            return
        found = read_release_requests(conn, "r.uid = ?", (request_id,), self._where)
        if not found:
            return
        (asked,) = found
        problem = None
        if asked.dataset != ds.fingerprint:
            problem = f"it is a release request of another dataset ({asked.dataset})"
        elif asked.status != "approved":
            problem = f"that release request is {asked.status}, not approved"
        elif record is None:
            problem = "a release request is recorded with spend_release, which checks it is the one approved"
        elif not same_release(asked.request, record):
            problem = "the release is not the one approved (query, mechanism, ε or δ differ)"
        if problem is not None:
            raise ParameterError(
                f"refused: request_id {request_id!r} names a release request, but {problem}. Nothing was "
                "recorded."
            )

    # ---- entries ----------------------------------------------------------------------------------
    def _dataset_id(self, conn: sqlite3.Connection, fingerprint: str) -> int:
        row = conn.execute("SELECT id FROM datasets WHERE fingerprint = ?", (fingerprint,)).fetchone()
        if row is None:
            raise ParameterError(f"no dataset with fingerprint {fingerprint!r} in the ledger {self._where}")
        return int(row[0])

    def _entries(self, conn: sqlite3.Connection, dataset_id: int, fingerprint: str) -> list[Entry]:
        """The dataset's entries in order, reading only those added since the last call."""
        last, cached = self._cache.get(dataset_id, (0, []))
        rows = conn.execute(
            "SELECT e.id, e.uid, s.uid, e.created_at, e.event FROM entries e "
            "LEFT JOIN sessions s ON s.id = e.session_id WHERE e.dataset_id = ? AND e.id > ? ORDER BY e.id",
            (dataset_id, last),
        ).fetchall()
        if rows:
            fresh = []
            for entry_id, uid, session, created, text in rows:
                try:
                    event = event_from_dict(json.loads(text))
                except (ValueError, TypeError, LookupError, AttributeError, RecursionError) as error:
                    raise LedgerError(
                        f"the ledger {self._where} holds an unreadable entry {uid} (row {entry_id}): {error}"
                    ) from error
                fresh.append(Entry(uid, fingerprint, session, created, event))
            cached = cached + fresh
            last = int(rows[-1][0])
            self._cache[dataset_id] = (last, cached)
        return list(cached)

    def entries(self, dataset: Dataset | str) -> list[Entry]:
        """The dataset's committed releases, oldest first."""
        ds = self.dataset(dataset)
        with self._reading() as conn:
            return self._entries(conn, self._dataset_id(conn, ds.fingerprint), ds.fingerprint)

    def published(self, dataset: Dataset | str) -> dict[str, dict[str, Any]]:
        """The release records ``spend_release`` stored with the dataset's entries (its own and imported),
        as JSON objects keyed by the uid of each release's first entry, oldest first; read one back with
        ``dpdash.release.Release.from_dict``. Entries recorded by ``spend``/``spend_many`` have none."""
        ds = self.dataset(dataset)
        if not self._v3:
            return {}
        with self._reading() as conn:
            return read_published(conn, self._dataset_id(conn, ds.fingerprint))

    def events(self, dataset: Dataset | str) -> list[PrivacyEvent]:
        """The events of the dataset's releases, oldest first."""
        return [entry.event for entry in self.entries(dataset)]

    def spend(
        self,
        dataset: Dataset | str,
        event: PrivacyEvent,
        *,
        session: Session | str | None = None,
        request_id: str | None = None,
        user: str | None = None,
    ) -> Entry:
        """Record one release, if it fits the dataset's budget: check and record in one transaction.

        Under the write lock, the dataset's entries are re-read and the total with ``event`` is computed
        under the dataset's accountant at the budget's δ. If it is within the budget ε the entry is written
        and committed before this returns; otherwise nothing is written. The history is composed before the
        lock is taken (from a read snapshot, kept by ``running``), so the lock is held while composing only
        the entries added since and ``event``; a refusal's totals are computed after it is released.

        Hand out the noisy values only after this returns: ``entry = ledger.spend(ds, event)``, then release.

        Args:
            dataset: a ``Dataset`` or its fingerprint.
            event: the release's event (``event_for(mechanism, query=...)``).
            session: the session to attribute it to (a ``Session`` or its uid), or ``None``.
            request_id: the request's idempotency key (``request_ids``), or ``None``: a call with an id
                already recorded for this dataset records nothing and returns the first call's entry.
            user: who releases (``actions``): a "release" action is recorded with the entry, in the same
                transaction; a spend refused for the budget records a "refused" action (and nothing else).

        Returns:
            The committed ``Entry``.

        Raises:
            BudgetExceededError: the release does not fit; the message says what remains.
            UnsupportedEventError: the dataset's accountant cannot account for this kind of event.
            ParameterError: ``request_id`` was recorded for other releases.
        """
        return self.spend_many(dataset, [event], session=session, request_id=request_id, user=user)[0]

    def spend_many(
        self,
        dataset: Dataset | str,
        events: Sequence[PrivacyEvent],
        *,
        session: Session | str | None = None,
        request_id: str | None = None,
        user: str | None = None,
    ) -> list[Entry]:
        """Record several releases together (e.g. the pieces of a mean), all or none, as ``spend`` does
        for one: one transaction, one budget check of the total with all of them (and ``request_id``
        and ``user`` as in ``spend``: one action for all of them)."""
        return self._spend(dataset, events, session, None, request_id, user)

    def _spend(
        self,
        dataset: Dataset | str,
        events: Sequence[PrivacyEvent],
        session: Session | str | None,
        record: dict[str, Any] | None,
        request_id: str | None = None,
        user: str | None = None,
    ) -> list[Entry]:
        """``spend_many``, storing ``record`` (a release's published values) with the entries if given."""
        request_id = request_id_of(request_id)
        user = self._user(user)
        if request_id is not None:
            self._need_schema(4, "record the request id")
        events = list(events)
        for event in events:
            if not isinstance(event, PrivacyEvent):
                hint = " (use event_for(mechanism))" if hasattr(event, "epsilon") else ""
                raise ParameterTypeError(f"event must be a PrivacyEvent{hint}, got {type(event).__name__}")
        if not events:
            raise ParameterError("events must not be empty")
        ds = self.dataset(dataset)
        accountant = get_accountant(ds.accountant)
        accountant.check(events)
        session_uid = session.uid if isinstance(session, Session) else session
        texts = [canonical_json(event.to_dict()) for event in events]
        # Before the write lock: the history as of now, and the check on it, which composes (and keeps, in
        # ``running``) its state. Under the lock only the entries added since and the new events are
        # composed; a refusal's totals are computed after the lock is released.
        with self._reading() as conn:
            snapshot = self._entries(conn, self._dataset_id(conn, ds.fingerprint), ds.fingerprint)
        running.fits(accountant, [e.event for e in snapshot], events, ds.budget.delta, ds.budget.epsilon)
        refused: tuple[str, Budget, list[PrivacyEvent]] | None = None
        with self._transaction("record the release") as conn:
            row = conn.execute(
                "SELECT id, name, budget_epsilon, budget_delta FROM datasets WHERE fingerprint = ?",
                (ds.fingerprint,),
            ).fetchone()
            dataset_id, name, budget = int(row[0]), row[1], Budget(row[2], row[3])
            self._store.lock_dataset(conn, dataset_id)  # spends on this dataset, one at a time
            session_id = None
            if session_uid is not None:
                found = conn.execute("SELECT id FROM sessions WHERE uid = ?", (session_uid,)).fetchone()
                if found is None:
                    raise ParameterError(f"no session {session_uid!r} in the ledger; use start_session()")
                session_id = int(found[0])
            recorded = self._entries(conn, dataset_id, ds.fingerprint)
            if request_id is not None:
                uids = read_request(conn, dataset_id, request_id)
                if uids is not None:  # sent again: the first call's outcome, nothing recorded
                    return self._replayed(conn, dataset_id, ds, recorded, uids, events, record, request_id)
                self._check_requested(conn, ds, request_id, record)
            history = [entry.event for entry in recorded]
            # The decision, on the history as it is under the lock, from the kept state (running.py).
            if not running.fits(accountant, history, events, budget.delta, budget.epsilon):
                refused = (name, budget, history)
                # Nothing is spent; the attempt is kept for an audit (``actions``).
                details = _release_details(events, record, [], request_id)
                self._log(conn, "refused", user, ds.fingerprint, details)
            else:
                created = _now()
                entries = [
                    Entry(uuid.uuid4().hex, ds.fingerprint, session_uid, created, event) for event in events
                ]
                conn.executemany(
                    INSERT_ENTRY,
                    [
                        entry_row(entry, dataset_id, session_id, text)
                        for entry, text in zip(entries, texts, strict=True)
                    ],
                )
                if record is not None:
                    insert_published(conn, [(entries[0].uid, record)])
                if request_id is not None:
                    insert_request(conn, dataset_id, request_id, [e.uid for e in entries], created)
                self._log(
                    conn,
                    "release",
                    user,
                    ds.fingerprint,
                    _release_details(events, record, entries, request_id),
                )
                if _before_commit is not None:
                    _before_commit()
        if refused is not None:
            name, budget, history = refused
            total = running.epsilon(accountant, history, events, budget.delta)
            spent = running.epsilon(accountant, history, (), budget.delta)
            raise _exceeded(name, events, total, spent, budget, accountant.name)
        return entries

    def _replayed(
        self,
        conn: Connection,
        dataset_id: int,
        ds: Dataset,
        recorded: list[Entry],
        uids: list[str],
        events: list[PrivacyEvent],
        record: dict[str, Any] | None,
        request_id: str,
    ) -> list[Entry]:
        """The entries a request id recorded, if this call asks for the same releases (and, for a release,
        the same values); else a ``ParameterError``: a second draw must not be published on one spend."""
        by_uid = {entry.uid: entry for entry in recorded}
        first = [by_uid[uid] for uid in uids if uid in by_uid]
        same = len(first) == len(uids) and [entry.event for entry in first] == events
        if same and record is not None:
            same = read_published(conn, dataset_id).get(uids[0]) == json.loads(
                json.dumps(record, ensure_ascii=False, allow_nan=False)
            )
        if not same:
            raise ParameterError(
                f"the request {request_id!r} was already recorded on dataset {ds.name!r} for other releases "
                "or other values; nothing was recorded. Publish what was recorded for it "
                "(Ledger.entries, Ledger.published), or send a new release with a new request_id."
            )
        return first

    def spend_release(
        self,
        dataset: Dataset | str,
        release: Any,
        *,
        session: Session | str | None = None,
        partition: tuple[str, str] | None = None,
        request_id: str | None = None,
        user: str | None = None,
    ) -> list[Entry]:
        """Record a ``dpdash.release.Release`` (its events: ``events_for_release``), all or nothing.

        The release must have been computed on this dataset: its ``dataset_identity`` (or, for records
        without one, its ``dataset_fingerprint``) is the dataset's fingerprint or one of its versions'
        (``link_version``). If a unit of privacy was recorded with the budget, the release's query must
        state exactly that unit (its ``facts``: neighbours, rows per person, id column); any other unit,
        weaker or not, is refused with a ``DPDashError``. ``release()`` has drawn the values already: show
        or hand them out only after this returns.

        The release's publishable record (``release.to_json()``: its noisy values and accuracy, never the
        true values) is stored in the same transaction, under the uid of its first entry: ``published``.

        ``request_id`` (``request_ids``): a key the caller chose for this release before its first try. A
        call with a key already recorded for this dataset records nothing and returns the first call's
        entries (whose values are the ones to publish), so a request sent again after a lost connection
        never spends twice; the same key with another release or other values is refused.

        ``user``: who releases, as in ``spend`` (a "release" action, or a "refused" one).
        """
        ds = self.dataset(dataset)
        record = record_of(release)
        drawn_on = getattr(release, "dataset_identity", None) or getattr(release, "dataset_fingerprint", None)
        if not isinstance(drawn_on, str) or self.find_dataset(drawn_on) != ds:
            raise ParameterError(
                f"the release was computed on the table {drawn_on!r}, not on dataset {ds.name!r} "
                f"({ds.fingerprint}) or one of its versions; nothing was recorded"
            )
        recorded = self.unit(ds)
        if recorded is not None:
            problem = unit_mismatch(recorded.unit, _release_unit(release))
            if problem is not None:
                raise DPDashError(
                    f"refused: {problem}. The budget of dataset {ds.name!r} protects "
                    f"{recorded.unit.describe()}; a release must use that unit. Nothing was recorded."
                )
        events = events_for_release(release, partition=partition)
        return self._spend(ds, events, session, record, request_id, user)

    def spend_mechanism(
        self,
        dataset: Dataset | str,
        mechanism: Any,
        *,
        query: str = "",
        partition: tuple[str, str] | None = None,
        session: Session | str | None = None,
        user: str | None = None,
    ) -> Entry:
        """``spend(dataset, event_for(mechanism, query=query, partition=partition), session=session,
        user=user)``."""
        event = event_for(mechanism, query=query, partition=partition)
        return self.spend(dataset, event, session=session, user=user)

    # ---- totals -----------------------------------------------------------------------------------
    def spent(self, dataset: Dataset | str, accountant: str | None = None) -> PrivacyTotal:
        """The composed total of the dataset's releases at its budget's δ, under its accountant (or the
        one named).

        The accountant's own number, a function of the ledger's contents alone (``running.total``): the
        same to the bit in every process, whether it composed the releases one by one or read them
        fresh."""
        ds = self.dataset(dataset)
        keeper = get_accountant(accountant or ds.accountant)
        return running.total(keeper, self.events(ds), ds.budget.delta)

    def status(self, dataset: Dataset | str) -> BudgetStatus:
        """Budget, spent (``spent``) and remaining under the dataset's accountant."""
        ds = self.dataset(dataset)
        events = self.events(ds)
        spent = running.total(get_accountant(ds.accountant), events, ds.budget.delta)
        return BudgetStatus(ds.budget, spent, _remaining(ds.budget, spent.epsilon), len(events))

    def remaining(self, dataset: Dataset | str) -> float:
        """The ε still unspent at the budget's δ, under the dataset's accountant (budget ε − spent ε, ≥ 0)."""
        return self.status(dataset).remaining_epsilon

    def totals(
        self,
        dataset: Dataset | str,
        accountants: Iterable[str] = ACCOUNTANT_NAMES,
        *,
        group_size: int = 1,
    ) -> dict[str, PrivacyTotal | None]:
        """The dataset's total under each accountant side by side, at the budget's δ (``None`` where an
        accountant refuses one of the events), optionally for groups of ``group_size`` records; each as
        ``spent`` computes it."""
        ds = self.dataset(dataset)
        events = self.events(ds)
        out: dict[str, PrivacyTotal | None] = {}
        for name in accountants:
            try:
                total = running.total(get_accountant(name), events, ds.budget.delta)
            except UnsupportedEventError:
                out[name] = None
                continue
            out[name] = total.for_group(group_size) if group_size != 1 else total
        return out

    def cumulative(
        self,
        dataset: Dataset | str,
        accountants: Iterable[str] = ACCOUNTANT_NAMES,
        *,
        points: int = 50,
    ) -> list[tuple[int, dict[str, float | None]]]:
        """Total ε at the budget's δ after the first n releases, for up to ``points`` values of n (always
        including every n when there are few entries, and the last one): the data of a step chart."""
        from dpdash.accounting.planning import cumulative_totals

        ds = self.dataset(dataset)
        return cumulative_totals(self.events(ds), ds.budget.delta, accountants, points=points)

    # ---- planning ---------------------------------------------------------------------------------
    def plan(self, dataset: Dataset | str, queries: Sequence[Any]) -> Any:
        """``planning.plan`` for this dataset: the ε per planned query that fits what remains."""
        from dpdash.accounting.planning import plan

        ds = self.dataset(dataset)
        return plan(queries, budget=ds.budget, spent=self.events(ds), accountant=ds.accountant)

    def what_if(
        self,
        dataset: Dataset | str,
        event: PrivacyEvent,
        counts: Iterable[int],
        accountants: Iterable[str] = ACCOUNTANT_NAMES,
    ) -> Any:
        """``planning.what_if`` for this dataset: totals after k more releases like ``event``."""
        from dpdash.accounting.planning import what_if

        ds = self.dataset(dataset)
        return what_if(event, counts, spent=self.events(ds), budget=ds.budget, accountants=accountants)

    def max_releases(self, dataset: Dataset | str, event: PrivacyEvent) -> int:
        """How many more releases like ``event`` fit the dataset's budget under its accountant."""
        from dpdash.accounting.planning import max_releases

        ds = self.dataset(dataset)
        return max_releases(event, spent=self.events(ds), budget=ds.budget, accountant=ds.accountant)


# ---- helpers ---------------------------------------------------------------------------------------
def _stamped(recorded: RecordedUnit, when: str) -> RecordedUnit:
    return RecordedUnit(recorded.unit, recorded.columns, recorded.rows, when)


def _release_unit(release: Any) -> Any:
    """The unit of privacy a release's query states (its ``facts``), or ``None``."""
    query = getattr(release, "query", None)
    facts = query.get("facts") if isinstance(query, dict) else None
    if not isinstance(facts, dict):
        return None
    try:
        return unit_of(facts)
    except DPDashError:
        return None


def _finite(value: object) -> float | None:
    """``value`` if it is a finite number, else ``None`` (an action's details hold finite numbers only)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _release_details(
    events: list[PrivacyEvent], record: dict[str, Any] | None, entries: list[Entry], request_id: str | None
) -> dict[str, Any]:
    """A "release" or "refused" action's details: what was released and its cost (a release's own ε and δ;
    for events, their sum when none is partitioned), the first entry's uid, the request id."""
    first = events[0]
    details: dict[str, Any] = {
        "query": short(first.query), "mechanism": short(first.mechanism, 60), "entries": len(events),
    }  # fmt: skip
    if record is not None:
        details["query"] = short(record.get("query_name") or first.query)
        details["mechanism"] = short(record.get("mechanism") or first.mechanism, 60)
        details["epsilon"], details["delta"] = _finite(record.get("epsilon")), _finite(record.get("delta"))
    elif len(events) == 1 or all(event.partition is None for event in events):
        epsilons, deltas = [e.epsilon for e in events], [e.delta for e in events]
        details["epsilon"] = None if None in epsilons else _finite(math.fsum(epsilons))  # type: ignore[arg-type]
        details["delta"] = None if None in deltas else _finite(math.fsum(deltas))  # type: ignore[arg-type]
    if entries:
        details["first_entry"] = entries[0].uid
    if request_id is not None:
        details["request_id"] = short(request_id, 200)
    return details


def _remaining(budget: Budget, spent: float) -> float:
    return max(0.0, budget.epsilon - spent)


def _exceeded(
    name: str, events: list[PrivacyEvent], total: float, spent: float, budget: Budget, accountant: str
) -> BudgetExceededError:
    first = events[0]
    label = f" ({first.query!r})" if first.query else ""
    what = f"{first.describe()}{label}"
    if len(events) > 1:
        what = f"{len(events)} releases ({what}, ...)"
    remaining = _remaining(budget, spent)
    if math.isinf(total):
        why = (
            f"the {accountant} accountant certifies no finite ε at δ = {budget.delta:g} with it (its δ, or "
            "the releases' δs together, exceed the budget's δ, or the release is not private)"
        )
    else:
        why = (
            f"it would bring the total to ε = {total:.6g} at δ = {budget.delta:g} under the {accountant} "
            "accountant"
        )
    return BudgetExceededError(
        f"refused: {what} does not fit the budget of dataset {name!r}: {why}, over the "
        f"budget ε = {budget.epsilon:g}, δ = {budget.delta:g}. Spent so far: ε = {spent:.6g}; remaining: "
        f"ε = {remaining:.6g} at δ = {budget.delta:g}. Nothing was recorded.",
        remaining_epsilon=remaining,
        requested_epsilon=total,
    )
