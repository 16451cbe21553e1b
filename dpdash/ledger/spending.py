"""``Ledger``'s spends: a release's events checked against the dataset's budget and recorded in one
transaction, or refused with ``BudgetExceededError`` and nothing recorded (the rules: ``ledger``'s module
docstring); a release sent again under its ``request_id`` is recorded at most once."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from dpdash.accounting import running
from dpdash.accounting.event_factory import event_for, events_for_release
from dpdash.accounting.events import PrivacyEvent, canonical_json
from dpdash.accounting.registry import get_accountant
from dpdash.errors import (
    BudgetExceededError,
    DPDashError,
    ParameterError,
    ParameterTypeError,
)
from dpdash.ledger.actions import (
    short,
)
from dpdash.ledger.published import (
    insert_published,
    read_published,
    record_of,
)
from dpdash.ledger.records import (
    INSERT_ENTRY,
    Budget,
    Dataset,
    Entry,
    Session,
    entry_row,
)
from dpdash.ledger.records import now as _now
from dpdash.ledger.request_ids import insert_request, read_request, request_id_of
from dpdash.ledger.storage.base import Connection
from dpdash.ledger.totals import remaining_of
from dpdash.ledger.versions import (
    unit_mismatch,
    unit_of,
)

__all__ = ["Spending"]

# Tests set this to pause a spend after its entry is written and before the commit (to kill the process
# there). It is called with the write lock held.
_before_commit: Callable[[], None] | None = None


class Spending:
    """``Ledger``'s spends (see the module docstring)."""

    # ---- spends ---------------------------------------------------------------------------------
    def spend(
        self,
        dataset: Dataset | str,
        event: PrivacyEvent,
        *,
        session: Session | str | None = None,
        request_id: str | None = None,
        user: str | None = None,
    ) -> Entry:
        """Record one release, if it fits the dataset's budget: check and record in one transaction.

        Under the write lock, the dataset's entries are re-read and the total with ``event`` is computed
        under the dataset's accountant at the budget's δ. If it is within the budget ε the entry is written
        and committed before this returns; otherwise nothing is written. The history is composed before the
        lock is taken (from a read snapshot, kept by ``running``), so the lock is held while composing only
        the entries added since and ``event``; a refusal's totals are computed after it is released.

        Hand out the noisy values only after this returns: ``entry = ledger.spend(ds, event)``, then release.

        Args:
            dataset: a ``Dataset`` or its fingerprint.
            event: the release's event (``event_for(mechanism, query=...)``).
            session: the session to attribute it to (a ``Session`` or its uid), or ``None``.
            request_id: the request's idempotency key (``request_ids``), or ``None``: a call with an id
                already recorded for this dataset records nothing and returns the first call's entry.
            user: who releases (``actions``): a "release" action is recorded with the entry, in the same
                transaction; a spend refused for the budget records a "refused" action (and nothing else).

        Returns:
            The committed ``Entry``.

        Raises:
            BudgetExceededError: the release does not fit; the message says what remains.
            UnsupportedEventError: the dataset's accountant cannot account for this kind of event.
            ParameterError: ``request_id`` was recorded for other releases.
        """
        return self.spend_many(dataset, [event], session=session, request_id=request_id, user=user)[0]

    def spend_many(
        self,
        dataset: Dataset | str,
        events: Sequence[PrivacyEvent],
        *,
        session: Session | str | None = None,
        request_id: str | None = None,
        user: str | None = None,
    ) -> list[Entry]:
        """Record several releases together (e.g. the pieces of a mean), all or none, as ``spend`` does
        for one: one transaction, one budget check of the total with all of them (and ``request_id``
        and ``user`` as in ``spend``: one action for all of them)."""
        return self._spend(dataset, events, session, None, request_id, user)

    def _spend(
        self,
        dataset: Dataset | str,
        events: Sequence[PrivacyEvent],
        session: Session | str | None,
        record: dict[str, Any] | None,
        request_id: str | None = None,
        user: str | None = None,
    ) -> list[Entry]:
        """``spend_many``, storing ``record`` (a release's published values) with the entries if given."""
        request_id = request_id_of(request_id)
        user = self._user(user)
        if request_id is not None:
            self._need_schema(4, "record the request id")
        events = list(events)
        for event in events:
            if not isinstance(event, PrivacyEvent):
                hint = " (use event_for(mechanism))" if hasattr(event, "epsilon") else ""
                raise ParameterTypeError(f"event must be a PrivacyEvent{hint}, got {type(event).__name__}")
        if not events:
            raise ParameterError("events must not be empty")
        ds = self.dataset(dataset)
        accountant = get_accountant(ds.accountant)
        accountant.check(events)
        session_uid = session.uid if isinstance(session, Session) else session
        texts = [canonical_json(event.to_dict()) for event in events]
        # Before the write lock: the history as of now, and the check on it, which composes (and keeps, in
        # ``running``) its state. Under the lock only the entries added since and the new events are
        # composed; a refusal's totals are computed after the lock is released.
        with self._reading() as conn:
            snapshot = self._entries(conn, self._dataset_id(conn, ds.fingerprint), ds.fingerprint)
        running.fits(accountant, [e.event for e in snapshot], events, ds.budget.delta, ds.budget.epsilon)
        refused: tuple[str, Budget, list[PrivacyEvent]] | None = None
        with self._transaction("record the release") as conn:
            row = conn.execute(
                "SELECT id, name, budget_epsilon, budget_delta FROM datasets WHERE fingerprint = ?",
                (ds.fingerprint,),
            ).fetchone()
            dataset_id, name, budget = int(row[0]), row[1], Budget(row[2], row[3])
            self._store.lock_dataset(conn, dataset_id)  # spends on this dataset, one at a time
            session_id = None
            if session_uid is not None:
                found = conn.execute("SELECT id FROM sessions WHERE uid = ?", (session_uid,)).fetchone()
                if found is None:
                    raise ParameterError(f"no session {session_uid!r} in the ledger; use start_session()")
                session_id = int(found[0])
            recorded = self._entries(conn, dataset_id, ds.fingerprint)
            if request_id is not None:
                uids = read_request(conn, dataset_id, request_id)
                if uids is not None:  # sent again: the first call's outcome, nothing recorded
                    return self._replayed(conn, dataset_id, ds, recorded, uids, events, record, request_id)
                self._check_requested(conn, ds, request_id, record)
            history = [entry.event for entry in recorded]
            # The decision, on the history as it is under the lock, from the kept state (running.py).
            if not running.fits(accountant, history, events, budget.delta, budget.epsilon):
                refused = (name, budget, history)
                # Nothing is spent; the attempt is kept for an audit (``actions``).
                details = _release_details(events, record, [], request_id)
                self._log(conn, "refused", user, ds.fingerprint, details)
            else:
                created = _now()
                entries = [
                    Entry(uuid.uuid4().hex, ds.fingerprint, session_uid, created, event) for event in events
                ]
                conn.executemany(
                    INSERT_ENTRY,
                    [
                        entry_row(entry, dataset_id, session_id, text)
                        for entry, text in zip(entries, texts, strict=True)
                    ],
                )
                if record is not None:
                    insert_published(conn, [(entries[0].uid, record)])
                if request_id is not None:
                    insert_request(conn, dataset_id, request_id, [e.uid for e in entries], created)
                self._log(
                    conn,
                    "release",
                    user,
                    ds.fingerprint,
                    _release_details(events, record, entries, request_id),
                )
                if _before_commit is not None:
                    _before_commit()
        if refused is not None:
            name, budget, history = refused
            total = running.epsilon(accountant, history, events, budget.delta)
            spent = running.epsilon(accountant, history, (), budget.delta)
            raise _exceeded(name, events, total, spent, budget, accountant.name)
        return entries

    def _replayed(
        self,
        conn: Connection,
        dataset_id: int,
        ds: Dataset,
        recorded: list[Entry],
        uids: list[str],
        events: list[PrivacyEvent],
        record: dict[str, Any] | None,
        request_id: str,
    ) -> list[Entry]:
        """The entries a request id recorded, if this call asks for the same releases (and, for a release,
        the same values); else a ``ParameterError``: a second draw must not be published on one spend."""
        by_uid = {entry.uid: entry for entry in recorded}
        first = [by_uid[uid] for uid in uids if uid in by_uid]
        same = len(first) == len(uids) and [entry.event for entry in first] == events
        if same and record is not None:
            same = read_published(conn, dataset_id).get(uids[0]) == json.loads(
                json.dumps(record, ensure_ascii=False, allow_nan=False)
            )
        if not same:
            raise ParameterError(
                f"the request {request_id!r} was already recorded on dataset {ds.name!r} for other releases "
                "or other values; nothing was recorded. Publish what was recorded for it "
                "(Ledger.entries, Ledger.published), or send a new release with a new request_id."
            )
        return first

    def spend_release(
        self,
        dataset: Dataset | str,
        release: Any,
        *,
        session: Session | str | None = None,
        partition: tuple[str, str] | None = None,
        request_id: str | None = None,
        user: str | None = None,
    ) -> list[Entry]:
        """Record a ``dpdash.release.Release`` (its events: ``events_for_release``) or a
        ``dpdash.synthetic.SyntheticRelease`` (its measurements' and choices' events), all or nothing.

        The release must have been computed on this dataset: its ``dataset_identity`` (or, for records
        without one, its ``dataset_fingerprint``) is the dataset's fingerprint or one of its versions'
        (``link_version``). If a unit of privacy was recorded with the budget, the release's query must
        state exactly that unit (its ``facts``: neighbours, rows per person, id column); any other unit,
        weaker or not, is refused with a ``DPDashError``. ``release()`` has drawn the values already: show
        or hand them out only after this returns.

        The release's publishable record (``release.to_json()``: its noisy values and accuracy, never the
        true values) is stored in the same transaction, under the uid of its first entry: ``published``.

        ``request_id`` (``request_ids``): a key the caller chose for this release before its first try. A
        call with a key already recorded for this dataset records nothing and returns the first call's
        entries (whose values are the ones to publish), so a request sent again after a lost connection
        never spends twice; the same key with another release or other values is refused.

        ``user``: who releases, as in ``spend`` (a "release" action, or a "refused" one).
        """
        ds = self.dataset(dataset)
        if getattr(release, "release_grade", True) is False:
            raise ParameterError(
                "this is a preview (seeded, fast sampling, not release-grade): it must not be published. "
                "Draw the release with rng=None and record that; nothing was recorded"
            )
        record = record_of(release)
        drawn_on = getattr(release, "dataset_identity", None) or getattr(release, "dataset_fingerprint", None)
        if not isinstance(drawn_on, str) or self.find_dataset(drawn_on) != ds:
            raise ParameterError(
                f"the release was computed on the table {drawn_on!r}, not on dataset {ds.name!r} "
                f"({ds.fingerprint}) or one of its versions; nothing was recorded"
            )
        recorded = self.unit(ds)
        if recorded is not None:
            problem = unit_mismatch(recorded.unit, _release_unit(release))
            if problem is not None:
                raise DPDashError(
                    f"refused: {problem}. The budget of dataset {ds.name!r} protects "
                    f"{recorded.unit.describe()}; a release must use that unit. Nothing was recorded."
                )
        # A synthetic table (``dpdash.synthetic``) states its events itself: its measurements and choices.
        if hasattr(release, "privacy_events"):
            if partition is not None:
                raise ParameterError("a synthetic table is not a partition release: give no partition")
            events = release.privacy_events()
        else:
            events = events_for_release(release, partition=partition)
        return self._spend(ds, events, session, record, request_id, user)

    def spend_mechanism(
        self,
        dataset: Dataset | str,
        mechanism: Any,
        *,
        query: str = "",
        partition: tuple[str, str] | None = None,
        session: Session | str | None = None,
        user: str | None = None,
    ) -> Entry:
        """``spend(dataset, event_for(mechanism, query=query, partition=partition), session=session,
        user=user)``."""
        event = event_for(mechanism, query=query, partition=partition)
        return self.spend(dataset, event, session=session, user=user)


