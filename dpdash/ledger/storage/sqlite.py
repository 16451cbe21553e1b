"""The ledger in one SQLite file: the default storage.

A write transaction is ``BEGIN IMMEDIATE``: it takes the file's one write lock (waiting up to ``timeout``),
so every write transaction is exclusive and ``lock_dataset``/``lock_ledger`` have nothing to add. Readers use
deferred transactions and, in WAL mode, never wait for a writer. ``synchronous = FULL``: a committed spend
survives a power cut. A process killed mid-transaction leaves nothing of it (SQLite's journal rolls it back).

The file's safety (``ledger_file``): the folder is created 0700; the file is only ever opened through
SQLite; a marker beside it remembers the ledger, so one that goes missing or comes back empty is refused;
every transaction checks that the path is still the file that was opened. A file that is not a dpdash
ledger (another database, random bytes, a corrupted file, one from a newer dpdash) is refused before
anything is written to it. An older ledger is upgraded when opened (new tables, and from schema 6 the
count of each history table's rows, kept by triggers); a read-only one is read at its schema. A ledger
whose tables hold fewer rows than it counted is refused (``base.check_counts``): someone with the file
dropped the triggers and deleted history.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

from dpdash.errors import LedgerError
from dpdash.ledger.ledger_file import (
    MOVE_AWAY,
    check_same_file,
    file_identity,
    file_size,
    folder_writable,
    prepare_folder,
    read_marker,
    refuse_lost_history,
    sqlite_problem,
    write_marker,
)
from dpdash.ledger.records import now
from dpdash.ledger.signing import new_private_key
from dpdash.ledger.storage import base

__all__ = ["SQLiteStore"]

_TABLES = base.table_sql(
    key="INTEGER PRIMARY KEY", ordered_key="INTEGER PRIMARY KEY AUTOINCREMENT", integer="INTEGER", real="REAL"
)
_ACTIONS = (("UPDATE", "changed"), ("DELETE", "deleted"))


def _count(table: str) -> str:
    """The trigger (schema 6) that adds each row inserted into ``table`` to its count in ``meta``."""
    path = f"'$.{table}'"
    return (
        f"CREATE TRIGGER IF NOT EXISTS {table}_count AFTER INSERT ON {table} BEGIN "
        f"UPDATE meta SET value = json_set(value, {path}, COALESCE(json_extract(value, {path}), 0) + 1) "
        f"WHERE key = '{base.HISTORY_ROWS}'; END"
    )


def _statements(table: str) -> list[str]:
    """The table, its indexes and (for history) the triggers that make it append-only, also against other
    SQLite clients, and count its rows."""
    statements = [_TABLES[table], *base.INDEX_SQL.get(table, [])]
    if table in base.APPEND_ONLY:
        statements += [
            f"CREATE TRIGGER {table}_no_{action.lower()} BEFORE {action} ON {table} "
            f"BEGIN SELECT RAISE(ABORT, 'the dpdash ledger is append-only: {table} cannot be {verb}'); END"
            for action, verb in _ACTIONS
        ]
        statements.append(_count(table))
    return statements


class SQLiteStore(base.Store):
    """The ledger file at ``path``, opened (created if missing; see the module docstring).

    Raises:
        LedgerError: the file exists but is not a dpdash ledger this version can read (left as it was).
    """

    def __init__(self, path: Path, *, timeout: float) -> None:
        self._path = path
        self.location = str(path)
        self._timeout = timeout
        self._lock = threading.RLock()
        self._ready = False  # until the schema is there, the file may be empty
        # The ledger file is only ever opened through SQLite (see ledger_file's module docstring).
        prepare_folder(path)
        marker = read_marker(path)
        size = file_size(path)
        if marker is not None and not size:
            what = "is missing" if size is None else "is empty (0 bytes)"
            raise refuse_lost_history(path, marker, what)
        try:
            self._conn = sqlite3.connect(
                str(path), timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as error:
            raise sqlite_problem(error, path, "open the ledger") from error
        try:
            identity = file_identity(path)
            if identity is None:
                raise LedgerError(f"the ledger {path} vanished while it was being opened")
            self._opened = identity
            self._open_schema(marker)
        except sqlite3.Error as error:
            self._conn.close()
            raise sqlite_problem(error, path, "open the ledger") from error
        except BaseException:
            self._conn.close()
            raise

    @property
    def path(self) -> Path:
        return self._path

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _table_names(self) -> set[str]:
        return {row[0] for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _open_schema(self, marker: dict[str, str] | None) -> None:
        """Check (or create) the schema, reconcile the marker, and switch to WAL."""
        conn = self._conn
        conn.execute("PRAGMA foreign_keys = ON")
        if not self._table_names():
            if marker is not None:
                raise refuse_lost_history(self._path, marker, "holds no ledger tables")
            # A new (or empty) file: create the schema under the write lock, unless another process
            # created it first.
            with self.transaction("create the ledger"):
                if not self._table_names():
                    for table in _TABLES:
                        for statement in _statements(table):
                            conn.execute(statement)
                    meta = base.first_meta(now(), new_private_key())
                    conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", meta)
        else:
            result = conn.execute("PRAGMA quick_check").fetchone()
            if result is None or result[0] != "ok":
                raise LedgerError(
                    f"the ledger {self._path} is corrupted (SQLite's quick_check: {result}). {MOVE_AWAY}"
                )
        version = self._check_tables()
        self._migrate(version)
        if self.schema >= 6:
            with self.reading("check the ledger's history"):
                base.check_counts(conn, str(self._path), MOVE_AWAY)
        meta = base.read_meta(conn)
        # Ledgers made before ledger ids existed are known by their creation time.
        ledger_id = meta.get("ledger_id") or f"created-{meta.get('created_at', '')}"
        if marker is None:
            try:
                write_marker(self._path, ledger_id, meta.get("created_at", ""))
            except LedgerError:
                if folder_writable(self._path.parent):
                    raise
                # A read-only folder: nothing can be recorded here, and nothing can be lost either.
        elif marker["ledger_id"] != ledger_id:
            raise refuse_lost_history(self._path, marker, f"holds another ledger ({ledger_id})")
        # WAL: readers never wait for a writer; FULL: a committed spend survives a power cut.
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        self._ready = True

    def _check_tables(self) -> int:
        """The ledger's schema version; refuse a file that is not a complete dpdash ledger, or whose
        append-only (or counting) triggers are gone."""
        conn, tables, meta = self._conn, self._table_names(), {}
        if "meta" in tables:
            with contextlib.suppress(sqlite3.DatabaseError):
                meta = base.read_meta(conn)
        version = base.check_meta(meta, tables, str(self._path), "another SQLite database", MOVE_AWAY)
        triggers = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        expected = base.history_triggers(version, (action for action, _ in _ACTIONS))
        if not triggers >= expected:
            raise LedgerError(
                f"the ledger {self._path} lacks its append-only triggers ({sorted(expected - triggers)}): "
                f"its history may have been edited. {MOVE_AWAY}"
            )
        return version

    def _migrate(self, version: int) -> None:
        """Bring an older ledger to the current schema: each version adds append-only tables (2: those of
        ``versions``, 3: ``published``, 4: ``requests``, 5: those of ``actions`` and ``release_requests``),
        6 the count of each history table's rows (its triggers, and the rows held now as the count to
        start from); nothing old is changed. A ledger that cannot be written stays as it is and reads as
        one with nothing of the newer kinds recorded (``schema``); recording them is refused with a
        message."""
        self.schema = version
        if version >= base.SCHEMA_VERSION:
            return
        try:
            with self.transaction(f"upgrade the ledger to schema {base.SCHEMA_VERSION}") as conn:
                for table in _TABLES:  # in _TABLES' order: references before their tables
                    if table not in self._table_names():
                        for statement in _statements(table):
                            conn.execute(statement)
                    elif table in base.APPEND_ONLY:
                        conn.execute(_count(table))
                base.record_upgrade(conn, version)
        except LedgerError:
            if folder_writable(self._path.parent) and os.access(self._path, os.W_OK):
                raise
            return  # read-only: stays at its schema
        self.schema = base.SCHEMA_VERSION

    def _begin(self, statement: str, doing: str, *, may_be_empty: bool = False) -> None:
        """Begin a transaction on the file this handle opened (checked first); SQLite's errors become
        ``LedgerError`` messages."""
        check_same_file(self._path, self._opened, may_be_empty=may_be_empty)
        try:
            self._conn.execute(statement)
        except sqlite3.Error as error:
            raise sqlite_problem(error, self._path, doing) from error

    @contextlib.contextmanager
    def transaction(self, doing: str = "write to the ledger") -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE (the write lock, waiting up to ``timeout``) ... COMMIT, or ROLLBACK on error.

        The path must still be the file this handle opened (checked once the lock is held, and again just
        before the commit); SQLite's errors become ``LedgerError`` messages that say what to do.
        """
        with self._lock:
            self._begin("BEGIN IMMEDIATE", doing, may_be_empty=not self._ready)
            try:
                yield self._conn
                check_same_file(self._path, self._opened, may_be_empty=not self._ready)
                self._conn.execute("COMMIT")
            except BaseException as error:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
                if isinstance(error, sqlite3.Error):
                    raise sqlite_problem(error, self._path, doing) from error
                raise

    @contextlib.contextmanager
    def reading(self, doing: str = "read the ledger") -> Iterator[sqlite3.Connection]:
        """A consistent snapshot for several reads (a deferred read transaction) of the file this handle
        opened; SQLite's errors become ``LedgerError`` messages."""
        with self._lock:
            self._begin("BEGIN", doing)
            try:
                yield self._conn
            except sqlite3.Error as error:
                raise sqlite_problem(error, self._path, doing) from error
            finally:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("COMMIT")
