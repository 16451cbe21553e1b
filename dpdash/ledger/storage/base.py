"""What every ledger storage gives the ledger: transactions that run its SQL, and the ledger's schema.

``Ledger`` holds the budget rules once and writes its queries once, in the SQL that SQLite and PostgreSQL
share, with ``?`` parameters (a backend translates them if its driver wants another style). A backend
(``sqlite``, ``postgres``) holds what differs: how to connect, the tables' DDL and append-only triggers, how a
transaction begins and what it locks, and how its errors read to a person. Python's ``dbm`` is the model:
one interface, a small module per storage.

What a backend promises (the contract tests, tests/accounting/test_ledger_contract.py, check it on both):

- ``transaction()`` commits everything done inside it, or nothing (an error rolls it back);
- ``lock_dataset(conn, id)`` inside a transaction: until it ends, no other transaction (in any process)
  that takes the same lock gets past it, and after it returns every entry committed before is visible:
  a spend's check of the budget and the insert of its entries see one consistent history;
- ``lock_ledger(conn)``: the same for changes of the ledger's structure (datasets, versions, imports);
- ``reading()`` is one consistent snapshot;
- the history tables refuse UPDATE and DELETE from any client (triggers);
- (schema 6) every insert into a history table adds to its count in ``meta`` (``HISTORY_ROWS``), in the
  same transaction (a trigger): a ledger whose tables hold fewer rows than it counted lost some of its
  history, and is refused when opened (``check_counts``), even when the triggers are back in place.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from dpdash.errors import LedgerError

__all__ = [
    "APPEND_ONLY",
    "APPLICATION",
    "COLUMNS",
    "HISTORY_ROWS",
    "INDEX_SQL",
    "PUBLIC_KEY",
    "SCHEMA_VERSION",
    "TABLE_SQL",
    "Connection",
    "Store",
    "check_counts",
    "check_meta",
    "count_rows",
    "first_meta",
    "history_triggers",
    "read_meta",
    "record_upgrade",
    "table_sql",
    "tables_of",
]

SCHEMA_VERSION = 6
APPLICATION = "dpdash-ledger"
#: The ``meta`` row (schema 6) that counts the rows ever added to each history table: a JSON object
#: ``{table: count}``, increased by a trigger in the transaction of every insert.
HISTORY_ROWS = "history_rows"
#: The ``meta`` row of a ledger whose private signing key is kept outside it (``postgres_setup``): its
#: public key only.
PUBLIC_KEY = "signing_public_key"

#: The ledger's tables and their columns, in order, the same in every backend (the contract tests compare
#: each backend's tables with this).
COLUMNS: dict[str, tuple[str, ...]] = {
    "meta": ("key", "value"),
    "datasets": ("id", "fingerprint", "name", "budget_epsilon", "budget_delta", "accountant", "created_at"),
    "sessions": ("id", "uid", "label", "started_at"),
    "entries": (
        "id", "uid", "dataset_id", "session_id", "created_at", "query", "mechanism", "epsilon", "delta",
        "rho", "event",
    ),
    # schema 2 (``versions``)
    "dataset_units": ("dataset_id", "neighbours", "rows_per_person", "id_column", "columns", "n_rows",
                      "recorded_at"),
    "dataset_versions": ("id", "fingerprint", "dataset_id", "name", "columns", "n_rows", "reason",
                         "created_at"),
    "distinct_populations": ("id", "fingerprint", "looked_like", "reason", "created_at"),
    # schema 3 (``published``)
    "published": ("id", "entry_uid", "record"),
    # schema 4 (``request_ids``)
    "requests": ("id", "dataset_id", "request_id", "entry_uids", "created_at"),
    # schema 5 (``actions``, ``release_requests``)
    "actions": ("id", "uid", "created_at", "who", "what", "fingerprint", "details"),
    "release_requests": ("id", "uid", "dataset_id", "request", "requested_by", "created_at"),
    "request_decisions": ("id", "request_uid", "decision", "decided_by", "reason", "created_at"),
}  # fmt: skip
#: The tables each schema version adds.
TABLES_OF_SCHEMA: dict[int, frozenset[str]] = {
    1: frozenset({"meta", "datasets", "sessions", "entries"}),
    2: frozenset({"dataset_units", "dataset_versions", "distinct_populations"}),
    3: frozenset({"published"}),
    4: frozenset({"requests"}),
    5: frozenset({"actions", "release_requests", "request_decisions"}),
    6: frozenset(),  # the count of each history table's rows (``HISTORY_ROWS``): no new table
}
#: Every table but ``meta`` is history: rows are added, never changed or deleted.
APPEND_ONLY = tuple(table for table in COLUMNS if table != "meta")

#: Each table's CREATE statement, in creation order (a table's references exist before it), written once
#: for every storage: ``table_sql(types)`` fills in its ``{key}`` (the id column's type and key),
#: ``{ordered_key}`` (the same, for ids that must grow with every insert), ``{integer}`` and ``{real}``.
TABLE_SQL: dict[str, str] = {
    "meta": 'CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)',
    "datasets": """CREATE TABLE datasets (
        id {key},
        fingerprint TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        budget_epsilon {real} NOT NULL CHECK (budget_epsilon > 0),
        budget_delta {real} NOT NULL CHECK (budget_delta >= 0 AND budget_delta < 1),
        accountant TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "sessions": """CREATE TABLE sessions (
        id {key},
        uid TEXT NOT NULL UNIQUE,
        label TEXT NOT NULL,
        started_at TEXT NOT NULL
    )""",
    "entries": """CREATE TABLE entries (
        id {ordered_key},
        uid TEXT NOT NULL UNIQUE,
        dataset_id {integer} NOT NULL REFERENCES datasets(id),
        session_id {integer} REFERENCES sessions(id),
        created_at TEXT NOT NULL,
        query TEXT NOT NULL,
        mechanism TEXT NOT NULL,
        epsilon {real},
        delta {real},
        rho {real},
        event TEXT NOT NULL
    )""",
    "dataset_units": """CREATE TABLE dataset_units (
        dataset_id {integer} PRIMARY KEY REFERENCES datasets(id),
        neighbours TEXT NOT NULL,
        rows_per_person {integer} NOT NULL CHECK (rows_per_person >= 1),
        id_column TEXT,
        columns TEXT,
        n_rows {integer},
        recorded_at TEXT NOT NULL
    )""",
    "dataset_versions": """CREATE TABLE dataset_versions (
        id {key},
        fingerprint TEXT NOT NULL UNIQUE,
        dataset_id {integer} NOT NULL REFERENCES datasets(id),
        name TEXT NOT NULL,
        columns TEXT,
        n_rows {integer},
        reason TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "distinct_populations": """CREATE TABLE distinct_populations (
        id {key},
        fingerprint TEXT NOT NULL,
        looked_like {integer} NOT NULL REFERENCES datasets(id),
        reason TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (fingerprint, looked_like)
    )""",
    "published": """CREATE TABLE published (
        id {key},
        entry_uid TEXT NOT NULL UNIQUE REFERENCES entries(uid),
        record TEXT NOT NULL
    )""",
    "requests": """CREATE TABLE requests (
        id {key},
        dataset_id {integer} NOT NULL REFERENCES datasets(id),
        request_id TEXT NOT NULL,
        entry_uids TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (dataset_id, request_id)
    )""",
    "actions": """CREATE TABLE actions (
        id {key},
        uid TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        who TEXT,
        what TEXT NOT NULL,
        fingerprint TEXT,
        details TEXT NOT NULL
    )""",
    "release_requests": """CREATE TABLE release_requests (
        id {key},
        uid TEXT NOT NULL UNIQUE,
        dataset_id {integer} NOT NULL REFERENCES datasets(id),
        request TEXT NOT NULL,
        requested_by TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "request_decisions": """CREATE TABLE request_decisions (
        id {key},
        request_uid TEXT NOT NULL UNIQUE REFERENCES release_requests(uid),
        decision TEXT NOT NULL CHECK (decision IN ('approved', 'declined')),
        decided_by TEXT NOT NULL,
        reason TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
}

#: The indexes created with each table, the same in every storage.
INDEX_SQL: dict[str, list[str]] = {
    "entries": ["CREATE INDEX entries_by_dataset ON entries (dataset_id, id)"],
    "actions": ["CREATE INDEX actions_by_table ON actions (fingerprint, id)"],
    "release_requests": ["CREATE INDEX release_requests_by_dataset ON release_requests (dataset_id, id)"],
}


def table_sql(*, key: str, ordered_key: str, integer: str, real: str) -> dict[str, str]:
    """``TABLE_SQL`` in one storage's types."""
    types = {"key": key, "ordered_key": ordered_key, "integer": integer, "real": real}
    return {table: sql.format(**types) for table, sql in TABLE_SQL.items()}


def tables_of(version: int) -> set[str]:
    """The tables of a ledger at schema ``version``: those of every version up to it."""
    return set().union(*(names for v, names in TABLES_OF_SCHEMA.items() if v <= version))


def history_triggers(version: int, refused: Iterable[str]) -> set[str]:
    """The names of the triggers a ledger at schema ``version`` has on its history tables, in every storage:
    ``<table>_no_<statement>`` for each ``refused`` statement ("update", "delete", ...) and, from schema 6,
    ``<table>_count``, which counts the rows added."""
    history, statements = tables_of(version) & set(APPEND_ONLY), [s.lower() for s in refused]
    names = {f"{table}_no_{statement}" for table in history for statement in statements}
    if version >= 6:
        names |= {f"{table}_count" for table in history}
    return names


class Cursor(Protocol):
    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What the ledger's SQL runs on: ``execute`` and ``executemany`` with ``?`` parameters
    (``sqlite3.Connection`` is one)."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> Any: ...


class Store(ABC):
    """One ledger's storage, open. ``location`` names it for people (a file path, or a URL without its
    password); ``schema`` is the schema version it holds (below ``SCHEMA_VERSION`` only for an older
    ledger that could not be upgraded because it is read-only)."""

    location: str
    schema: int = SCHEMA_VERSION

    @property
    def path(self) -> Path | None:
        """The ledger's file, for a storage that is one (SQLite); else ``None``."""
        return None

    @abstractmethod
    def transaction(self, doing: str) -> contextlib.AbstractContextManager[Connection]:
        """A write transaction: committed when the block ends, rolled back if it raises. ``doing`` says
        what it is for, in the words of an error message ("record the release")."""

    @abstractmethod
    def reading(self, doing: str = "read the ledger") -> contextlib.AbstractContextManager[Connection]:
        """One consistent snapshot for several reads."""

    def lock_dataset(self, conn: Connection, dataset_id: int) -> None:  # noqa: B027 (optional hook)
        """Inside a transaction: serialize it with every other transaction that locks this dataset (a
        spend's check and insert). A no-op where every write transaction is already exclusive."""

    def lock_ledger(self, conn: Connection) -> None:  # noqa: B027 (optional hook)
        """Inside a transaction: serialize it with every other one that changes which datasets, versions
        and statements exist. A no-op where every write transaction is already exclusive."""

    def any_of(self, column: str, values: Sequence[str]) -> tuple[str, Any]:
        """A condition ``column`` is one of ``values``, and its one parameter."""
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))

    @abstractmethod
    def close(self) -> None:
        """Close the connection (committed work is already stored)."""