# ---- helpers ---------------------------------------------------------------------------------------
def _release_unit(release: Any) -> Any:
    """The unit of privacy a release's query states (its ``facts``), or ``None``."""
    query = getattr(release, "query", None)
    facts = query.get("facts") if isinstance(query, dict) else None
    if not isinstance(facts, dict):
        return None
    try:
        return unit_of(facts)
    except DPDashError:
        return None


def _finite(value: object) -> float | None:
    """``value`` if it is a finite number, else ``None`` (an action's details hold finite numbers only)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _release_details(
    events: list[PrivacyEvent], record: dict[str, Any] | None, entries: list[Entry], request_id: str | None
) -> dict[str, Any]:
    """A "release" or "refused" action's details: what was released and its cost (a release's own ε and δ;
    for events, their sum when none is partitioned), the first entry's uid, the request id."""
    first = events[0]
    details: dict[str, Any] = {
        "query": short(first.query), "mechanism": short(first.mechanism, 60), "entries": len(events),
    }  # fmt: skip
    if record is not None:
        details["query"] = short(record.get("query_name") or first.query)
        details["mechanism"] = short(record.get("mechanism") or first.mechanism, 60)
        details["epsilon"], details["delta"] = _finite(record.get("epsilon")), _finite(record.get("delta"))
    elif len(events) == 1 or all(event.partition is None for event in events):
        epsilons, deltas = [e.epsilon for e in events], [e.delta for e in events]
        details["epsilon"] = None if None in epsilons else _finite(math.fsum(epsilons))  # type: ignore[arg-type]
        details["delta"] = None if None in deltas else _finite(math.fsum(deltas))  # type: ignore[arg-type]
    if entries:
        details["first_entry"] = entries[0].uid
    if request_id is not None:
        details["request_id"] = short(request_id, 200)
    return details


def _exceeded(
    name: str, events: list[PrivacyEvent], total: float, spent: float, budget: Budget, accountant: str
) -> BudgetExceededError:
    first = events[0]
    label = f" ({first.query!r})" if first.query else ""
    what = f"{first.describe()}{label}"
    if len(events) > 1:
        what = f"{len(events)} releases ({what}, ...)"
    remaining = remaining_of(budget, spent)
    if math.isinf(total):
        why = (
            f"the {accountant} accountant certifies no finite ε at δ = {budget.delta:g} with it (its δ, or "
            "the releases' δs together, exceed the budget's δ, or the release is not private)"
        )
    else:
        why = (
            f"it would bring the total to ε = {total:.6g} at δ = {budget.delta:g} under the {accountant} "
            "accountant"
        )
    return BudgetExceededError(
        f"refused: {what} does not fit the budget of dataset {name!r}: {why}, over the "
        f"budget ε = {budget.epsilon:g}, δ = {budget.delta:g}. Spent so far: ε = {spent:.6g}; remaining: "
        f"ε = {remaining:.6g} at δ = {budget.delta:g}. Nothing was recorded.",
        remaining_epsilon=remaining,
        requested_epsilon=total,
    )
