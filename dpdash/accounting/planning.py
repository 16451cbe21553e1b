"""Planning releases against what remains of a budget: allocation, what-if totals, step-chart data.

Allocation follows PSI (Gaboardi et al. 2016, "PSI (Ψ): a Private data Sharing Interface"): each planned
query has a weight; rows locked ("held") at a fixed ε or at a fixed accuracy keep their ε, and the other
rows get ε_i = t·w_i with one common factor t, the largest for which the spent releases plus the whole
plan fit the budget under the chosen accountant. Since every accountant's total grows with every ε_i,
the feasible factors form an interval (0, t*], found by bisection.

>>> from dpdash.accounting.budget import Budget
>>> p = plan([PlannedQuery(mechanism="laplace", sensitivity=1.0, weight=1.0),
...           PlannedQuery(mechanism="laplace", sensitivity=1.0, weight=3.0)],
...          budget=Budget(epsilon=1.0), accountant="basic")
>>> p.fits, [round(r.epsilon, 3) for r in p.releases]
(True, [0.25, 0.75])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dpdash import _validation as check
from dpdash.accounting import running
from dpdash.accounting.accountant import Accountant, as_events
from dpdash.accounting.event_base import _partition
from dpdash.accounting.event_factory import event_for
from dpdash.accounting.events import PrivacyEvent
from dpdash.accounting.plan_search import _FACTOR_RTOL, _components, _fits, _largest_count, _largest_factor
from dpdash.accounting.pld import _pinned
from dpdash.accounting.registry import ACCOUNTANT_NAMES, get_accountant
from dpdash.errors import DPDashError, ParameterError, UnsupportedEventError
from dpdash.mechanisms import DiscreteGaussian, Gaussian, Geometric, Laplace, NoiseMechanism, Staircase

if TYPE_CHECKING:
    from dpdash.accounting.budget import Budget

__all__ = [
    "MECHANISMS",
    "Plan",
    "PlannedQuery",
    "PlannedRelease",
    "WhatIf",
    "cumulative_totals",
    "max_releases",
    "plan",
    "what_if",
]

MECHANISMS: dict[str, type[NoiseMechanism]] = {
    "laplace": Laplace,
    "gaussian": Gaussian,
    "geometric": Geometric,
    "discrete_gaussian": DiscreteGaussian,
    "staircase": Staircase,
}
_NEEDS_DELTA = ("gaussian", "discrete_gaussian")


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedQuery:
    """One planned release.

    Args:
        mechanism: ``"laplace"``, ``"gaussian"``, ``"geometric"``, ``"discrete_gaussian"`` or ``"staircase"``.
        sensitivity: the query's sensitivity for that mechanism (ℓ1, ℓ2, or per coordinate).
        weight: its share of the unlocked budget relative to the other unlocked rows (> 0).
        delta: δ of each Gaussian-type release (required for them, refused for the others).
        epsilon: lock the row at this ε.
        accuracy: lock the row at the ε whose half-width at ``confidence`` (for ``k`` answers) is this.
        confidence: for ``accuracy`` and the reported half-width.
        k: the number of answers the release has (for the accuracy).
        query: a label.
        partition: as for events: ``(by, part)`` if the release reads only that part of the data.
    """

    mechanism: str
    sensitivity: float
    weight: float = 1.0
    delta: float | None = None
    epsilon: float | None = None
    accuracy: float | None = None
    confidence: float = 0.95
    k: int = 1
    query: str = ""
    partition: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        check.one_of(self.mechanism, "mechanism", tuple(MECHANISMS))
        object.__setattr__(self, "sensitivity", check.positive_finite(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "weight", check.positive_finite(self.weight, "weight"))
        if self.mechanism in _NEEDS_DELTA:
            if self.delta is None:
                raise ParameterError(f"delta is required for the {self.mechanism} mechanism, got delta=None")
            object.__setattr__(self, "delta", check.open_unit(self.delta, "delta"))
        elif self.delta is not None:
            raise ParameterError(
                f"delta applies only to Gaussian-type mechanisms, got delta={self.delta!r} "
                f"for {self.mechanism}"
            )
        if self.epsilon is not None and self.accuracy is not None:
            raise ParameterError("lock a row at epsilon or at accuracy, not both")
        if self.epsilon is not None:
            object.__setattr__(self, "epsilon", check.positive_finite(self.epsilon, "epsilon"))
        if self.accuracy is not None:
            object.__setattr__(self, "accuracy", check.positive_finite(self.accuracy, "accuracy"))
        object.__setattr__(self, "confidence", check.open_unit(self.confidence, "confidence"))
        object.__setattr__(self, "k", check.positive_int(self.k, "k"))
        object.__setattr__(self, "partition", _partition(self.partition))

    @property
    def locked(self) -> bool:
        return self.epsilon is not None or self.accuracy is not None

    def _params(self) -> dict[str, Any]:
        return {"delta": self.delta} if self.mechanism in _NEEDS_DELTA else {}

    def build(self, epsilon: float) -> NoiseMechanism:
        """The mechanism for this row at ε."""
        return MECHANISMS[self.mechanism](epsilon=epsilon, sensitivity=self.sensitivity, **self._params())

    def locked_mechanism(self) -> NoiseMechanism:
        """The mechanism of a locked row (at its ε, or the smallest ε meeting its accuracy)."""
        if self.epsilon is not None:
            return self.build(self.epsilon)
        if self.accuracy is None:
            raise ParameterError("the row is not locked")
        return MECHANISMS[self.mechanism].for_accuracy(
            alpha=self.accuracy,
            confidence=self.confidence,
            sensitivity=self.sensitivity,
            k=self.k,
            **self._params(),
        )

    def event(self, mechanism: NoiseMechanism) -> PrivacyEvent:
        return event_for(mechanism, query=self.query, partition=self.partition)


@dataclass(frozen=True, slots=True)
class PlannedRelease:
    """A row of a plan: its query, the mechanism at the planned ε (``None`` if the plan does not fit),
    that ε, the half-width at the row's confidence and k, and whether the row was locked."""

    query: PlannedQuery
    mechanism: NoiseMechanism | None
    epsilon: float | None
    half_width: float | None
    locked: bool

    @property
    def event(self) -> PrivacyEvent | None:
        return None if self.mechanism is None else self.query.event(self.mechanism)


