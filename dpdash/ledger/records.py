"""The ledger's values: a budget, a registered dataset, a session, an entry, a budget's status, an import's
report, an action of the log (``actions``) and a release request (``release_requests``). Frozen dataclasses,
the same whatever storage keeps them (``storage``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dpdash._forward import Forwarded
from dpdash.accounting.accountant import REL_SLACK, PrivacyTotal
from dpdash.accounting.budget import Budget
from dpdash.accounting.events import PrivacyEvent
from dpdash.errors import ParameterError, ParameterTypeError

__all__ = [
    "DATASET_COLUMNS",
    "INSERT_DATASET",
    "INSERT_ENTRY",
    "Action",
    "Budget",
    "BudgetStatus",
    "Dataset",
    "Entry",
    "ImportReport",
    "RequestRecord",
    "Session",
    "entry_row",
    "now",
    "short_text",
    "text",
]


def now() -> str:
    """The time now, UTC, ISO 8601 with microseconds: every ledger timestamp."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass(frozen=True, slots=True)
class Dataset:
    """A registered dataset: its fingerprint, name, budget and accountant (fixed at registration)."""

    fingerprint: str
    name: str
    budget: Budget
    accountant: str
    created_at: str


@dataclass(frozen=True, slots=True)
class Session:
    """A working session (e.g. one browser session of the app) that releases are attributed to."""

    uid: str
    label: str
    started_at: str


@dataclass(frozen=True, slots=True)
class Entry:
    """One committed release: ``event`` is what the accountants read."""

    uid: str
    dataset: str  # fingerprint
    session: str | None  # session uid
    created_at: str
    event: PrivacyEvent

    # What the event says, read through.
    query = Forwarded[str]("event.query")
    mechanism = Forwarded[str]("event.mechanism")
    epsilon = Forwarded[float | None]("event.epsilon")
    delta = Forwarded[float | None]("event.delta")


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """Where a dataset's budget stands under its accountant.

    Attributes:
        budget: the total budget.
        spent: the composed total of its entries at the budget's δ.
        remaining_epsilon: budget ε − spent ε (never below 0).
        entries: how many ledger entries were recorded (a mean's release is two: its sum and count).
        releases: how many releases those entries are (``dpdash.ledger.releases.release_count``).
    """

    budget: Budget
    spent: PrivacyTotal
    remaining_epsilon: float
    entries: int
    releases: int

    @property
    def exhausted(self) -> bool:
        return self.remaining_epsilon <= self.budget.epsilon * REL_SLACK


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did: ``added`` new entries, ``present`` already in this ledger.

    ``signed_by`` is the public key whose valid signature the export carried (``None``: unsigned), and
    ``trusted`` whether that key is this ledger's own or one it trusts (``Ledger.trust_key``). ``values``
    counts the export's release records (published values) it took, stored now or already here: only a
    trusted export's are taken, since an unverified file's values could have been edited; ``values_left``
    counts those it did not take. ``actions`` and ``actions_left`` count the export's actions (who did
    what, ``Ledger.actions``) the same way.
    """

    dataset: Dataset
    added: int
    present: int
    over_budget: bool
    signed_by: str | None = None
    trusted: bool = False
    values: int = 0
    values_left: int = 0
    actions: int = 0
    actions_left: int = 0

    @property
    def origin(self) -> str:
        """What the import could rely on, in words."""
        if self.signed_by is None:
            return (
                "The export was unsigned, so nothing proves where it came from: it could only add releases "
                "to a table this ledger already had."
            )
        if self.trusted:
            return f"The export was signed by {self.signed_by}, a key this ledger trusts."
        return (
            f"The export was signed by {self.signed_by}, a key this ledger does not trust: it could only add "
            "releases to a table this ledger already had."
        )


@dataclass(frozen=True, slots=True)
class Action:
    """One row of the ledger's log of who did what (``Ledger.actions``; vocabulary and rules in ``actions``).

    Attributes:
        uid: the action's id (kept by exports and imports).
        created_at: when (UTC, ISO 8601).
        user: who: the label the app or the caller gave (an e-mail, a sign-in subject, "local owner");
            ``None`` when a library call named nobody.
        action: what, one word of ``actions.ACTIONS`` ("budget", "release", "refused", "import", ...).
        dataset: the fingerprint of the table it concerned, or ``None`` (a key trusted for the ledger).
        details: a small JSON object: parameters and ids (ε, a query's name, an entry's uid, counts), never
            a value computed from the data.
    """

    uid: str
    created_at: str
    user: str | None
    action: str
    dataset: str | None
    details: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """A release an analyst asked for, and the owner's decision (``Ledger.request_release``).

    Attributes:
        uid: the request's id; the owner's app releases it with ``spend_release(..., request_id=uid)``.
        dataset: the fingerprint of the dataset whose budget it would spend.
        request: the planned release (``release_requests.planned_release``): query, mechanism, ε, δ,
            confidence, post-processing, options, note; never a value.
        requested_by, requested_at: who asked, and when (UTC).
        status: "pending", "approved", "declined", or "released" (approved, and spent under its uid).
        decided_by, decided_at, reason: the decision, once made (else ``None``, ``None``, "").
    """

    uid: str
    dataset: str
    request: dict[str, Any]
    requested_by: str
    requested_at: str
    status: str
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str = ""


def text(value: object, name: str, *, allow_empty: bool = False) -> str:
    """``value`` if it is a string (non-empty unless ``allow_empty``); else a ParameterError naming it."""
    if not isinstance(value, str):
        raise ParameterTypeError(f"{name} must be a string, got {name}={value!r} ({type(value).__name__})")
    if not value and not allow_empty:
        raise ParameterError(f"{name} must be a non-empty string, got {name}={value!r}")
    return value


def short_text(value: object, name: str, max_length: int) -> str:
    """``value`` if it is text of 1 to ``max_length`` characters, not only spaces (a user label, a request
    id); else a ParameterError saying why. The message leaves the value out: it may name someone."""
    if not isinstance(value, str):
        raise ParameterTypeError(f"{name} must be a string, got {type(value).__name__}")
    if not value.strip() or len(value) > max_length:
        raise ParameterError(
            f"{name} must be non-empty text of at most {max_length} characters, not only spaces, got "
            f"{len(value)} characters"
        )
    return value


# How a dataset and an entry are written as rows (the SQL both storages share).
DATASET_COLUMNS = "fingerprint, name, budget_epsilon, budget_delta, accountant, created_at"
INSERT_DATASET = f"INSERT INTO datasets ({DATASET_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
INSERT_ENTRY = (
    "INSERT INTO entries (uid, dataset_id, session_id, created_at, query, mechanism, epsilon, delta, rho, "
    "event) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def entry_row(entry: Entry, dataset_id: int, session_id: int | None, text: str) -> tuple[Any, ...]:
    """The values of ``INSERT_ENTRY`` for one entry whose event is ``text`` (its canonical JSON)."""
    event = entry.event
    return (
        entry.uid, dataset_id, session_id, entry.created_at, event.query, event.mechanism,
        event.epsilon, event.delta, event.rho, text,
    )  # fmt: skip
