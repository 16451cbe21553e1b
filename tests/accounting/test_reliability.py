"""The ledger under stress: a process killed mid-spend, and files that are not ledgers (concurrent spenders
race in the storage contract, tests/accounting/test_ledger_contract.py, on SQLite and PostgreSQL alike).

Child processes come from a fork server that has already imported dpdash (fast, and no SQLite connection
is ever inherited across a fork).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import sqlite3
from pathlib import Path

import pytest

from dpdash.accounting import Budget, LaplaceEvent
from dpdash.ledger import Ledger, LedgerError
from tests.accounting import workers

FINGERPRINT = "sha256:shared-dataset"


@pytest.fixture(scope="module")
def context() -> multiprocessing.context.BaseContext:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["dpdash.accounting", "tests.accounting.workers"])
    return ctx


def make_ledger(path: Path, budget: Budget, accountant: str = "basic") -> None:
    with Ledger(path) as ledger:
        ledger.add_dataset(name="shared", fingerprint=FINGERPRINT, budget=budget, accountant=accountant)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- a process killed in the middle of a spend ---------------------------------------------------


def run_and_kill(context, path: Path, pause_before_commit: bool) -> None:  # type: ignore[no-untyped-def]
    ready = context.Event()
    child = context.Process(
        target=workers.spend_and_hang, args=(str(path), FINGERPRINT, ready, pause_before_commit)
    )
    child.start()
    try:
        assert ready.wait(timeout=60), "the child never reached the point to kill it at"
        if pause_before_commit:
            # The child holds the write lock with its entry written but not committed: nobody else can spend.
            with Ledger(path, timeout=0.2) as other, pytest.raises(LedgerError, match="cannot lock"):
                other.spend(FINGERPRINT, LaplaceEvent(epsilon=0.01, sensitivity=1.0))
    finally:
        if child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
        child.join(timeout=30)
    assert child.exitcode == -signal.SIGKILL


@pytest.mark.slow
def test_a_spend_killed_before_its_commit_leaves_no_trace(tmp_path: Path, context) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "ledger.sqlite"
    make_ledger(path, Budget(1.0))
    run_and_kill(context, path, pause_before_commit=True)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 0
    finally:
        conn.close()
    with Ledger(path) as ledger:  # opens cleanly, the lock is free, and the whole budget is there
        assert ledger.entries(FINGERPRINT) == []
        ledger.spend(FINGERPRINT, LaplaceEvent(epsilon=1.0, sensitivity=1.0))


@pytest.mark.slow
def test_a_spend_killed_after_its_commit_is_there_whole(tmp_path: Path, context) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "ledger.sqlite"
    make_ledger(path, Budget(1.0))
    run_and_kill(context, path, pause_before_commit=False)
    with Ledger(path) as ledger:
        (entry,) = ledger.entries(FINGERPRINT)
        assert entry.event == LaplaceEvent(epsilon=0.25, sensitivity=1.0, query="killed")
        assert ledger.remaining(FINGERPRINT) == pytest.approx(0.75)


# ---- files that are not ledgers ------------------------------------------------------------------------


def assert_refused_untouched(path: Path, message: str) -> None:
    """Refused with a clear message; the file's bytes are unchanged. (Reading a database in WAL mode makes
    SQLite create its -shm index and an empty -wal log beside it; nothing is written to either.)"""
    before = digest(path)
    siblings = {p.name for p in path.parent.iterdir()}
    with pytest.raises(LedgerError, match=message):
        Ledger(path)
    assert digest(path) == before
    for name in {p.name for p in path.parent.iterdir()} - siblings:
        assert name in {path.name + "-wal", path.name + "-shm"}
        if name.endswith("-wal"):
            assert (path.parent / name).stat().st_size == 0


def test_random_bytes(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    path.write_bytes(os.urandom(5000))
    assert_refused_untouched(path, "not an SQLite database")


def test_a_text_file(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    path.write_text("id,age\n1,40\n")
    assert_refused_untouched(path, "not an SQLite database")


def test_another_applications_database(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
    conn.execute("INSERT INTO invoices (amount) VALUES (12.5)")
    conn.commit()
    conn.close()
    assert_refused_untouched(path, "another SQLite database.*invoices")


def test_a_ledger_from_a_newer_dpdash(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    make_ledger(path, Budget(1.0))
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    assert_refused_untouched(path, "newer dpdash")


def test_a_ledger_whose_triggers_were_dropped(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    make_ledger(path, Budget(1.0))
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER entries_no_delete")
    conn.commit()
    conn.close()
    assert_refused_untouched(path, "append-only triggers")


def filled_ledger(path: Path) -> None:
    make_ledger(path, Budget(1000.0))
    with Ledger(path) as ledger:
        for i in range(300):
            ledger.spend(FINGERPRINT, LaplaceEvent(epsilon=0.01, sensitivity=1.0, query=f"query number {i}"))


def test_a_truncated_ledger(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    filled_ledger(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert_refused_untouched(path, "corrupted")


def test_a_ledger_with_a_damaged_page(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    filled_ledger(path)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 6 * page
    data[3 * page : 4 * page] = os.urandom(page)
    path.write_bytes(bytes(data))
    assert_refused_untouched(path, "corrupted")


def test_a_folder_at_the_ledger_path(tmp_path: Path) -> None:
    (tmp_path / "ledger.sqlite").mkdir()
    with pytest.raises(LedgerError, match="not a file"):
        Ledger(tmp_path / "ledger.sqlite")


def test_an_empty_file_becomes_a_ledger(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    path.touch()
    with Ledger(path) as ledger:
        assert ledger.datasets() == []
