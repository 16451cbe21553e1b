"""The ledger in a PostgreSQL database: one ledger shared by every process and machine that reaches it.

Selected by a URL: ``Ledger("postgresql://user@host:5432/database")``, or ``DPDASH_LEDGER`` set to one. The
password comes from the URL (percent-encoded) or, as libpq finds it, from ``PGPASSWORD``, ``~/.pgpass`` or a
service file; it is used to connect and nowhere else: not in ``location``, a ``repr``, a message or an
export (``redact``; errors are scrubbed of it). Other libpq settings in the URL's query string
(``sslmode=verify-full``, ``options=-csearch_path%3Ddpdash``) pass through to libpq.

The tables are the SQLite ledger's (``base.COLUMNS``), created on first use in the connection's current
schema when it holds none of them: text and JSON kept as text, ``BIGSERIAL`` ids, ``double precision``
numbers. A schema that holds some of them but no dpdash ledger is refused, as is a ledger written by a newer
dpdash. The history is append-only: on every history table, triggers refuse UPDATE, DELETE and TRUNCATE
from any client, and the ledger checks that they are there and enabled whenever it connects. Every insert
adds to the table's count in ``meta`` (a trigger, in the same transaction; schema 6), and a ledger whose
tables hold fewer rows than it counted is refused when opened: history deleted with the triggers switched
off does not go unnoticed. A role that owns the tables (or a superuser) can still do anything to them, so
a team's app connects as a role that does not own them: ``postgres_setup`` creates the tables as an
administrator and grants the app's role only what the ledger does (read, add, lock).

Transactions are READ COMMITTED. A spend locks its dataset's row (``SELECT ... FOR UPDATE``): spends on one
dataset, from any number of processes, run one at a time, and every statement after the lock sees every
entry committed before it, so the check of the budget and the insert of the entries are one decision on
one history; spends on different datasets run side by side. Changes of which datasets, versions and
statements exist (registering, linking, importing) also take one transaction-level advisory lock. Reads
are REPEATABLE READ, READ ONLY: one snapshot, never waiting. ``timeout`` bounds the wait for a lock
(``lock_timeout``) and for connecting. Every connection sets ``synchronous_commit = on``: a spend is
acknowledged only once it is in the server's write-ahead log, whatever the server's or database's default.

What the SQLite ledger's file safety (``ledger_file``) does, the server does here: there is no file, folder
permission, marker or file lock; durability, backups and access (roles, ``pg_hba.conf``) are the server's.
A lost connection is opened again by the next transaction. When it is lost during a COMMIT, the caller
cannot know whether the transaction was recorded: a release with a ``request_id`` can be sent again, and is
recorded at most once.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from dpdash.errors import LedgerError
from dpdash.ledger.records import now
from dpdash.ledger.signing import new_private_key
from dpdash.ledger.storage import base
from dpdash.pg_urls import redact

__all__ = ["PostgresStore", "expected_triggers"]

# pg_advisory_xact_lock key of structure changes: the bytes of "dpdashLG" as a bigint.
_LEDGER_LOCK = int.from_bytes(b"dpdashLG", "big")
_ADVICE = "Nothing was changed; point DPDASH_LEDGER at another database, or another schema of it."
_EDITED = (
    "Nothing was changed; restore the ledger from a backup, and give the app a role that does not own its "
    "tables (see postgres_setup)."
)

_TABLES = base.table_sql(
    key="BIGSERIAL PRIMARY KEY", ordered_key="BIGSERIAL PRIMARY KEY", integer="BIGINT",
    real="DOUBLE PRECISION",
)
_REFUSE = """CREATE OR REPLACE FUNCTION dpdash_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the dpdash ledger is append-only: % cannot be %', TG_TABLE_NAME,
        CASE TG_OP WHEN 'UPDATE' THEN 'changed' WHEN 'DELETE' THEN 'deleted' ELSE 'truncated' END;
