"""Accounting tests never touch the real ledger: ``DPDASH_LEDGER`` points into the test's tmp_path.
``pg_url``: a fresh PostgreSQL database for a ledger, on the session's cluster (``postgres``).
``location`` and ``ledger``: a fresh ledger of each storage (SQLite, PostgreSQL), for the contract suites;
a test file with a ``ledger`` fixture of its own keeps it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from dpdash.ledger import Ledger

if TYPE_CHECKING:
    from tests.servers import PostgresServer

#: The storages every contract test runs on.
BACKENDS = ["sqlite", "postgresql"]
#: The role PostgreSQL ledgers are opened as in tests: it logs in over TCP with this password.
LEDGER_ROLE = "ledger_keeper"
LEDGER_PASSWORD = "s3cr:t/@%led\"ger'"


@pytest.fixture(autouse=True)
def _private_ledger_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "default-ledger.sqlite"))


@pytest.fixture(scope="session")
def ledger_server(postgres: PostgresServer) -> PostgresServer:
    """The session's cluster with ``LEDGER_ROLE`` (which owns the test databases)."""
    from psycopg import sql

    postgres.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(LEDGER_ROLE)))
    postgres.execute(
        sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
            sql.Identifier(LEDGER_ROLE), sql.Literal(LEDGER_PASSWORD)
        )
    )
    return postgres


@pytest.fixture
def pg_url(ledger_server: PostgresServer) -> Iterator[str]:
    """The URL (with the password) of a fresh, empty database owned by ``LEDGER_ROLE``; dropped after."""
    from psycopg import sql

    name = f"ledger_{uuid.uuid4().hex[:12]}"
    ledger_server.execute(
        sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(name), sql.Identifier(LEDGER_ROLE))
    )
    try:
        yield ledger_server.url(LEDGER_ROLE, LEDGER_PASSWORD, name)
    finally:
        ledger_server.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def make_location(kind: str, request: pytest.FixtureRequest, folder: Path) -> str | Path:
    """Where a fresh ledger of ``kind`` is: an SQLite file in ``folder``, or a new database's URL."""
    if kind == "sqlite":
        return folder / f"ledger-{uuid.uuid4().hex[:8]}.sqlite"
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """Where a fresh ledger is: an SQLite file, or a new PostgreSQL database's URL."""
    return make_location(request.param, request, tmp_path)


@pytest.fixture
def ledger(location: str | Path) -> Iterator[Ledger]:
    with Ledger(location, timeout=10) as handle:
        yield handle