def first_meta(created_at: str, private_key: str) -> list[tuple[str, str]]:
    """The ``meta`` rows of a new ledger: what it is, its schema, when, its id, its signing key and the
    count of its (no) history rows."""
    return [
        ("application", APPLICATION),
        ("schema_version", str(SCHEMA_VERSION)),
        ("created_at", created_at),
        ("ledger_id", uuid.uuid4().hex),
        ("signing_key", private_key),
        (HISTORY_ROWS, json.dumps(dict.fromkeys(APPEND_ONLY, 0))),
    ]


def count_rows(conn: Connection, version: int = SCHEMA_VERSION) -> dict[str, int]:
    """How many rows each history table of a ledger at schema ``version`` holds now."""
    tables = tables_of(version)
    return {
        table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        for table in APPEND_ONLY
        if table in tables
    }


def read_meta(conn: Connection) -> dict[str, str]:
    """The ledger's ``meta`` rows, key to value."""
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def record_upgrade(conn: Connection, version: int) -> None:
    """Write in ``meta`` that a ledger at schema ``version`` is now at ``SCHEMA_VERSION`` (its new tables and
    triggers are in place): from below 6, the count of its history rows as held now, which its counting
    triggers keep from then on; and its new schema version."""
    if version < 6:
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (HISTORY_ROWS, json.dumps(count_rows(conn))),
        )
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))