END
$$"""
_COUNT = f"""CREATE OR REPLACE FUNCTION dpdash_count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE meta SET value = jsonb_set(value::jsonb, ARRAY[TG_TABLE_NAME::text],
        to_jsonb(COALESCE((value::jsonb ->> TG_TABLE_NAME)::bigint, 0) + (SELECT count(*) FROM added)))::text
    WHERE key = '{base.HISTORY_ROWS}';
    RETURN NULL;
END
$$"""
_ACTIONS = {"update": "FOR EACH ROW", "delete": "FOR EACH ROW", "truncate": "FOR EACH STATEMENT"}


def _count(table: str) -> str:
    """The trigger (schema 6) that adds the rows each INSERT statement adds to ``table`` to its count."""
    return (
        f"CREATE OR REPLACE TRIGGER {table}_count AFTER INSERT ON {table} REFERENCING NEW TABLE AS added "
        "FOR EACH STATEMENT EXECUTE FUNCTION dpdash_count_rows()"
    )


def _statements(table: str) -> list[str]:
    """The table, its indexes and (for history) its append-only and counting triggers."""
    statements = [_TABLES[table], *base.INDEX_SQL.get(table, [])]
    if table in base.APPEND_ONLY:
        statements += [
            f"CREATE TRIGGER {table}_no_{action} BEFORE {action.upper()} ON {table} {each} "
            "EXECUTE FUNCTION dpdash_append_only()"
            for action, each in _ACTIONS.items()
        ]
        statements.append(_count(table))
    return statements


def expected_triggers(version: int) -> set[str]:
    """The names of the triggers a ledger at schema ``version`` has on its history tables."""
    return base.history_triggers(version, _ACTIONS)


@functools.lru_cache(maxsize=256)
def _placeholders(sql: str) -> str:
    """The ledger's ``?`` parameters in psycopg's style (``%s``; a literal ``%`` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class _Secret:
    """A value kept out of every ``repr`` (a traceback's locals, a debugger): the connection string, the
    password's forms."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<secret>"


class _Connection:
    """A psycopg connection that takes the ledger's SQL (``?`` parameters)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Any:
        if not parameters:  # psycopg reads placeholders (and %%) only when there are parameters
            return self._conn.execute(sql)
        return self._conn.execute(_placeholders(sql), parameters)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]], /) -> None:
        rows = list(rows)
        if rows:
            self._conn.cursor().executemany(_placeholders(sql), rows)


