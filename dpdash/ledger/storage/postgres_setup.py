"""A PostgreSQL ledger for a team: its tables owned by an administrator, the app a role that can only read
and add to them.

    python -m dpdash.ledger.storage.postgres_setup postgresql://admin@db.internal/dpdash \\
        --app-role dpdash_app --key-file /etc/dpdash/ledger.key

``set_up(admin_url, app_role, key_file)``, what the command runs, connected as the administrator (the
role that is to own the tables; never the app's) in the schema the app's URL will name:

1. creates the ledger's tables, or upgrades and checks them (``PostgresStore``); tables an earlier
   deployment created as the app's role, and the trigger functions, are handed to the administrator
   (``ALTER ... OWNER``: a superuser, or a member of that role, can);
2. moves the ledger's private signing key out of ``meta`` into ``key_file`` (created with mode 0600, never
   over a file that exists), leaving the public key only (``signing_public_key``): the app reads the file
   named by ``DPDASH_SIGNING_KEY_FILE``. On a ledger already set up, the file must hold its key;
3. grants the app's role what the ledger's statements need, and nothing more: USAGE on the schema; SELECT
   and INSERT on the history tables and USAGE on their id sequences; UPDATE of ``datasets.id`` only (a
   spend locks its dataset's row with ``SELECT ... FOR UPDATE``; the triggers refuse any real UPDATE);
   SELECT, INSERT and UPDATE on ``meta`` (trusted keys, and the row counts the triggers keep).

The app's role then cannot delete, truncate or change history, switch off or drop a trigger or replace
its function (an owner's rights), nor read the private key. A role that could act as an owner anyway (a
superuser, a member of the administrator, the owner of the schema, which may drop tables) is refused.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpdash.errors import DPDashError, LedgerError
from dpdash.ledger.signing import new_private_key, public_key, read_key_file, write_key_file
from dpdash.ledger.storage.base import APPEND_ONLY, COLUMNS, PUBLIC_KEY
from dpdash.ledger.storage.postgres import PostgresStore

__all__ = ["main", "set_up"]

_FUNCTIONS = ("dpdash_append_only()", "dpdash_count_rows()")


def _name(identifier: str) -> str:
    """An SQL identifier, quoted."""
    return '"' + identifier.replace('"', '""') + '"'


def set_up(admin_url: str, app_role: str, key_file: str | os.PathLike[str], *, timeout: float = 10.0) -> str:
    """Set up (or upgrade, or check again) the ledger at ``admin_url`` for an app that connects as
    ``app_role`` (see the module docstring); the ledger's public key.

    Raises:
        LedgerError: what is wrong, and what to do: the role is missing or could act as an owner, the key
            file exists with another key, or the administrator lacks a right. The key stays where it was
            and no rights are granted then (a new ledger's tables are created all the same).
    """
    key_path = Path(key_file).expanduser()
    store = PostgresStore(admin_url, timeout=timeout)
    try:
        with store.transaction("set up the ledger") as conn:
            store.lock_ledger(conn)
            (admin, schema) = conn.execute("SELECT current_user, current_schema()").fetchone()
            _check_role(conn, app_role, admin, schema, store.location)
            _take_ownership(conn, schema)
            key = _move_key(conn, key_path)
            _grant(conn, app_role, schema)
    finally:
        store.close()
    return key


def _check_role(conn: Any, role: str, admin: str, schema: str, where: str) -> None:
    row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = ?", (role,)).fetchone()
    if row is None:
        raise LedgerError(
            f"the role {role!r} does not exist in {where}: create it first (CREATE ROLE {_name(role)} LOGIN "
            "PASSWORD '...'), then run this again. No rights were granted."
        )
    (owner,) = conn.execute(
        "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = ?", (schema,)
    ).fetchone()
    (acts_as_admin, owns_schema) = conn.execute(
        "SELECT pg_has_role(?, ?, 'MEMBER'), pg_has_role(?, ?, 'MEMBER')", (role, admin, role, owner)
    ).fetchone()
    why = (
        "is a superuser" if row[0]
        else "is the administrator itself" if role == admin
        else f"is a member of the administrator {admin!r}" if acts_as_admin
        else f"owns the schema {schema!r} (or its database), so it could drop the tables" if owns_schema
        else None
    )  # fmt: skip
    if why is not None:
        raise LedgerError(
            f"the app's role {role!r} {why}: it could edit the history however the ledger is set up. Give "
            "the app a role of its own that owns nothing; no rights were granted."
        )


def _take_ownership(conn: Any, schema: str) -> None:
    """Hand the ledger's tables and trigger functions that another role owns to the administrator."""
    tables = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = ? AND tableowner <> current_user", (schema,)
    ).fetchall()
    for (table,) in tables:
        if table in COLUMNS:
            conn.execute(f"ALTER TABLE {_name(table)} OWNER TO CURRENT_USER")
    for function in _FUNCTIONS:
        conn.execute(f"ALTER FUNCTION {function} OWNER TO CURRENT_USER")


