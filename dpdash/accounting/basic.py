"""Basic sequential composition, with parallel composition for partitioned events."""

from __future__ import annotations

import math
from typing import ClassVar

from dpdash.accounting.accountant import (
    REL_SLACK,
    Accountant,
    Composition,
    _split,
    pairs,
    refuse_without_epsilon_delta,
)
from dpdash.accounting.events import PrivacyEvent

__all__ = ["BasicComposition", "basic_sums"]


def basic_sums(events: list[PrivacyEvent]) -> tuple[float, float]:
    """(Σε, Σδ) with parallel composition: whole-data events add up; each partitioning adds the largest
    cell total, separately for ε and for δ (every record's path is bounded by both maxima at once).

    Sums are exactly rounded (``math.fsum``), so ten releases of ε = 0.1 total exactly 1.0.
    """
    whole, partitionings = _split(events)

    def sums(counter: dict[PrivacyEvent, int]) -> tuple[float, float]:
        eps = math.fsum(float(s.epsilon) * n for s, n in counter.items())  # type: ignore[arg-type]
        dlt = math.fsum(float(s.delta) * n for s, n in counter.items())  # type: ignore[arg-type]
        return eps, dlt

    eps_parts, delta_parts = [], []
    e, d = sums(whole)
    eps_parts.append(e)
    delta_parts.append(d)
    for cells in partitionings:
        cell_sums = [sums(cell) for cell in cells]
        eps_parts.append(max(e for e, _ in cell_sums))
        delta_parts.append(max(d for _, d in cell_sums))
    return math.fsum(eps_parts), math.fsum(delta_parts)


class BasicComposition(Accountant):
    """Sequential composition: k releases that are (ε_i, δ_i)-DP are (Σε_i, Σδ_i)-DP (Dwork & Roth 2014,
    Thm 3.16); releases on disjoint parts of the data cost the maximum (parallel composition, McSherry 2009).

    The total is one (ε, δ) pair, so ``epsilon(events, target_delta)`` is Σε when Σδ ≤ target_delta and ∞
    otherwise, and ``delta(events, target_epsilon)`` is Σδ when Σε ≤ target_epsilon and 1 otherwise. Gaussian
    events count with the (ε, δ) they were stated at. ρ-zCDP events, which state no (ε, δ), are refused.

    >>> from dpdash.accounting.events import LaplaceEvent
    >>> BasicComposition().epsilon([LaplaceEvent(epsilon=0.1, sensitivity=1.0)] * 10, target_delta=0.0)
    1.0
    """

    name: ClassVar[str] = "basic"
    title: ClassVar[str] = "Basic composition"

    def _refusal(self, event: PrivacyEvent) -> str | None:
        return refuse_without_epsilon_delta(event)

    def _epsilon_of_events(self, events: list[PrivacyEvent], target_delta: float) -> float:
        epsilon, delta = basic_sums(events)
        return epsilon if delta <= target_delta * (1.0 + REL_SLACK) else math.inf

    def _delta_of_events(self, events: list[PrivacyEvent], target_epsilon: float) -> float:
        epsilon, delta = basic_sums(events)
        return delta if epsilon <= target_epsilon * (1.0 + REL_SLACK) else 1.0

    # One path is all basic composition ever needs (used by accountants that fall back on it).
    def _epsilon(self, composition: Composition, target_delta: float) -> float:
        epsilon = math.fsum(e * n for e, _, n in pairs(composition))
        delta = math.fsum(d * n for _, d, n in pairs(composition))
        return epsilon if delta <= target_delta * (1.0 + REL_SLACK) else math.inf

    def _delta(self, composition: Composition, target_epsilon: float) -> float:
        epsilon = math.fsum(e * n for e, _, n in pairs(composition))
        delta = math.fsum(d * n for _, d, n in pairs(composition))
        return delta if epsilon <= target_epsilon * (1.0 + REL_SLACK) else 1.0
