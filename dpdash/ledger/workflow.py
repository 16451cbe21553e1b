"""``Ledger``'s log of who did what and the release requests analysts make and owners decide (schema 5:
``actions``, ``release_requests``)."""

from __future__ import annotations

import uuid
from typing import Any

from dpdash import _validation as check
from dpdash.errors import (
    ParameterError,
    ParameterTypeError,
)
from dpdash.ledger.actions import (
    APP_ACTIONS,
    details_of,
    read_actions,
    short,
    user_label,
)
from dpdash.ledger.records import (
    Action,
    Dataset,
    RequestRecord,
)
from dpdash.ledger.records import now as _now
from dpdash.ledger.records import text as _text
from dpdash.ledger.release_requests import (
    MAX_REASON,
    MAX_WAITING,
    STATUSES,
    insert_decision,
    insert_release_request,
    planned_release,
    query_label,
    read_release_requests,
    same_release,
    waiting_of,
)
from dpdash.ledger.storage.base import Connection
from dpdash.ledger.versions import (
    read_versions,
)

__all__ = ["Workflow"]


class Workflow:
    """``Ledger``'s log of actions and release requests (see the module docstring)."""

    # ---- who did what (schema 5; see ``actions``) ------------------------------------------------
    def record_action(
        self,
        action: str,
        *,
        user: str,
        dataset: Dataset | str | None = None,
        details: dict[str, Any] | None = None,
    ) -> Action:
        """Record what the app did that the ledger cannot see: ``"load"`` (a table loaded), ``"connect"``
        (a table connected where it lives), ``"facts"`` (its public facts saved).

        The ledger's own writes record theirs (budget, release, import, export, ...) in their own
        transaction; those words are refused here, so the log never says a release or an approval
        happened when it did not.

        Args:
            action: one of ``actions.APP_ACTIONS``.
            user: who (``actions.user_label``): an e-mail, a sign-in subject, "local owner"; never a
                password.
            dataset: the table's fingerprint (it need not have a budget), a ``Dataset``, or ``None``.
            details: a small JSON object (``actions.details_of``): names and counts, never the data.

        Returns:
            The recorded ``Action``.
        """
        if action not in APP_ACTIONS:
            raise ParameterError(
                f"record_action takes {', '.join(APP_ACTIONS)}; the ledger records its own writes' actions "
                f"itself, got action={short(action, 40)!r}"
            )
        label = self._user(user_label(user))
        fp = dataset.fingerprint if isinstance(dataset, Dataset) else dataset
        if fp is not None and (not isinstance(fp, str) or not fp.strip() or len(fp) > 200):
            raise ParameterError(
                "dataset must be a Dataset, a fingerprint (text of at most 200 characters) or None"
            )
        checked = details_of(details)
        self._need_schema(5, "record the action")
        with self._transaction("record the action") as conn:
            made = self._log(conn, action, label, fp, checked)
        assert made is not None
        return made

    def actions(self, dataset: Dataset | str | None = None) -> list[Action]:
        """The log of who did what, oldest first: every action (``None``), or those about a dataset (given
        as a ``Dataset`` or a fingerprint: a registered dataset's include its versions'; any other
        fingerprint's are that table's). Empty on a ledger older than the log."""
        if self._store.schema < 5:
            return []
        with self._reading() as conn:
            tables = None
            if dataset is not None:
                key = dataset.fingerprint if isinstance(dataset, Dataset) else _text(dataset, "dataset")
                found = self._find(conn, key)
                tables = [key]
                if found is not None:
                    found_id = self._dataset_id(conn, found.fingerprint)
                    versions = read_versions(conn, found_id, found.fingerprint)
                    tables = [found.fingerprint, *(v.fingerprint for v in versions)]
            return read_actions(conn, tables, self._store.any_of, self._where)

    # ---- release requests (schema 5; see ``release_requests``) -------------------------------------
    def request_release(self, dataset: Dataset | str, request: dict[str, Any], *, user: str) -> RequestRecord:
        """Ask for a release from ``dataset``: store the planned release for its owner to approve or decline
        (``decide_request``), with a "request" action by ``user``. Nothing is drawn and no budget is spent.

        Args:
            dataset: a ``Dataset`` or its fingerprint (registered: the release would spend its budget).
            request: ``release``'s arguments but the data (``release_requests.planned_release``):
                ``{"query": query.to_dict(), "mechanism": "laplace", "epsilon": 0.5}``, and optionally
                ``delta``, ``confidence``, ``postprocess``, ``options``, ``note``.
            user: who asks (``actions.user_label``).

        Returns:
            The stored request, "pending".

        Raises:
            ParameterError: ``user`` already has ``MAX_WAITING`` requests waiting on this dataset (nothing
                recorded).
        """
        ds = self.dataset(dataset)
        label = self._user(user_label(user))
        planned = planned_release(request)
        self._need_schema(5, "record the release request")
        uid, created = uuid.uuid4().hex, _now()
        with self._transaction("record the release request") as conn:
            dataset_id = self._dataset_id(conn, ds.fingerprint)
            self._store.lock_dataset(conn, dataset_id)  # two requests at once count each other
            if waiting_of(conn, dataset_id, label) >= MAX_WAITING:
                raise ParameterError(
                    f"{label} already has {MAX_WAITING} release requests waiting on {ds.name!r}, the most "
                    "one person may have at a time: nothing was requested. Wait until an owner approves "
                    "or declines some of them."
                )
            insert_release_request(conn, uid, dataset_id, planned, label, created)
            self._log(conn, "request", label, ds.fingerprint, {
                "request": uid, "query": short(query_label(planned)), "mechanism": planned["mechanism"],
                "epsilon": planned["epsilon"], "delta": planned["delta"],
            })  # fmt: skip
        return RequestRecord(uid, ds.fingerprint, planned, label, created, "pending")

    def release_requests(self, dataset: Dataset | str, status: str | None = None) -> list[RequestRecord]:
        """The dataset's release requests, oldest first; only those with ``status`` ("pending",
        "approved" (not yet released), "declined", "released") if given."""
        ds = self.dataset(dataset)
        if status is not None:
            check.one_of(status, "status", STATUSES)
        if self._store.schema < 5:
            return []
        with self._reading() as conn:
            found = read_release_requests(
                conn, "r.dataset_id = ?", (self._dataset_id(conn, ds.fingerprint),), self._where
            )
        return [r for r in found if status is None or r.status == status]

    def decide_request(self, request_id: str, approve: bool, *, user: str, reason: str = "") -> RequestRecord:
        """Approve or decline a pending release request, once, with an "approve" or "decline" action by
        ``user``. The decision is a row of its own (the request is never changed). A request already
        decided is refused: of several owners deciding at once, exactly one decision is recorded.

        Approving spends nothing: the owner's app then makes the release and records it with
        ``spend_release(ds, release, request_id=request_id)``, which must fit the budget then.

        Returns:
            The request with its decision.

        Raises:
            ParameterError: no such request, or it was already decided (the message says by whom).
        """
        uid = _text(request_id, "request_id")
        if not isinstance(approve, bool):
            raise ParameterTypeError(f"approve must be True or False, got {type(approve).__name__}")
        label = self._user(user_label(user))
        reason = _text(reason, "reason", allow_empty=True).strip()
        if len(reason) > MAX_REASON:
            raise ParameterError(f"reason must be text of at most {MAX_REASON} characters")
        self._need_schema(5, "record the decision")
        with self._transaction("record the decision") as conn:
            row = conn.execute(
                "SELECT r.dataset_id, d.fingerprint FROM release_requests r "
                "JOIN datasets d ON d.id = r.dataset_id WHERE r.uid = ?",
                (uid,),
            ).fetchone()
            if row is None:
                raise ParameterError(f"no release request {short(uid, 80)!r} in the ledger {self._where}")
            self._store.lock_dataset(conn, int(row[0]))  # deciders of one dataset, one at a time
            (before,) = read_release_requests(conn, "r.uid = ?", (uid,), self._where)
            if before.status != "pending":
                raise ParameterError(
                    f"the release request {uid} was already {before.status} by {before.decided_by} at "
                    f"{before.decided_at}: a request is decided once. Nothing was recorded."
                )
            insert_decision(conn, uid, approve, label, reason, _now())
            details = {"request": uid, "reason": short(reason, 300)}
            self._log(conn, "approve" if approve else "decline", label, row[1], details)
            (after,) = read_release_requests(conn, "r.uid = ?", (uid,), self._where)
        return after

    def _check_requested(
        self, conn: Connection, ds: Dataset, request_id: str, record: dict[str, Any] | None
    ) -> None:
        """Under the spend's lock: a ``request_id`` that names a release request must name an approved one
        of this dataset, given to ``spend_release`` with the release approved."""
        if self._store.schema < 5:
            return
        found = read_release_requests(conn, "r.uid = ?", (request_id,), self._where)
        if not found:
            return
        (asked,) = found
        problem = None
        if asked.dataset != ds.fingerprint:
            problem = f"it is a release request of another dataset ({asked.dataset})"
        elif asked.status != "approved":
            problem = f"that release request is {asked.status}, not approved"
        elif record is None:
            problem = "a release request is recorded with spend_release, which checks it is the one approved"
        elif not same_release(asked.request, record):
            problem = "the release is not the one approved (query, mechanism, ε or δ differ)"
        if problem is not None:
            raise ParameterError(
                f"refused: request_id {request_id!r} names a release request, but {problem}. Nothing was "
                "recorded."
            )