def _move_key(conn: Any, path: Path) -> str:
    """Move the private signing key from ``meta`` to ``path`` (or check the one there); the public key."""
    meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('signing_key', ?)", (PUBLIC_KEY,)))
    private = meta.get("signing_key")
    if private is None and PUBLIC_KEY in meta:  # set up before: its key is outside already
        if not path.exists():
            raise LedgerError(
                f"the ledger's private key is already kept outside it, and {path} does not exist: give the "
                "key file it was set up with. No rights were granted."
            )
        if public_key(read_key_file(path)) != meta[PUBLIC_KEY]:
            raise LedgerError(
                f"the key file {path} holds another key than this ledger's ({meta[PUBLIC_KEY]}): give the "
                "key file it was set up with. No rights were granted."
            )
        return meta[PUBLIC_KEY]
    if private is None:  # a ledger older than keys
        private = new_private_key()
    if path.exists():
        if read_key_file(path) != private:
            raise LedgerError(
                f"the key file {path} already exists and holds another key: give the path of a new file. "
                "The key stays in the ledger; no rights were granted."
            )
    else:
        write_key_file(path, private)  # before the commit: the key is never in neither place
    conn.execute("DELETE FROM meta WHERE key = 'signing_key'")
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (PUBLIC_KEY, public_key(private)),
    )
    return public_key(private)


def _grant(conn: Any, role: str, schema: str) -> None:
    """What the ledger's statements need, and nothing more (any earlier grant on its tables revoked)."""
    app = _name(role)
    conn.execute(f"GRANT USAGE ON SCHEMA {_name(schema)} TO {app}")
    for table in COLUMNS:
        conn.execute(f"REVOKE ALL ON TABLE {table} FROM {app}")
        if table in APPEND_ONLY:
            conn.execute(f"GRANT SELECT, INSERT ON TABLE {table} TO {app}")
            if "id" not in COLUMNS[table]:
                continue
            (sequence,) = conn.execute("SELECT pg_get_serial_sequence(?, 'id')", (table,)).fetchone()
            if sequence is not None:
                conn.execute(f"REVOKE ALL ON SEQUENCE {sequence} FROM {app}")
                conn.execute(f"GRANT USAGE ON SEQUENCE {sequence} TO {app}")
    conn.execute(f"GRANT UPDATE (id) ON TABLE datasets TO {app}")
    conn.execute(f"GRANT SELECT, INSERT, UPDATE ON TABLE meta TO {app}")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring); 0 when the ledger is set up, 1 with a message if not."""
    parser = argparse.ArgumentParser(
        prog="python -m dpdash.ledger.storage.postgres_setup",
        description="Set up a PostgreSQL ledger owned by an administrator, for an app connecting as a role "
        "that can only read and add to it.",
    )
    parser.add_argument("url", help="the ledger's database, as the administrator: postgresql://admin@host/db")
    parser.add_argument("--app-role", required=True, help="the role the app connects as (it must exist)")
    parser.add_argument(
        "--key-file", required=True, help="where to write the ledger's private signing key (a new file)"
    )
    args = parser.parse_args(argv)
    try:
        key = set_up(args.url, args.app_role, args.key_file)
    except DPDashError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(
        f"The ledger is set up for the role {args.app_role!r}: it can read and add to the history, nothing "
        f"more.\nIts signing key is in {args.key_file}: give it to the app, readable by the app's user "
        f"only, with DPDASH_SIGNING_KEY_FILE={args.key_file}.\nIts public key: {key}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
