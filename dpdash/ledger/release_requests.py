"""Release requests: an analyst asks for a release, the dataset's owner approves or declines it (schema 5).

The flow (issue 16's roles; the screens are the app's):

1. An analyst plans a release and asks for it: ``Ledger.request_release(ds, request, user=...)`` stores the
   planned release (``planned_release``: the query as a dict, the mechanism, ε, δ, the confidence, the
   post-processing steps, the mechanism options and a note; never a value, nothing drawn, no budget
   spent) and returns its ``RequestRecord``, "pending".
2. The owner decides once: ``Ledger.decide_request(uid, approve, user=..., reason=...)``. A decision is a
   new row, never an UPDATE of the request; a request already decided is refused with who decided it and
   when, so of two owners deciding at once (two tabs, two machines) exactly one decision is recorded: the
   decision takes the dataset's lock (``Store.lock_dataset``), and the decisions table holds one row per
   request.
3. The owner's app makes the release it describes (``dpdash.release.release`` with these arguments, on
   the owner's data) and records it with ``Ledger.spend_release(ds, release, request_id=record.uid)``. The
   ledger refuses that spend unless the request is approved and the release is the one approved (its
   query, mechanism, ε and δ); with the request's uid as the idempotency key (``request_ids``) it is
   released at most once, and the request then reads "released".

Each step records its action in the log (``actions``: request, approve, decline, release), in its own
transaction. Requests stay in the ledger that received them (an export carries the actions about them,
not the requests). This module checks a planned release and holds the queries; each storage (``storage``)
creates the tables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from dpdash import _validation as check
from dpdash.errors import DPDashError, LedgerError, ParameterError, ParameterTypeError
from dpdash.ledger.records import RequestRecord
from dpdash.ledger.storage.base import Connection

__all__ = [
    "MAX_REASON",
    "MAX_REQUEST",
    "MAX_WAITING",
    "REQUEST_KEYS",
    "STATUSES",
    "insert_decision",
    "insert_release_request",
    "planned_release",
    "query_label",
    "read_release_requests",
    "same_release",
    "waiting_of",
]

#: What a request holds: ``dpdash.release.release``'s arguments but the data.
REQUEST_KEYS = ("query", "mechanism", "epsilon", "delta", "confidence", "postprocess", "options", "note")
#: A request's states, in order.
STATUSES = ("pending", "approved", "declined", "released")
#: The largest request, in characters of its JSON; the longest reason and note, in characters.
MAX_REQUEST = 8000
MAX_REASON = 1000
#: The most requests one person may have waiting (undecided) on one table: a flood of requests cannot
#: bury the others' or make every owner's page slow.
MAX_WAITING = 20


def planned_release(request: object) -> dict[str, Any]:
    """The request as it is stored: ``release``'s arguments checked as ``release`` checks them, without
    the data. ``query`` is a query's ``to_dict()`` (rebuilt and written again), ``mechanism`` a name in
    ``dpdash.release.MECHANISMS`` (or the class), ``epsilon`` > 0, ``delta`` for the Gaussian mechanisms
    only, ``confidence`` in (0, 1) (default 0.95), ``postprocess`` a list of steps, ``options`` the
    mechanism options ``release`` allows, ``note`` the analyst's words (at most ``MAX_REASON`` characters).

    Raises:
        ParameterError, ParameterTypeError: an unknown key (a request holds no values), or an argument
            ``release`` would refuse; the message says which.
    """
    from dpdash.queries import query_from_dict
    from dpdash.release import (
        MECHANISMS,
        check_compatible,
        check_options,
        describe_postprocessing,
        mechanism_class,
    )

    if not isinstance(request, Mapping):
        raise ParameterTypeError(f"a release request must be a dict, got {type(request).__name__}")
    unknown = sorted(str(key) for key in request if key not in REQUEST_KEYS)
    if unknown:
        raise ParameterError(
            f"a release request holds the planned release only ({', '.join(REQUEST_KEYS)}), never values; "
            f"got {unknown}"
        )
    for key in ("query", "mechanism", "epsilon"):
        if key not in request:
            raise ParameterError(f"a release request needs {key!r}")
    if not isinstance(request["query"], Mapping):
        raise ParameterTypeError("a release request's query must be a query's to_dict()")
    try:
        query = query_from_dict(dict(request["query"]))
    except (LookupError, TypeError, AttributeError, ValueError) as error:
        if isinstance(error, DPDashError):
            raise
        raise ParameterError(f"a release request's query is not a query spec ({error})") from None
    cls = mechanism_class(request["mechanism"])
    check_compatible(query, cls)
    epsilon = check.epsilon(request["epsilon"])
    delta = request.get("delta")
    if cls.__name__ in ("Gaussian", "DiscreteGaussian"):
        if delta is None:
            raise ParameterError(f"delta is required for the {cls.__name__} mechanism, got delta=None")
        delta = check.open_unit(delta, "delta")
    elif delta not in (None, 0, 0.0):
        raise ParameterError(f"delta must not be given for the {cls.__name__} mechanism, got delta={delta!r}")
    else:
        delta = 0.0
    confidence = check.open_unit(request.get("confidence", 0.95), "confidence")
    steps = request.get("postprocess") or []
    if isinstance(steps, str) or not isinstance(steps, Sequence):
        raise ParameterTypeError("a release request's postprocess must be a list of steps")
    for step in steps:
        describe_postprocessing(step)
    note = request.get("note", "")
    if not isinstance(note, str) or len(note) > MAX_REASON:
        raise ParameterError(f"a release request's note must be text of at most {MAX_REASON} characters")
    planned = {
        "query": query.to_dict(),
        "mechanism": next(name for name, known in MECHANISMS.items() if known is cls),
        "epsilon": epsilon,
        "delta": delta,
        "confidence": confidence,
        "postprocess": list(steps),
        "options": check_options(cls, request.get("options")),
        "note": note,
    }
    try:
        text = json.dumps(planned, ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as error:
        raise ParameterError(f"a release request must be JSON ({error})") from None
    if len(text) > MAX_REQUEST:
        raise ParameterError(f"a release request must be small (at most {MAX_REQUEST} characters of JSON)")
    stored: dict[str, Any] = json.loads(text)
    return stored


def query_label(planned: Mapping[str, Any]) -> str:
    """The planned query's name for people ("mean of age")."""
    from dpdash.queries import query_from_dict

    return str(query_from_dict(dict(planned["query"])).name)


