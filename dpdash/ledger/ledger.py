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
>>> from dpdash.accounting import Budget, event_for
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
import os
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from dpdash import _validation as check
from dpdash.accounting.event_factory import event_from_dict
from dpdash.accounting.events import PrivacyEvent
from dpdash.accounting.registry import ACCOUNTANT_NAMES, get_accountant
from dpdash.errors import (
    DPDashError,
    LedgerError,
    ParameterError,
    ParameterTypeError,
)
from dpdash.ledger.actions import (
    insert_actions,
    new_action,
    short,
    user_label,
)
from dpdash.ledger.lineage import Lineage
from dpdash.ledger.location import default_ledger_location
from dpdash.ledger.published import (
    read_published,
)
from dpdash.ledger.records import (
    DATASET_COLUMNS,
    INSERT_DATASET,
    Action,
    Budget,
    Dataset,
    Entry,
    Session,
)
from dpdash.ledger.records import now as _now
from dpdash.ledger.records import text as _text
from dpdash.ledger.releases import RecordedRelease, recorded_releases
from dpdash.ledger.spending import Spending
from dpdash.ledger.storage import open_store
from dpdash.ledger.storage.base import Connection, Store
from dpdash.ledger.totals import Totals
from dpdash.ledger.transfer import Transfer
from dpdash.ledger.versions import (
    RecordedUnit,
    columns_tuple,
    insert_unit,
    read_unit,
    resolve,
    row_count,
    unit_of,
)
from dpdash.ledger.workflow import Workflow

__all__ = ["Ledger", "fingerprint"]

DEFAULT_ACCOUNTANT = "tightest"


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


class Ledger(Spending, Lineage, Workflow, Totals, Transfer):
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
        """The dataset's committed entries, oldest first (one release may be several: ``releases``)."""
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

    def releases(self, dataset: Dataset | str, *, last: int | None = None) -> list[RecordedRelease]:
        """The dataset's releases as people count them, oldest first: the entries each spend wrote,
        grouped (``releases.group_releases``: a mean's sum and count are one release), each with the
        values it published (``published``) where they were stored. Read in one snapshot.

        Args:
            last: only the newest ``last`` releases (their numbers still count from the first), or
                ``None`` for all.
        """
        ds = self.dataset(dataset)
        if last is not None:
            last = check.non_negative_int(last, "last")
        with self._reading() as conn:
            dataset_id = self._dataset_id(conn, ds.fingerprint)
            made = recorded_releases(self._entries(conn, dataset_id, ds.fingerprint), {})
            if last is not None:
                made = made[len(made) - last :] if last else []
            uids = None if last is None else [m.uid for m in made]  # all: no list of ids to send
            published = read_published(conn, dataset_id, uids) if self._v3 else {}
        return [replace(m, record=published.get(m.uid)) for m in made]

    def events(self, dataset: Dataset | str) -> list[PrivacyEvent]:
        """The events of the dataset's releases, oldest first."""
        return [entry.event for entry in self.entries(dataset)]


# ---- helpers ---------------------------------------------------------------------------------------
def _stamped(recorded: RecordedUnit, when: str) -> RecordedUnit:
    return RecordedUnit(recorded.unit, recorded.columns, recorded.rows, when)
