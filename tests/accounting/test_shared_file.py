"""Several handles on one ledger file: two in this process, and other processes reading and spending.

The hazard (issue 12, item 1): closing *any* file descriptor of a file drops every POSIX lock the process
holds on it, including the locks of its SQLite connections. A second ``Ledger()`` that opened the file with
Python's ``open()`` to read its header did exactly that; another process then believed it was the last
user, checkpointed and deleted the write-ahead log, and later spends went to a deleted file: an overspend,
and committed spends lost. These tests run the sequence that showed it, with an outside dpdash process, an
outside plain-SQLite reader (as the ``sqlite3`` tool is), and a handle killed with SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpdash.accounting import Budget, BudgetExceededError, LaplaceEvent
from dpdash.ledger import Ledger

FINGERPRINT = "sha256:shared-file"
ROOT = Path(__file__).resolve().parents[2]


def run_python(code: str, *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh Python process (dpdash importable), returning its output."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, timeout=120
    )
    if check:
        assert done.returncode == 0, done.stderr
    return done


def outside_reader(path: Path) -> None:
    """What ``sqlite3 ledger.sqlite 'select count(*) from entries'`` does: open, read, close."""
    run_python(f"""
        import sqlite3
        conn = sqlite3.connect({str(path)!r})
        conn.execute("SELECT count(*) FROM entries").fetchall()
        conn.close()
    """)


def outside_spend(path: Path, epsilon: float, fingerprint: str = FINGERPRINT) -> str:
    """Another dpdash process opens the ledger, tries one spend and closes: 'spent' or 'refused'."""
    done = run_python(f"""
        from dpdash.accounting import BudgetExceededError, LaplaceEvent
        from dpdash.ledger import Ledger
        with Ledger({str(path)!r}) as ledger:
            try:
                event = LaplaceEvent(epsilon={epsilon}, sensitivity=1.0, query="outside")
                ledger.spend({fingerprint!r}, event)
                print("spent")
            except BudgetExceededError:
                print("refused")
    """)
    return done.stdout.strip()


def committed(path: Path) -> list[str]:
    """The queries of the committed entries, read by a fresh process."""
    done = run_python(f"""
        from dpdash.ledger import Ledger
        with Ledger({str(path)!r}) as ledger:
            print("\\n".join(e.query for e in ledger.entries({FINGERPRINT!r})))
    """)
    return done.stdout.split()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ledger.add_dataset(name="shared", fingerprint=FINGERPRINT, budget=Budget(1.0), accountant="basic")
    return path


def test_second_handle_and_outside_processes_never_overspend(path: Path) -> None:
    """Handles A and B here; an outside dpdash process and an outside SQLite reader open and close the
    ledger; A spends ε = 0.9; an outside process then tries ε = 0.9 against the budget of 1: refused. After
    A closes, both the entry and the refusal stand (no checkpoint overwrote anything)."""
    a = Ledger(path)
    b = Ledger(path)
    try:
        assert outside_spend(path, 0.05) == "spent"
        outside_reader(path)
        a.spend(FINGERPRINT, LaplaceEvent(epsilon=0.9, sensitivity=1.0, query="A"))
        outside_reader(path)
        assert outside_spend(path, 0.9) == "refused"
        assert b.remaining(FINGERPRINT) == pytest.approx(0.05)
        with pytest.raises(BudgetExceededError):
            b.spend(FINGERPRINT, LaplaceEvent(epsilon=0.9, sensitivity=1.0, query="B"))
    finally:
        a.close()
        b.close()
    assert committed(path) == ["outside", "A"]


@pytest.mark.slow
def test_spend_of_a_killed_handle_survives(path: Path) -> None:
    """A process with two handles spends with one and is killed with SIGKILL after the commit, while an
    outside process and an outside reader have opened and closed the ledger in between: its spend is on
    disk, and an outside spend that would exceed the budget with it is refused."""
    script = textwrap.dedent(f"""
        import sys, time
        from dpdash.accounting import LaplaceEvent
        from dpdash.ledger import Ledger
        a = Ledger({str(path)!r})
        b = Ledger({str(path)!r})
        print("open", flush=True)
        sys.stdin.readline()  # the parent lets an outside process in here
        a.spend({FINGERPRINT!r}, LaplaceEvent(epsilon=0.9, sensitivity=1.0, query="killed"))
        print("spent", flush=True)
        time.sleep(120)
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", script], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "open"
        assert outside_spend(path, 0.05) == "spent"
        outside_reader(path)
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "spent"
        outside_reader(path)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait(timeout=60)
    assert outside_spend(path, 0.9) == "refused"
    assert committed(path) == ["outside", "killed"]
