"""Advanced composition (Dwork, Rothblum & Vadhan 2010), reported as the minimum with basic composition."""

from __future__ import annotations

import math
from typing import ClassVar

from dpdash.accounting.accountant import (
    REL_SLACK,
    Accountant,
    Composition,
    pairs,
    refuse_without_epsilon_delta,
)
from dpdash.accounting.events import PrivacyEvent

__all__ = ["AdvancedComposition", "advanced_terms", "drv_epsilon", "epsilon_from_sums"]


def drv_epsilon(epsilons_counts: list[tuple[float, int]], delta_prime: float) -> float:
    """The heterogeneous Dwork–Rothblum–Vadhan bound on the composed ε, at slack δ′ > 0:

        ε′ = √(2 ln(1/δ′)·Σ k_i ε_i²) + Σ k_i ε_i (e^ε_i − 1).

    For k identical ε₀ this is the textbook √(2k ln(1/δ′))·ε₀ + k·ε₀(e^ε₀ − 1) (Dwork & Roth 2014,
    Thm 3.20). For different ε_i it is the same proof (Azuma's inequality with per-release ranges ε_i, and
    per-release expected loss ≤ ε_i(e^ε_i − 1)), as stated e.g. by Kairouz, Oh & Viswanath 2015 (§3.3) and,
    with a tighter drift term, by Rogers, Roth, Ullman & Vadhan 2016, whose bound implies this one.

    >>> round(drv_epsilon([(0.1, 100)], 1e-6), 6)
    6.308231
    """
    squares = math.fsum(k * e * e for e, k in epsilons_counts)
    drift = math.fsum(k * e * math.expm1(e) for e, k in epsilons_counts)
    return _drv(squares, drift, delta_prime)


def _drv(squares: float, drift: float, delta_prime: float) -> float:
    """√(2 ln(1/δ′)·squares) + drift: ``drv_epsilon`` from its two sums."""
    return math.sqrt(2.0 * math.log(1.0 / delta_prime) * squares) + drift


def advanced_terms(epsilon: float, delta: float, count: int) -> tuple[float, float, float, float]:
    """One setting's terms of the sums advanced composition needs: (kε, kδ, kε², kε(e^ε − 1)).

    ``math.fsum`` of each over a path's settings gives (Σε, Σδ, squares, drift) (``epsilon_from_sums``); the
    running totals (``dpdash.accounting.running``) keep the same terms, so both round the same exact sums.
    """
    return epsilon * count, delta * count, count * epsilon * epsilon, count * epsilon * math.expm1(epsilon)


def epsilon_from_sums(basic: float, used: float, squares: float, drift: float, target_delta: float) -> float:
    """min(Σε, ε′) at slack δ′ = target − Σδ (∞ if Σδ exceeds the target), from the sums of
    ``advanced_terms``."""
    if used > target_delta * (1.0 + REL_SLACK):
        return math.inf
    slack = target_delta - used
    if slack <= 0.0:
        return basic
    return min(basic, _drv(squares, drift, slack))


class AdvancedComposition(Accountant):
    """Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth 2014, Thm 3.20), heterogeneous form.

    For releases that are (ε_i, δ_i)-DP and any δ′ > 0 the composition is (ε′, Σδ_i + δ′)-DP with ε′ given by
    ``drv_epsilon``. At a target δ the slack is δ′ = target − Σδ_i, and the reported ε is
    min(Σε_i, ε′): for few releases the basic sum is smaller (MATH.md: "report the minimum"). At a target ε
    the reported δ is Σδ_i if Σε_i ≤ ε, else Σδ_i + δ′ with δ′ = exp(−(ε − drift)²/(2Σk_iε_i²)).
    Gaussian events count with their stated (ε, δ); ρ-zCDP events are refused.
    """

    name: ClassVar[str] = "advanced"
    title: ClassVar[str] = "Advanced composition (Dwork–Rothblum–Vadhan)"

    def _refusal(self, event: PrivacyEvent) -> str | None:
        return refuse_without_epsilon_delta(event)

    def _epsilon(self, composition: Composition, target_delta: float) -> float:
        terms = [advanced_terms(e, d, k) for e, d, k in pairs(composition)]
        basic, used, squares, drift = (math.fsum(column) for column in zip(*terms, strict=True))
        return epsilon_from_sums(basic, used, squares, drift, target_delta)

    def _delta(self, composition: Composition, target_epsilon: float) -> float:
        items = pairs(composition)
        basic = math.fsum(e * k for e, _, k in items)
        used = math.fsum(d * k for _, d, k in items)
        if basic <= target_epsilon * (1.0 + REL_SLACK):
            return used
        squares = math.fsum(k * e * e for e, _, k in items)
        drift = math.fsum(k * e * math.expm1(e) for e, _, k in items)
        if target_epsilon <= drift:
            return 1.0
        return min(1.0, used + math.exp(-((target_epsilon - drift) ** 2) / (2.0 * squares)))
