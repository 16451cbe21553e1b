"""Release requests (issue 16: an analyst asks, the owner approves or declines), on every storage.

A request stores the planned release and spends nothing; it is decided once (a new row, never an
UPDATE), also when owners in several processes decide at once; the release made after an approval must be
the approved one, is recorded at most once, and each step is in the log of actions.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from dpdash import Laplace, release
from dpdash.accounting import Budget, LaplaceEvent
from dpdash.errors import DPDashError, LedgerError, ParameterError, ParameterTypeError
from dpdash.ledger import Ledger, RequestRecord
from dpdash.queries import Count, Mean
from tests.accounting import workers
from tests.accounting.test_ledger_contract import FP, TABLE, race, register

ANALYST, OWNER = "bo@example.org", "ana@example.org"
MEAN = Mean(column="age", bounds=(0, 100))
PLANNED = {"query": MEAN.to_dict(), "mechanism": "Laplace", "epsilon": 0.4, "note": "for the annual report"}




def the_release(epsilon: float = 0.4) -> Any:
    return release(MEAN, Laplace, TABLE, epsilon=epsilon, identity=FP)


def log(ledger: Ledger) -> list[tuple[str, str | None]]:
    return [(a.action, a.user) for a in ledger.actions(FP)]


def test_a_request_stores_the_planned_release_and_spends_nothing(ledger: Ledger) -> None:
    ds = register(ledger, user=OWNER)
    asked = ledger.request_release(ds, PLANNED, user=ANALYST)
    assert isinstance(asked, RequestRecord) and asked.status == "pending" and asked.dataset == FP
    assert asked.requested_by == ANALYST and asked.decided_by is None and asked.reason == ""
    assert asked.request == {
        "query": MEAN.to_dict(), "mechanism": "laplace", "epsilon": 0.4, "delta": 0.0, "confidence": 0.95,
        "postprocess": [], "options": {}, "note": "for the annual report",
    }  # fmt: skip
    assert ledger.release_requests(ds) == [asked] == ledger.release_requests(FP, "pending")
    assert ledger.release_requests(ds, "approved") == []
    assert ledger.entries(ds) == [] and ledger.spent(ds).epsilon == 0
    (action,) = ledger.actions(ds)[1:]
    assert (action.action, action.user) == ("request", ANALYST)
    assert action.details == {"request": asked.uid, "query": "mean of age", "mechanism": "laplace",
                              "epsilon": 0.4, "delta": 0.0}  # fmt: skip


def test_a_request_is_decided_once(ledger: Ledger) -> None:
    ds = register(ledger)
    first, second = (ledger.request_release(ds, PLANNED, user=ANALYST) for _ in range(2))
    approved = ledger.decide_request(first.uid, True, user=OWNER, reason="  within the plan ")
    assert (approved.status, approved.decided_by, approved.reason) == ("approved", OWNER, "within the plan")
    assert approved.request == first.request and approved.decided_at is not None
    for approve in (True, False):
        with pytest.raises(ParameterError, match=f"already approved by {OWNER} at .*decided once"):
            ledger.decide_request(first.uid, approve, user="someone else")
    declined = ledger.decide_request(second.uid, False, user=OWNER, reason="too costly")
    assert declined.status == "declined"
    with pytest.raises(ParameterError, match="already declined"):
        ledger.decide_request(second.uid, True, user=OWNER)
    assert [r.status for r in ledger.release_requests(ds)] == ["approved", "declined"]
    assert log(ledger)[1:] == [("request", ANALYST)] * 2 + [("approve", OWNER), ("decline", OWNER)]
    assert ledger.actions(ds)[-1].details == {"request": second.uid, "reason": "too costly"}
    for unknown in ("unknown", "../../etc/passwd", "0" * 32):
        with pytest.raises(ParameterError, match="no release request"):
            ledger.decide_request(unknown, True, user=OWNER)
    with pytest.raises(ParameterTypeError, match="approve must be True or False"):
        ledger.decide_request(first.uid, "yes", user=OWNER)  # type: ignore[arg-type]
    with pytest.raises(ParameterError):
        ledger.decide_request(first.uid, True, user="owner\nforged line")
    assert len(ledger.actions(ds)) == 5


def test_only_the_approved_release_is_recorded_under_its_request(ledger: Ledger) -> None:
    ds = register(ledger)
    asked = ledger.request_release(ds, PLANNED, user=ANALYST)
    made = the_release()
    with pytest.raises(ParameterError, match="that release request is pending, not approved"):
        ledger.spend_release(ds, made, request_id=asked.uid, user=OWNER)
    ledger.decide_request(asked.uid, True, user=OWNER)
    with pytest.raises(ParameterError, match="not the one approved"):
        ledger.spend_release(ds, the_release(0.5), request_id=asked.uid, user=OWNER)
    with pytest.raises(ParameterError, match="recorded with spend_release"):
        ledger.spend_many(ds, [LaplaceEvent(epsilon=0.2, sensitivity=1.0)] * 2, request_id=asked.uid)
    assert ledger.entries(ds) == [] and ledger.release_requests(ds, "approved") != []
    entries = ledger.spend_release(ds, made, request_id=asked.uid, user=OWNER)
    assert ledger.spend_release(ds, made, request_id=asked.uid, user=OWNER) == entries  # sent again: once
    assert [r.status for r in ledger.release_requests(ds)] == ["released"]
    assert ledger.release_requests(ds, "approved") == [] and ledger.entries(ds) == entries
    assert log(ledger)[1:] == [("request", ANALYST), ("approve", OWNER), ("release", OWNER)]
    released = ledger.actions(ds)[-1].details
    assert released["request_id"] == asked.uid and released["first_entry"] == entries[0].uid
    # The released values, found by the request's uid (as the app's list shows them): what was published.
    assert ledger.published(ds)[released["first_entry"]]["values"] == list(made.values)
    # A declined request, or another dataset's, cannot be released.
    declined = ledger.request_release(ds, PLANNED, user=ANALYST)
    ledger.decide_request(declined.uid, False, user=OWNER)
    with pytest.raises(ParameterError, match="that release request is declined"):
        ledger.spend_release(ds, the_release(), request_id=declined.uid)
    other = ledger.add_dataset(name="o", fingerprint="sha256:other", budget=Budget(1.0), accountant="basic")
    with pytest.raises(ParameterError, match="release request of another dataset"):
        ledger.spend(other, LaplaceEvent(epsilon=0.1, sensitivity=1.0), request_id=declined.uid)
    assert ledger.entries(other) == [] and len(ledger.entries(ds)) == 2


BAD_REQUESTS = [
    ({**PLANNED, "values": [41.2]}, ParameterError, "never values"),
    ({**PLANNED, "true_value": 3}, ParameterError, "never values"),
    ({"query": MEAN.to_dict(), "mechanism": "laplace"}, ParameterError, "needs 'epsilon'"),
    ({**PLANNED, "epsilon": -1}, ParameterError, "epsilon"),
    ({**PLANNED, "epsilon": float("nan")}, ParameterError, "epsilon"),
    ({**PLANNED, "mechanism": "wishart"}, ParameterError, "mechanism must be one of"),
    ({**PLANNED, "mechanism": "gaussian"}, ParameterError, "delta is required"),
    ({**PLANNED, "delta": 1e-6}, ParameterError, "delta must not be given"),
    ({**PLANNED, "mechanism": "exponential"}, ParameterError, "numeric query"),
    ({**PLANNED, "query": {"type": "no such query"}}, DPDashError, None),
    ({**PLANNED, "query": "count"}, ParameterTypeError, "to_dict"),
    ({**PLANNED, "postprocess": ["delete_everything"]}, ParameterError, "postprocess steps"),
    ({**PLANNED, "options": {"sensitivity": 0.0}}, ParameterError, "not allowed"),
    ({**PLANNED, "note": "n" * 1001}, ParameterError, "note"),
    ({**PLANNED, "confidence": 1.0}, ParameterError, "confidence"),
    ([PLANNED], ParameterTypeError, "must be a dict"),
]


def test_a_bad_request_is_refused_and_records_nothing(ledger: Ledger) -> None:
    ds = register(ledger)
    for request, error, message in BAD_REQUESTS:
        with pytest.raises(error, match=message):
            ledger.request_release(ds, request, user=ANALYST)  # type: ignore[arg-type]
    for label in ("", "a\u202eb", "x" * 201, None):
        with pytest.raises(DPDashError):
            ledger.request_release(ds, PLANNED, user=label)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="no dataset"):
        ledger.request_release("sha256:unregistered", PLANNED, user=ANALYST)
    with pytest.raises(ParameterError, match="status must be"):
        ledger.release_requests(ds, "lost")
    gaussian = {**PLANNED, "mechanism": "gaussian", "delta": 1e-7, "postprocess": ["clamp_to_bounds"]}
    assert ledger.request_release(ds, gaussian, user=ANALYST).request["delta"] == 1e-7
    assert len(ledger.release_requests(ds)) == 1 and len(ledger.actions(ds)) == 2


@pytest.fixture(scope="module")
def context() -> multiprocessing.context.BaseContext:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["dpdash.accounting", "tests.accounting.workers"])
    return ctx


def test_owners_deciding_at_once_record_one_decision(location: str | Path, context: Any) -> None:
    """8 processes approve or decline (by the parity of their process id) one request at once: exactly one
    decision is recorded, the others are told who decided, and the log has one decision."""
    with Ledger(location) as ledger:
        asked = ledger.request_release(register(ledger), PLANNED, user=ANALYST)
    reports = race(context, workers.decide_once, location, asked.uid, processes=8)
    decided = [approve for outcome, approve in reports if outcome == "decided"]
    refused = [message for outcome, message in reports if outcome == "refused"]
    assert len(decided) == 1 and len(refused) == 7
    with Ledger(location) as ledger:
        (final,) = ledger.release_requests(FP)
        decisions = [a for a in ledger.actions(FP) if a.action in ("approve", "decline")]
    assert final.status == ("approved" if decided[0] else "declined")
    assert all(f"already {final.status} by {final.decided_by}" in message for message in refused)
    assert len(decisions) == 1 and decisions[0].user == final.decided_by


def test_count_requests_use_the_integer_mechanisms(ledger: Ledger) -> None:
    """A request is checked as ``release`` checks its arguments: a count with the geometric mechanism."""
    ds = register(ledger)
    asked = ledger.request_release(ds, {"query": Count().to_dict(), "mechanism": "Geometric", "epsilon": 0.1,
                                        "postprocess": ["clamp_nonnegative"]}, user=ANALYST)  # fmt: skip
    assert asked.request["mechanism"] == "geometric" and asked.request["postprocess"] == ["clamp_nonnegative"]


def test_a_request_reads_back_as_it_was_made(ledger: Ledger) -> None:
    """Every part of the planned release is kept as asked (post-processing, confidence, note), each request
    on its own dataset only, and a pending request's decision stays empty."""
    ds = register(ledger)
    steps = ["clamp_to_bounds", "round"]
    planned = {**PLANNED, "confidence": 0.9, "postprocess": steps, "note": "for the “annual” report"}
    asked = ledger.request_release(ds, planned, user=ANALYST)
    (read,) = ledger.release_requests(ds)
    assert read == asked and read.request["postprocess"] == steps and read.request["confidence"] == 0.9
    assert read.request["note"] == "for the “annual” report"
    assert (read.decided_by, read.decided_at, read.reason) == (None, None, "")
    other = ledger.add_dataset(name="o", fingerprint="sha256:other", budget=Budget(1.0), accountant="basic")
    assert ledger.release_requests(other) == []


def test_an_unreadable_stored_request_is_a_message(tmp_path: Path) -> None:
    """A request row that is not JSON (a damaged SQLite file) is a LedgerError naming it, not a crash."""
    import sqlite3

    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ledger.request_release(register(ledger), PLANNED, user=ANALYST)
    bad = "f" * 32
    with sqlite3.connect(path) as conn:  # the ledger is append-only: a damaged row is added, not changed
        conn.execute(
            "INSERT INTO release_requests (uid, dataset_id, request, requested_by, created_at) "
            "SELECT ?, id, '{not json', 'x', '2026-01-01T00:00:00+00:00' FROM datasets",
            (bad,),
        )
    conn.close()
    with Ledger(path) as ledger, pytest.raises(LedgerError, match=f"unreadable release request {bad}"):
        ledger.release_requests(FP)