@dataclass(frozen=True, slots=True)
class Plan:
    """An allocation of what remains.

    Attributes:
        releases: the rows, in the order given.
        budget: the budget planned against.
        accountant: the accountant's name.
        spent: total ε of the releases already made (at the budget's δ), as ``Ledger.spent`` gives it.
        total: total ε after the planned releases, if they fit; else with the locked rows only.
        factor: the common factor t of the unlocked rows (``None`` if there are none or nothing fits).
        fits: whether the plan fits the budget.
        over_by: how much ε the plan lacks (0 when it fits): the locked rows alone overshoot by this,
            or ∞ if no ε at all fits (e.g. the planned δs exceed the budget's δ).
    """

    releases: tuple[PlannedRelease, ...]
    budget: Budget
    accountant: str
    spent: float
    total: float
    factor: float | None
    fits: bool
    over_by: float

    @property
    def remaining_after(self) -> float:
        """Budget ε − total ε after the plan (negative when it does not fit)."""
        return self.budget.epsilon - self.total

    @property
    def events(self) -> list[PrivacyEvent]:
        return [r.event for r in self.releases if r.event is not None]


def _release(query: PlannedQuery, mechanism: NoiseMechanism | None, locked: bool) -> PlannedRelease:
    if mechanism is None:
        return PlannedRelease(query, None, None, None, locked)
    return PlannedRelease(
        query, mechanism, mechanism.epsilon, mechanism.accuracy(query.confidence, query.k), locked
    )


# What a step of the planner's search keeps of factor t: the unlocked rows' mechanisms and their total.
_Payload = tuple[dict[int, NoiseMechanism], float]


