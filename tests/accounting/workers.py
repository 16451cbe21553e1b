"""Code run in child processes by the reliability tests (importable by name, as multiprocessing needs)."""

from __future__ import annotations

import os
import time
from typing import Any

from dpdash.accounting import BudgetExceededError, LaplaceEvent
from dpdash.errors import ParameterError
from dpdash.ledger import Ledger


def spend_until_refused(path: str, fingerprint: str, epsilon: float, start: Any, results: Any) -> None:
    """Wait for the start signal, then spend ε until the ledger refuses; report how many went through."""
    ledger = Ledger(path)
    start.wait()
    spent = 0
    while True:
        try:
            ledger.spend(fingerprint, LaplaceEvent(epsilon=epsilon, sensitivity=1.0, query="race"))
        except BudgetExceededError:
            break
        spent += 1
    ledger.close()
    results.put(spent)


def spend_once(path: str, fingerprint: str, epsilon: float, start: Any, results: Any) -> None:
    """Wait for the start signal, then try one spend of ε; report 1 if it went through, 0 if refused."""
    ledger = Ledger(path)
    start.wait()
    try:
        ledger.spend(fingerprint, LaplaceEvent(epsilon=epsilon, sensitivity=1.0, query="race"))
        results.put(1)
    except BudgetExceededError:
        results.put(0)
    finally:
        ledger.close()


def spend_and_hang(path: str, fingerprint: str, ready: Any, pause_before_commit: bool) -> None:
    """Spend once and hang, either inside the transaction (entry written, not committed) or after the
    commit, so that the parent can kill this process there."""
    from dpdash.ledger import spending

    def hang() -> None:
        ready.set()
        time.sleep(120)

    if pause_before_commit:
        spending._before_commit = hang
    ledger = Ledger(path)
    ledger.spend(fingerprint, LaplaceEvent(epsilon=0.25, sensitivity=1.0, query="killed"))
    hang()


def spend_with_request(
    path: str, fingerprint: str, epsilon: float, request_id: str, start: Any, results: Any
) -> None:
    """Wait for the start signal, then send one spend of ε under ``request_id``; report its entries' uids."""
    ledger = Ledger(path)
    start.wait()
    try:
        event = LaplaceEvent(epsilon=epsilon, sensitivity=1.0, query="retried")
        entry = ledger.spend(fingerprint, event, request_id=request_id)
        results.put(entry.uid)
    finally:
        ledger.close()


def spend_once_as(path: str, fingerprint: str, epsilon: float, user: str, start: Any, results: Any) -> None:
    """``spend_once`` by ``user``: the ledger records a "release" or a "refused" action for it."""
    ledger = Ledger(path)
    start.wait()
    try:
        ledger.spend(fingerprint, LaplaceEvent(epsilon=epsilon, sensitivity=1.0, query="race"), user=user)
        results.put(1)
    except BudgetExceededError:
        results.put(0)
    finally:
        ledger.close()


def decide_once(path: str, fingerprint: str, request_uid: str, start: Any, results: Any) -> None:
    """Wait for the start signal, then approve (even process id) or decline (odd) the release request;
    report ("decided", approve) or ("refused", the message)."""
    ledger = Ledger(path)
    start.wait()
    approve = os.getpid() % 2 == 0
    try:
        ledger.decide_request(request_uid, approve, user=f"owner {os.getpid()}")
        results.put(("decided", approve))
    except ParameterError as error:
        results.put(("refused", str(error)))
    finally:
        ledger.close()


def spend_through_outage(path: str, fingerprint: str, epsilon: float, start: Any, results: Any) -> None:
    """Wait for the start signal, then spend ε under request ids of this process's own until the ledger
    refuses. A request that fails (server down, connection lost during its commit) is sent again under
    the same id until it has an answer. Each acknowledged spend is reported at once, as ("ack", request
    id, entry uid); then ("done", number of errors met). ("ready",) says the ledger is open."""
    from dpdash.ledger import LedgerError

    ledger = Ledger(path, timeout=2)
    results.put(("ready",))
    start.wait()
    errors, i = 0, 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        request = f"{os.getpid()}-{i}"
        try:
            event = LaplaceEvent(epsilon=epsilon, sensitivity=1.0, query="outage")
            entry = ledger.spend(fingerprint, event, request_id=request)
        except BudgetExceededError:
            break
        except LedgerError:
            errors += 1
            time.sleep(0.1)
            continue  # the same request again
        results.put(("ack", request, entry.uid))
        i += 1
    ledger.close()
    results.put(("done", errors))
