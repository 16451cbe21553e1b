"""Suite-wide setup: no test ever reads or writes the user's real budget ledger; the audit option."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import PostgresServer


def pytest_configure(config: object) -> None:
    """Point DPDASH_LEDGER at a fresh temporary file before anything (including module- and
    session-scoped fixtures and the browser tests' server, which inherits the environment) opens it."""
    folder = Path(tempfile.mkdtemp(prefix="dpdash-tests-"))
    os.environ["DPDASH_LEDGER"] = str(folder / "ledger.sqlite")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--audit=strong``: the privacy audits (tests/audit) run 10× more trials with stricter power
    targets; the default ``fast`` keeps the suite quick."""
    parser.addoption(
        "--audit",
        choices=("fast", "strong"),
        default="fast",
        help="trials of the empirical privacy audits: fast (default) or strong (10x, minutes)",
    )


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One PostgreSQL cluster for the session (tests/servers.py): 127.0.0.1, a free port, stopped and
    removed at the end."""
    # Under /tmp itself: the server's unprivileged user must be able to reach its folder.
    server = PostgresServer.create(Path(tempfile.mkdtemp(prefix="dpdash-postgres-")))
    try:
        yield server
    finally:
        server.remove()