def same_release(planned: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    """Whether a release record (``Release.to_json()``) is the planned release: its query, mechanism, ε and
    δ (what the budget is spent on; the confidence and post-processing cost nothing)."""
    from dpdash.release import mechanism_class

    return (
        record.get("query") == planned["query"]
        and record.get("mechanism") == mechanism_class(planned["mechanism"]).__name__
        and record.get("epsilon") == planned["epsilon"]
        and record.get("delta") == planned["delta"]
    )


def waiting_of(conn: Connection, dataset_id: int, user: str) -> int:
    """How many of ``user``'s requests on the dataset wait for a decision."""
    (count,) = conn.execute(
        "SELECT COUNT(*) FROM release_requests r LEFT JOIN request_decisions x ON x.request_uid = r.uid "
        "WHERE r.dataset_id = ? AND r.requested_by = ? AND x.request_uid IS NULL",
        (dataset_id, user),
    ).fetchone()
    return int(count)


def insert_release_request(
    conn: Connection, uid: str, dataset_id: int, planned: Mapping[str, Any], user: str, created_at: str
) -> None:
    conn.execute(
        "INSERT INTO release_requests (uid, dataset_id, request, requested_by, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (uid, dataset_id, json.dumps(planned, ensure_ascii=False, allow_nan=False), user, created_at),
    )


def insert_decision(
    conn: Connection, uid: str, approve: bool, user: str, reason: str, created_at: str
) -> None:
    conn.execute(
        "INSERT INTO request_decisions (request_uid, decision, decided_by, reason, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (uid, "approved" if approve else "declined", user, reason, created_at),
    )


def read_release_requests(
    conn: Connection, condition: str, parameters: Sequence[Any], where: str
) -> list[RequestRecord]:
    """The release requests matching ``condition`` (SQL on ``r``, the requests, with ``?`` parameters),
    oldest first, with their decisions and whether they were released. ``where`` names the ledger."""
    rows = conn.execute(
        "SELECT r.uid, d.fingerprint, r.request, r.requested_by, r.created_at, x.decision, x.decided_by, "
        "x.reason, x.created_at, q.id FROM release_requests r JOIN datasets d ON d.id = r.dataset_id "
        "LEFT JOIN request_decisions x ON x.request_uid = r.uid "
        "LEFT JOIN requests q ON q.dataset_id = r.dataset_id AND q.request_id = r.uid "
        f"WHERE {condition} ORDER BY r.id",
        tuple(parameters),
    ).fetchall()
    out = []
    for uid, fp, text, by, at, decision, decided_by, reason, decided_at, spent in rows:
        try:
            planned = json.loads(text)
        except ValueError as error:
            raise LedgerError(
                f"the ledger {where} holds an unreadable release request {uid}: {error}"
            ) from None
        status = "pending" if decision is None else decision
        if status == "approved" and spent is not None:
            status = "released"
        out.append(RequestRecord(uid, fp, planned, by, at, status, decided_by, decided_at, reason or ""))
    return out