def check_counts(conn: Connection, where: str, advice: str) -> None:
    """Refuse (``LedgerError``, with ``advice``) a ledger whose history tables hold other numbers of rows
    than it counted as they were added (``HISTORY_ROWS``): rows deleted with the triggers switched off, or
    added around them."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (HISTORY_ROWS,)).fetchone()
    try:
        counted = json.loads(row[0]) if row is not None else None
    except ValueError:
        counted = None
    if not isinstance(counted, dict):
        raise LedgerError(
            f"the ledger {where} has lost its count of its history rows: it may have been edited. {advice}"
        )
    held = count_rows(conn)
    missing = {t: (counted.get(t, 0), n) for t, n in held.items() if n < counted.get(t, 0)}
    if missing:
        shown = "; ".join(f"{t}: {c} added, {n} left" for t, (c, n) in sorted(missing.items()))
        raise LedgerError(
            f"rows of the history are missing from the ledger {where} ({shown}): it may have been edited "
            f"(rows deleted with its append-only triggers switched off). {advice}"
        )
    extra = {t: (counted.get(t, 0), n) for t, n in held.items() if n != counted.get(t, 0)}
    if extra:
        shown = "; ".join(f"{t}: {c} added, {n} held" for t, (c, n) in sorted(extra.items()))
        raise LedgerError(
            f"the ledger {where} holds history rows it never counted ({shown}): they were added around its "
            f"triggers, so it may have been edited. {advice}"
        )


def check_meta(meta: dict[str, str], tables: Iterable[str], where: str, other: str, advice: str) -> int:
    """The schema version of a ledger whose ``meta`` rows and table names these are; a ``LedgerError``
    (with ``advice``, what to do) if it is not a dpdash ledger (``other`` says what it is then), is newer
    than this dpdash, or lacks tables its version has."""
    tables = set(tables)
    if meta.get("application") != APPLICATION:
        shown = ", ".join(sorted(tables)[:5])
        raise LedgerError(f"{where} is not a dpdash ledger: it is {other} (tables: {shown}). {advice}")
    try:
        version = int(meta.get("schema_version", ""))
    except ValueError:
        raise LedgerError(f"the ledger {where} has no valid schema version. {advice}") from None
    if version > SCHEMA_VERSION:
        raise LedgerError(
            f"the ledger {where} was written by a newer dpdash (schema {version}; this one reads "
            f"up to {SCHEMA_VERSION}). {advice}"
        )
    if version < 1 or not tables_of(version) <= tables:
        raise LedgerError(f"the ledger {where} is incomplete (tables: {sorted(tables)}). {advice}")
    return version
