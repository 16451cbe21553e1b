"""A PostgreSQL table as a source: queries compiled by Ibis run in the database; only aggregates come back.

The connection is read only (``default_transaction_read_only``). Text columns are read with the "C"
collation, so that comparisons and orderings of strings go by code point, as in pandas and DuckDB,
whatever the database's own collation. The password (in the URL, or given apart) is used to connect and
nowhere else: not in the source's description or location, not in any message. Nothing else is used to
connect: no password, password file, service file, client certificate or Kerberos ticket of the server's
own (``pg_guard``); the ledger's own server, and any schema holding a dpdash ledger, are refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

from dpdash.engines.limits import SourceLimits
from dpdash.engines.pg_guard import libpq_options, refuse_ledger_server, refuse_ledger_tables, resolve
from dpdash.engines.sources import Source
from dpdash.errors import ParameterError
from dpdash.pg_urls import redact, split_url

__all__ = ["open_postgres", "redact"]

def open_postgres(
    url: str, table: str, *, password: str | None = None, config: Any = None, ledger: str | Path | None = None
) -> Source:
    """A table (``table`` or ``schema.table``) of the PostgreSQL database at ``url``
    (``postgresql://user[:password]@host[:port]/database``; ``password`` given apart wins over the URL's;
    no password: none is sent, whatever ``PGPASSWORD`` or ``~/.pgpass`` say). ``ledger``: the budget
    ledger's location, whose PostgreSQL server is refused as a source (default: the one ``Ledger()`` opens,
    ``$DPDASH_LEDGER``). ``config`` is accepted for symmetry with the other sources; PostgreSQL runs with
    its own settings."""
    import ibis

    parts = split_url(url)
    secret = password if password is not None else unquote(parts.password or "")
    shown = redact(url)
    schema, _, name = table.rpartition(".")
    if not name:
        raise ParameterError(f"give a table name (or schema.table), got {table!r}")
    host, port = parts.hostname or "localhost", parts.port or 5432
    if "," in host:
        raise ParameterError(f"give one host in the PostgreSQL URL, got {host!r}")
    options = libpq_options(secret)
    if ledger is None:
        from dpdash.ledger.location import default_ledger_location

        ledger = default_ledger_location()
    addresses = resolve(host, port)
    refuse_ledger_server(addresses, host, port, ledger)
    if addresses:  # the address checked is the one connected to (no second look-up)
        options["hostaddr"] = addresses[0]
    try:
        backend = ibis.postgres.connect(
            host=host,
            port=port,
            user=unquote(parts.username or ""),
            database=unquote(parts.path.lstrip("/")),
            options="-c default_transaction_read_only=on",
            **options,
        )
    except Exception as error:  # psycopg's own exception types
        raise ParameterError(f"could not connect to {shown}: {_scrub(error, secret)}") from None
    try:
        names = backend.list_tables(database=schema or None)
    except Exception as error:
        backend.disconnect()
        raise ParameterError(f"could not list the tables of {shown}: {_scrub(error, secret)}") from None
    try:
        refuse_ledger_tables(names, f"schema {schema!r} of {shown}" if schema else shown)
    except ParameterError:
        backend.disconnect()
        raise
    if name not in names:
        backend.disconnect()
        listed = ", ".join(repr(n) for n in names[:20]) or "none"
        raise ParameterError(f"no table {table!r} in {shown} (tables: {listed})")
    try:
        server, database, schema, name = _resolve(backend, schema, name)
    except Exception as error:
        backend.disconnect()
        raise ParameterError(f"could not find {table!r} in {shown}: {_scrub(error, secret)}") from None
    raw = backend.table(name, database=schema)
    described = f"table {table!r} of PostgreSQL {shown}"
    try:
        SourceLimits().check_columns(len(raw.columns), described)
    except ParameterError:
        backend.disconnect()
        raise
    qualified = f"{schema}.{name}"
    # The identity is the table the database resolved, on its server and database: not the user who
    # connected, nor how the table was spelled (visits, public.visits and .visits are one table).
    location = f"postgresql://{server}/{database}#{qualified}"
    return Source(_code_point_strings(backend, raw, schema, name), backend, described, location,
                  names=(qualified, name))  # fmt: skip


def _resolve(backend: Any, schema: str, name: str) -> tuple[str, str, str, str]:
    """(the server, the database, the schema, the table) of ``schema.name`` (or ``name`` on the
    search_path) as PostgreSQL resolves it (``to_regclass``). The server is its system identifier when
    the role may read it (``pg_control_system()``), else the address connected to as the server reports
    it (``inet_server_addr``/``inet_server_port``)."""
    identifier = f"{_quote(schema)}.{_quote(name)}" if schema else _quote(name)
    with backend.con.cursor() as cursor, backend.con.transaction():
        row = cursor.execute(
            "SELECT n.nspname, c.relname, current_database(), host(inet_server_addr()), inet_server_port() "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(%s)",
            (identifier,),
        ).fetchone()
    if row is None:
        raise ParameterError("the database resolves no such table")
    nspname, relname, database, address, port = row
    server = f"{address or 'local'}:{port or ''}"
    try:
        with backend.con.cursor() as cursor, backend.con.transaction():
            system = cursor.execute("SELECT system_identifier FROM pg_control_system()").fetchone()
    except Exception:  # the function's EXECUTE revoked from this role: the address serves
        system = None
    if system is not None and system[0] is not None:
        server = f"system-{system[0]}"
    return server, database, nspname, relname


def _code_point_strings(backend: Any, raw: Any, schema: str, name: str) -> Any:
    """The table with every text column under COLLATE "C" (one SELECT; other columns as they are)."""
    text = {column for column, dtype in raw.schema().items() if dtype.is_string()}
    if not text:
        return raw
    columns = ", ".join(
        f'{_quote(c)} COLLATE "C" AS {_quote(c)}' if c in text else _quote(c) for c in raw.columns
    )
    where = f"{_quote(schema)}.{_quote(name)}" if schema else _quote(name)
    # The schema is given: without it Ibis would learn it through a temporary view (a write).
    return backend.sql(f"SELECT {columns} FROM {where}", schema=raw.schema(), dialect="postgres")


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _scrub(error: BaseException, secret: str) -> str:
    """The error's text with the password (plain or percent-encoded) taken out."""
    text = str(error).strip()
    for form in {secret, *(secret and [unquote(secret)])}:
        if form:
            text = text.replace(form, "***")
    return text