def plan(
    queries: Sequence[PlannedQuery],
    *,
    budget: Budget,
    spent: Iterable[PrivacyEvent] = (),
    accountant: str | Accountant = "tightest",
) -> Plan:
    """The ε of each planned query so that the spent releases and the plan fit ``budget``.

    Locked rows keep their ε (or the ε of their accuracy); unlocked rows get ε_i = t·w_i with the largest
    common factor t that fits, to a relative 1e-4 (rounded down). A plan that cannot fit comes back with
    ``fits=False`` and ``over_by`` saying by how much ε the locked rows overshoot.

    The search's totals come from ``running``, the kept composition of the spent releases: each step
    composes only the planned releases onto it (for PLD one convolution, not the whole history again),
    within the FFTs' rounding of the accountant's own total (``running``'s docstring). A plan that fits,
    fits as the ledger decides (``running.fits``, on the canonical total near the limit).
    """
    keeper = get_accountant(accountant) if isinstance(accountant, str) else accountant
    queries = list(queries)
    for q in queries:
        if not isinstance(q, PlannedQuery):
            raise ParameterError(f"queries must be PlannedQuery values, got {type(q).__name__}")
    spent_events = keeper.check(as_events(spent))
    delta = budget.delta
    spent_total = running.epsilon(keeper, spent_events, (), delta)
    locked = {i: q.locked_mechanism() for i, q in enumerate(queries) if q.locked}
    locked_events = keeper.check([queries[i].event(m) for i, m in locked.items()])
    base = spent_events + locked_events
    unlocked = [i for i, q in enumerate(queries) if not q.locked]
    # Refuse unsupported families before searching (a sample event at ε = 1 is enough to know).
    samples = [queries[i].event(queries[i].build(1.0)) for i in unlocked]
    keeper.check(samples)
    locked_total = running.epsilon(keeper, spent_events, locked_events, delta)

    def rows(mechanisms: dict[int, NoiseMechanism | None]) -> tuple[PlannedRelease, ...]:
        return tuple(_release(q, mechanisms.get(i), q.locked) for i, q in enumerate(queries))

    if not _fits(locked_total, budget) or (unlocked and locked_total >= budget.epsilon):
        over = locked_total - budget.epsilon
        return Plan(
            rows(dict(locked)),
            budget,
            keeper.name,
            spent_total,
            locked_total,
            None,
            False,
            max(over, 0.0) if math.isfinite(over) else math.inf,
        )
    if not unlocked:
        return Plan(rows(dict(locked)), budget, keeper.name, spent_total, locked_total, None, True, 0.0)

    def attempt_under(judge: Accountant) -> Callable[[float], tuple[float, _Payload]]:
        def attempt(t: float) -> tuple[float, _Payload]:
            try:
                mechanisms = {i: queries[i].build(t * queries[i].weight) for i in unlocked}
                events = [queries[i].event(m) for i, m in mechanisms.items()]
                total = running.kept_epsilon(judge, base, events, delta, keep=False)
                return total, (mechanisms, total)
            except DPDashError:
                return math.inf, ({}, math.inf)

        return attempt

    weights = math.fsum(queries[i].weight for i in unlocked)
    lowest = check.EPSILON_MIN / min(queries[i].weight for i in unlocked)  # every row's ε ≥ EPSILON_MIN
    guess = (budget.epsilon - locked_total) / weights
    best: tuple[float, _Payload] | None = None  # (factor, payload)
    # The tightest accountant fits exactly the factors that one of its components fits, so its largest
    # factor is the largest of theirs: search the cheap ones first, and a costly one (PLD) only from there.
    for judge in _components(keeper, base + samples):
        attempt = attempt_under(judge)
        start = guess if best is None else best[0] * (1.0 + _FACTOR_RTOL)
        found = _largest_factor(attempt, start, budget, must_fit_start=best is not None, lower=lowest)
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    if best is None:
        return Plan(rows(dict(locked)), budget, keeper.name, spent_total, locked_total, None, False, math.inf)
    factor, (mechanisms, _) = best
    events = [queries[i].event(m) for i, m in mechanisms.items()]
    # The search ran on running totals; the ledger decides on the canonical total (``running.fits``). Where
    # the two straddle the limit (a PLD total within its rounding of it), step down until the ledger agrees.
    for _ in range(8):
        if running.fits(keeper, base, events, delta, budget.epsilon, keep=False):
            break
        factor *= 1.0 - _FACTOR_RTOL
        mechanisms = {i: queries[i].build(factor * queries[i].weight) for i in unlocked}
        events = [queries[i].event(m) for i, m in mechanisms.items()]
    total = running.kept_epsilon(keeper, base, events, delta, keep=False)
    chosen: dict[int, NoiseMechanism | None] = {**locked, **mechanisms}
    return Plan(rows(chosen), budget, keeper.name, spent_total, total, factor, True, 0.0)


