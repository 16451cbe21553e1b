"""Suite-wide setup: no test ever reads or writes the user's real budget ledger; the audit option."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.servers import PostgresServer

#: This process's own ``__main__`` (a pytest worker's), before any test ran a Streamlit script.
MAIN_MODULE = sys.modules["__main__"]


def pytest_configure(config: object) -> None:
    """Point DPDASH_LEDGER at a fresh temporary file before anything (including module- and
    session-scoped fixtures and the browser tests' server, which inherits the environment) opens it."""
    folder = Path(tempfile.mkdtemp(prefix="dpdash-tests-"))
    os.environ["DPDASH_LEDGER"] = str(folder / "ledger.sqlite")


def pytest_make_parametrize_id(config: pytest.Config, val: object, argname: str) -> str | None:
    """A ``bytes`` parameter is named by its argument, not its content: a file made at collection (an
    .xlsx holds the second it was written) would otherwise give each xdist worker other test ids."""
    return argname if isinstance(val, bytes) else None


def _servers(item: pytest.Item) -> list[str]:
    """The servers ``item`` needs: a fixture named ``postgres`` or ``spark`` among its fixtures, or a
    parameter ``"postgresql"`` (the contract suites' storage, whose database is requested lazily)."""
    names = set(getattr(item, "fixturenames", ()))
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(isinstance(value, str) and value == "postgresql" for value in params.values()):
        names.add("postgres")
    return [server for server in ("postgres", "spark") if server in names]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs a PostgreSQL server or a Spark session, so that ``make check`` can leave
    them out; and give each server's tests one group, so that a parallel run (``-n 2 --dist loadgroup``)
    starts one Spark session, on one worker, and the PostgreSQL cluster on one worker (the few tests that
    need both go with Spark), while the two groups run side by side. First among the hooks: a worker of
    pytest-xdist reads the groups in its own hook, which otherwise runs before this one and finds none."""
    for item in items:
        servers = _servers(item)
        for server in servers:
            item.add_marker(getattr(pytest.mark, server))
        if servers:
            item.add_marker(pytest.mark.xdist_group("spark" if "spark" in servers else "postgres"))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """On a worker of ``--dist loadgroup``, fail a server's test whose group did not take: pytest-xdist
    tells the controller a test's group by a suffix of its node id, and a pytest that ignores that (9.2
    with pytest-xdist 3.8) spreads a server's tests over every worker, each starting its own server."""
    grouped = getattr(item.config.option, "loadgroup", False) and item.get_closest_marker("xdist_group")
    if grouped and "@" not in item.nodeid:
        pytest.fail(
            "pytest-xdist's --dist loadgroup did not group this test: use the pytest and pytest-xdist "
            "pinned in requirements-dev.txt (`make venv`)",
            pytrace=False,
        )


def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Put the process's own ``__main__`` back after every test. Streamlit's script runner (each AppTest)
    installs the script it runs as ``__main__`` and leaves it there, and a process started later by
    ``spawn`` or ``forkserver`` first runs ``__main__``'s file again: app.py, in each of the 16 racing
    processes of a later ledger test (≈ 1 core-second each)."""
    sys.modules["__main__"] = MAIN_MODULE


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


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local Spark session (2 cores, in this process, on Debian's Java 17) for the whole run; its
    scratch folders under one temporary folder; stopped at the end."""
    if shutil.which("java") is None:
        raise RuntimeError("Java is not installed: run `make debian` (installs openjdk-17-jre-headless)")
    from dpdash.engines import spark_session

    scratch = Path(tempfile.mkdtemp(prefix="dpdash-spark-"))
    session = spark_session(
        "local[2]",
        **{
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.adaptive.enabled": "false",  # tiny tables: no re-planning between stages
            "spark.default.parallelism": "2",
            "spark.sql.codegen.wholeStage": "false",  # tiny tables: compiling a plan costs more than it saves
            "spark.sql.codegen.factoryMode": "NO_CODEGEN",
            "spark.sql.warehouse.dir": str(scratch / "warehouse"),
            "spark.local.dir": str(scratch / "local"),
            # A short run on a busy machine: the quick compiler only and one garbage-collecting thread
            # (measured over the Spark tests: the JVM's CPU 92 → 68 core-s, their time +5 % alone).
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={scratch / 'derby'} "
            "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        },
    )
    try:
        yield session
    finally:
        session.stop()
        shutil.rmtree(scratch, ignore_errors=True)