class PostgresStore(base.Store):
    """The ledger in the PostgreSQL database at ``url`` (see the module docstring), opened; its tables
    created if the schema holds none.

    Raises:
        LedgerError: the database cannot be reached, or holds tables of the ledger's names that are not a
            dpdash ledger this version can read (left as they were).
    """

    def __init__(self, url: str, *, timeout: float) -> None:
        self.location = redact(url)
        self._url = _Secret(url)
        self._secrets = _Secret(_secrets_of(url))
        self._timeout = timeout
        self._lock = threading.RLock()
        self._conn: Any = None
        with self._lock:
            self._connect()
            self._open_schema()

    # ---- connection ------------------------------------------------------------------------------
    def _connect(self) -> None:
        import psycopg

        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
        try:
            self._conn = psycopg.connect(
                self._url.value,
                autocommit=True,  # transactions are begun and ended here, explicitly
                connect_timeout=max(1, math.ceil(self._timeout)),
                application_name="dpdash-ledger",
            )
            milliseconds = max(1, round(self._timeout * 1000))
            self._conn.execute(f"SET lock_timeout = {milliseconds}")
            # a spend is acknowledged only once it is in the write-ahead log, whatever the server's default
            self._conn.execute("SET synchronous_commit = on")
        except psycopg.Error as error:
            self._conn = None
            raise LedgerError(f"cannot connect to the ledger {self.location}: {self._scrub(error)}") from None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()

    def _scrub(self, error: BaseException) -> str:
        """The error's text on one line, without the password (in any of its forms)."""
        text = " ".join(str(error).split())
        for secret in self._secrets.value:
            text = text.replace(secret, "***")
        return text

    def _begin(self, statement: str, doing: str) -> None:
        """Begin a transaction, connecting again first if the connection was lost (nothing was done in the
        new transaction yet, so trying once more is safe); PostgreSQL's errors become ``LedgerError``
        messages."""
        import psycopg

        if self._conn is None or self._conn.closed or self._conn.broken:
            self._connect()
        try:
            try:
                self._conn.execute(statement)
            except psycopg.OperationalError:
                if not (self._conn.closed or self._conn.broken):
                    raise
                self._connect()
                self._conn.execute(statement)
        except psycopg.Error as error:
            raise self._problem(error, doing) from None

    def _problem(self, error: Exception, doing: str) -> LedgerError:
        """PostgreSQL's ``error`` while ``doing`` something, as a message a person can act on."""
        import psycopg

        text = self._scrub(error)
        if isinstance(error, psycopg.errors.LockNotAvailable):
            return LedgerError(
                f"cannot lock the ledger {self.location} to {doing}: another process held it for too long "
                f"({text}). Nothing was recorded; try again."
            )
        if isinstance(error, (psycopg.errors.InsufficientPrivilege, psycopg.errors.ReadOnlySqlTransaction)):
            return LedgerError(
                f"cannot {doing}: the ledger {self.location} cannot be written by this role ({text}). "
                "Nothing was recorded."
            )
        if isinstance(error, psycopg.OperationalError):
            return LedgerError(
                f"cannot {doing}: the connection to the ledger {self.location} failed ({text}). Nothing was "
                "recorded; try again."
            )
        return LedgerError(f"cannot {doing} in the ledger {self.location}: {text}")

    # ---- transactions ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self, doing: str = "write to the ledger") -> Iterator[_Connection]:
        """BEGIN (READ COMMITTED) ... COMMIT, or ROLLBACK on error. Locks are taken inside it
        (``lock_dataset``, ``lock_ledger``) and held until it ends."""
        import psycopg

        with self._lock:
            self._begin("BEGIN ISOLATION LEVEL READ COMMITTED", doing)
            try:
                yield _Connection(self._conn)
            except BaseException as error:
                with contextlib.suppress(psycopg.Error):
                    self._conn.execute("ROLLBACK")
                if isinstance(error, psycopg.Error):
                    raise self._problem(error, doing) from None
                raise
            try:
                self._conn.execute("COMMIT")
            except psycopg.OperationalError as error:
                raise LedgerError(
                    f"the connection to the ledger {self.location} was lost while committing ({doing}): it "
                    f"may or may not have been recorded ({self._scrub(error)}). A release sent again with "
                    "the same request_id is recorded at most once."
                ) from None
            except psycopg.Error as error:
                with contextlib.suppress(psycopg.Error):
                    self._conn.execute("ROLLBACK")
                raise self._problem(error, doing) from None

    @contextlib.contextmanager
    def reading(self, doing: str = "read the ledger") -> Iterator[_Connection]:
        """One snapshot (REPEATABLE READ, READ ONLY) for several reads."""
        import psycopg

        with self._lock:
            self._begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", doing)
            try:
                yield _Connection(self._conn)
            except psycopg.Error as error:
                raise self._problem(error, doing) from None
            finally:
                with contextlib.suppress(psycopg.Error):
                    self._conn.execute("COMMIT")

    def lock_dataset(self, conn: Any, dataset_id: int) -> None:
        conn.execute("SELECT id FROM datasets WHERE id = ? FOR UPDATE", (dataset_id,)).fetchone()

    def lock_ledger(self, conn: Any) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_LEDGER_LOCK,)).fetchone()

    def any_of(self, column: str, values: Sequence[str]) -> tuple[str, Any]:
        return f"{column} = ANY(?)", list(values)

    # ---- schema ----------------------------------------------------------------------------------
    def _table_names(self, conn: _Connection) -> set[str]:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
        return {row[0] for row in rows}

    def _open_schema(self) -> None:
        """Create the tables if the schema holds none of them; else check that they are a dpdash ledger
        this version reads, with its triggers, and add the tables of newer schema versions."""
        with self.transaction("open the ledger") as conn:
            (schema,) = conn.execute("SELECT current_schema()").fetchone()
            if schema is None:
                raise LedgerError(
                    f"the ledger {self.location} has no schema to keep its tables in (the search_path names "
                    "none that exists). Nothing was changed."
                )
            self.lock_ledger(conn)  # one process creates or upgrades the tables
            tables = self._table_names(conn)
            if not tables & set(base.COLUMNS):
                self._conn.execute(_REFUSE)
                self._conn.execute(_COUNT)
                for table in _TABLES:
                    for statement in _statements(table):
                        self._conn.execute(statement)
                conn.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)", base.first_meta(now(), new_private_key())
                )
                return
            meta = base.read_meta(conn) if "meta" in tables else {}
            where = f"the schema {schema!r} of {self.location}"
            version = base.check_meta(meta, tables, where, "another application's tables", _ADVICE)
            self._check_triggers(conn, version)
            if version < base.SCHEMA_VERSION:
                self._upgrade(conn, version, tables)
        # one snapshot (spends of other processes go on): the counts and the rows they counted
        with self.reading("check the ledger's history") as conn:
            base.check_counts(conn, f"{self.location} (schema {schema!r})", _EDITED)

    def _upgrade(self, conn: _Connection, version: int, tables: set[str]) -> None:
        """Bring a ledger at schema ``version`` to this one's: the tables of each newer version and, from 6,
        the counting triggers, starting from the rows held now. Only the tables' owner can."""
        import psycopg

        try:
            self._conn.execute(_REFUSE)
            self._conn.execute(_COUNT)
            for v in range(version + 1, base.SCHEMA_VERSION + 1):
                # in _TABLES' order: a table's references exist before it
                for table in [t for t in _TABLES if t in base.TABLES_OF_SCHEMA[v] - tables]:
                    for statement in _statements(table):
                        self._conn.execute(statement)
            if version < 6:
                for table in tables & set(base.APPEND_ONLY):
                    self._conn.execute(_count(table))
            base.record_upgrade(conn, version)
        except psycopg.errors.InsufficientPrivilege as error:
            raise LedgerError(
                f"the ledger {self.location} is at schema {version} and this role cannot upgrade it to "
                f"{base.SCHEMA_VERSION} ({self._scrub(error)}). Nothing was changed; run `python -m "
                "dpdash.ledger.storage.postgres_setup` as the role that owns its tables."
            ) from None

    def _check_triggers(self, conn: _Connection, version: int) -> None:
        """Refuse a ledger whose append-only triggers are missing or disabled."""
        rows = conn.execute(
            "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND NOT t.tgisinternal AND t.tgenabled <> 'D'"
        ).fetchall()
        have = {row[0] for row in rows}
        expected = expected_triggers(version)
        if not have >= expected:
            raise LedgerError(
                f"the ledger {self.location} lacks its append-only triggers, or they are disabled "
                f"({sorted(expected - have)}): its history may have been edited. {_ADVICE}"
            )


def _secrets_of(url: str) -> list[str]:
    """Every form of a password that could show up in an error: the URL's (encoded and decoded), its query's
    ``password=``, and ``PGPASSWORD``."""
    parts = urlsplit(url)
    found = [parts.password or "", unquote(parts.password or "")]
    found += parse_qs(parts.query).get("password", [])
    found.append(os.environ.get("PGPASSWORD", ""))
    return sorted({s for s in found if s}, key=len, reverse=True)