@dataclass(frozen=True, slots=True)
class WhatIf:
    """Totals (ε at the budget's δ) after ``count`` more releases like the given one, per accountant
    (``None`` where an accountant refuses the events), and whether each stays within the budget ε."""

    count: int
    totals: dict[str, float | None]
    within_budget: dict[str, bool | None]


def what_if(
    event: PrivacyEvent,
    counts: Iterable[int],
    *,
    spent: Iterable[PrivacyEvent] = (),
    budget: Budget,
    accountants: Iterable[str] = ACCOUNTANT_NAMES,
) -> list[WhatIf]:
    """What the totals would be after k more releases like ``event``, for each k in ``counts``.

    Each total is ``accountant.epsilon(spent + [event]·k, budget.delta)``, composed from ``running``'s kept
    state of the spent releases plus the k new ones (to the bit, or for PLD to 1e-9 relative; ``running``'s
    docstring); the accountants asked about one k share that composition.
    """
    if not isinstance(event, PrivacyEvent):
        raise ParameterError(f"event must be a PrivacyEvent, got {type(event).__name__}")
    spent_events = as_events(spent)
    names = list(accountants)
    out = []
    for count in counts:
        new = [event] * check.non_negative_int(count, "count")
        totals: dict[str, float | None] = {}
        within: dict[str, bool | None] = {}
        for name in names:
            accountant = get_accountant(name)
            try:
                total = running.kept_epsilon(accountant, spent_events, new, budget.delta, keep=False)
            except UnsupportedEventError:
                totals[name], within[name] = None, None
                continue
            totals[name], within[name] = total, _fits(total, budget)
        out.append(WhatIf(len(new), totals, within))
    return out


def max_releases(
    event: PrivacyEvent,
    *,
    spent: Iterable[PrivacyEvent] = (),
    budget: Budget,
    accountant: str | Accountant = "tightest",
    limit: int = 1_000_000,
) -> int:
    """The largest k ≤ ``limit`` such that the spent releases and k more like ``event`` fit ``budget``
    (0 if not even one fits): "releases remaining at this accuracy".

    "Fit" is the ledger's budget check (``running.fits``: total ≤ budget ε·(1 + REL_SLACK)), asked about the
    k new releases on the kept state of the spent ones, so every count returned would be accepted by a
    spend. Totals grow with k, so the count is found by doubling and bisection; under the tightest
    accountant, as the largest of its components' counts (the minimum fits iff one component does),
    cheapest first, each only from the best count so far.
    """
    keeper = get_accountant(accountant) if isinstance(accountant, str) else accountant
    spent_events = keeper.check(as_events(spent))
    keeper.check([event])
    limit = check.positive_int(limit, "limit")
    best = 0
    for judge in _components(keeper, [*spent_events, event]):

        def fits(k: int, judge: Accountant = judge) -> bool:
            new = [event] * k
            return running.fits(judge, spent_events, new, budget.delta, budget.epsilon, keep=False)

        best = _largest_count(fits, best, limit)
    return best


def cumulative_totals(
    events: Sequence[PrivacyEvent],
    target_delta: float,
    accountants: Iterable[str] = ACCOUNTANT_NAMES,
    *,
    points: int = 50,
) -> list[tuple[int, dict[str, float | None]]]:
    """Total ε at ``target_delta`` after the first n events, for n = 0 and up to ``points`` values of n
    spread over 1..N (all of them when N ≤ points; N always included), per accountant (``None`` once an
    accountant refuses an event)."""
    events = as_events(events)
    points = check.positive_int(points, "points")
    n_total = len(events)
    if n_total <= points:
        counts = list(range(1, n_total + 1))
    else:
        counts = sorted({round(float(x)) for x in np.linspace(1, n_total, points)})
    names = list(accountants)
    out: list[tuple[int, dict[str, float | None]]] = [(0, dict.fromkeys(names, 0.0))]
    refused: set[str] = set()
    with _pinned():  # one pmf per distinct release for all prefixes (PLD's own cache holds 512)
        for n in counts:
            row: dict[str, float | None] = {}
            for name in names:
                if name in refused:
                    row[name] = None
                    continue
                try:
                    row[name] = get_accountant(name).epsilon(events[:n], target_delta)
                except UnsupportedEventError:
                    refused.add(name)
                    row[name] = None
            out.append((n, row))
    return out
