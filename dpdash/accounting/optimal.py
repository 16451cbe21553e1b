"""Optimal composition (Kairouz, Oh & Viswanath 2015): exact for identical (ε₀, δ₀) releases."""

from __future__ import annotations

import functools
import math
from typing import ClassVar

import numpy as np
from scipy import special

from dpdash import _validation as check
from dpdash._search import smallest_true
from dpdash.accounting.accountant import (
    REL_SLACK,
    Accountant,
    Composition,
    pairs,
    refuse_without_epsilon_delta,
)
from dpdash.accounting.events import PrivacyEvent

__all__ = ["OptimalComposition", "kov_delta", "kov_epsilon", "kov_heterogeneous_epsilon"]


def _log_pure_delta(epsilon0: float, k: int, epsilon: float) -> float:
    """ln δ_k(ε) of k-fold composition of ε₀-DP (−inf when δ_k(ε) = 0); see ``kov_delta``."""
    flips = np.arange(k + 1, dtype=float)  # l in the formula
    margin = (k - 2.0 * flips) * epsilon0 - epsilon  # > 0 for the outcomes whose loss exceeds ε
    active = margin > 0
    if not np.any(active):
        return -math.inf
    flips, margin = flips[active], margin[active]
    log_binom = special.gammaln(k + 1.0) - special.gammaln(flips + 1.0) - special.gammaln(k - flips + 1.0)
    terms = log_binom + (k - flips) * epsilon0 + np.log(-np.expm1(-margin))
    return float(special.logsumexp(terms)) - k * float(np.logaddexp(0.0, epsilon0))


def kov_delta(epsilon0: float, delta0: float, k: int, epsilon: float) -> float:
    """The exact δ at which k-fold adaptive composition of (ε₀, δ₀)-DP mechanisms is (ε, δ)-DP.

        δ(ε) = 1 − (1 − δ₀)^k·(1 − δ_k(ε)),
        δ_k(ε) = Σ_{l=0}^{k} C(k, l)·[e^((k−l)ε₀) − e^ε·e^(lε₀)]⁺ / (1 + e^ε₀)^k,

    the hockey-stick divergence of k independent randomized-response pairs (Kairouz, Oh & Viswanath 2015,
    Thm 3.3, whose statement at ε = (k − 2i)ε₀ is
    δ_k = Σ_{l<i} C(k, l)·(e^((k−l)ε₀) − e^((k−2i+l)ε₀))/(1 + e^ε₀)^k; for every ε, Murtagh & Vadhan 2016).
    Computed in log space.

    >>> round(kov_delta(1.0, 0.0, 1, 0.5), 6)   # one ε₀-DP release: (e^ε₀ − e^ε)/(1 + e^ε₀)
    0.287649
    """
    epsilon0 = check.positive_finite(epsilon0, "epsilon0")
    k = check.positive_int(k, "k")
    log_pure = _log_pure_delta(epsilon0, k, float(epsilon))
    pure = math.exp(log_pure)
    if delta0 == 0.0 or pure >= 1.0:
        return min(pure, 1.0)
    return -math.expm1(k * math.log1p(-delta0) + math.log1p(-pure))


def kov_epsilon(epsilon0: float, delta0: float, k: int, target_delta: float) -> float:
    """The smallest ε with ``kov_delta(ε₀, δ₀, k, ε) ≤ target_delta`` (exact, to the last bit); ∞ if
    target_delta < 1 − (1 − δ₀)^k, the δ the releases use by themselves.

    >>> kov_epsilon(0.1, 0.0, 10, 0.0)   # at δ = 0 nothing beats the sum
    1.0
    """
    epsilon0 = check.positive_finite(epsilon0, "epsilon0")
    k = check.positive_int(k, "k")
    top = k * epsilon0  # δ_k(kε₀) = 0, so δ(kε₀) = 1 − (1 − δ₀)^k

    def ok(epsilon: float) -> bool:
        return kov_delta(epsilon0, delta0, k, epsilon) <= target_delta

    if not ok(top):
        return math.inf
    if ok(0.0):
        return 0.0
    tiny = math.ulp(0.0)
    if ok(tiny):
        return tiny
    return smallest_true(ok, tiny, top)


# The exact optimum for k copies of one guarantee, cached: the running totals ask it again after every
# release of a history whose worst guarantee has not changed.
kov_epsilon_cached = functools.lru_cache(maxsize=256)(kov_epsilon)


def kov_heterogeneous_epsilon(items: list[tuple[float, float, int]], target_delta: float) -> float:
    """Kairouz, Oh & Viswanath 2015, Thm 3.5: releases (ε_l, δ_l) (with counts) compose to
    (ε̃, 1 − (1 − δ̃)Π(1 − δ_l))-DP for every δ̃ in (0, 1], with

        ε̃ = min{Σε_l, A + √(2S·ln(e + √S/δ̃)), A + √(2S·ln(1/δ̃))},
        A = Σ ε_l(e^ε_l − 1)/(e^ε_l + 1),  S = Σ ε_l².

    Returns that ε̃ with δ̃ chosen so the total δ is ``target_delta`` (∞ if the δ_l alone exceed it).
    """
    terms = [heterogeneous_terms(e, d, k) for e, d, k in items]
    basic, log_keep, drift, squares = (math.fsum(column) for column in zip(*terms, strict=True))
    return heterogeneous_from_sums(basic, log_keep, drift, squares, target_delta)


def heterogeneous_terms(epsilon: float, delta: float, count: int) -> tuple[float, float, float, float]:
    """One guarantee's terms of Thm 3.5's sums: (kε, k·ln(1 − δ), kε·tanh(ε/2), kε²); ``math.fsum`` of each
    gives (Σε_l, ln Π(1 − δ_l), A, S) (the running totals keep the same terms and round the same sums)."""
    return (
        epsilon * count,
        count * math.log1p(-delta),
        count * epsilon * math.tanh(epsilon / 2.0),
        count * epsilon * epsilon,
    )


def heterogeneous_from_sums(
    basic: float, log_keep: float, drift: float, squares: float, target_delta: float
) -> float:
    """``kov_heterogeneous_epsilon`` from the sums of ``heterogeneous_terms``."""
    # 1 − δ̃ = (1 − target)/Π(1 − δ_l)
    if target_delta >= 1.0:
        return 0.0
    log_one_minus = math.log1p(-target_delta) - log_keep
    if log_one_minus >= 0.0:
        return basic if -math.expm1(log_keep) <= target_delta * (1.0 + REL_SLACK) else math.inf
    slack = -math.expm1(log_one_minus)
    second = drift + math.sqrt(2.0 * squares * math.log(math.e + math.sqrt(squares) / slack))
    third = drift + math.sqrt(2.0 * squares * math.log(1.0 / slack))
    return min(basic, second, third)


def _kov_heterogeneous_delta(items: list[tuple[float, float, int]], target_epsilon: float) -> float:
    """δ from Thm 3.5's third bound at ε: δ̃ = exp(−(ε − A)²/(2S)), total 1 − (1 − δ̃)Π(1 − δ_l)."""
    drift = math.fsum(k * e * math.tanh(e / 2.0) for e, _, k in items)
    squares = math.fsum(k * e * e for e, _, k in items)
    if target_epsilon <= drift:
        return 1.0
    slack = math.exp(-((target_epsilon - drift) ** 2) / (2.0 * squares))
    log_keep = math.fsum(k * math.log1p(-d) for _, d, k in items)
    return -math.expm1(math.log1p(-slack) + log_keep)


class OptimalComposition(Accountant):
    """Optimal composition of (ε, δ) guarantees (Kairouz, Oh & Viswanath 2015).

    Identical releases: when every event of a path states the same (ε₀, δ₀) (whatever the mechanism), the
    answer is exact (``kov_delta``/``kov_epsilon``): no better bound follows from those guarantees alone.

    Different releases: the exact optimum is #P-hard to compute in general (Murtagh & Vadhan 2016), so this
    accountant falls back to the smallest of three sound bounds and says so (``exact(events)`` is False):
    basic composition; KOV's heterogeneous closed form (Thm 3.5, ``kov_heterogeneous_epsilon``); and the
    exact optimum for k copies of the worst release (max ε_l, max δ_l), which dominates every release.
    (The pld accountant composes the same guarantees' worst-case pairs numerically.)
    Gaussian events count with their stated (ε, δ); ρ-zCDP events are refused.
    """

    name: ClassVar[str] = "optimal"
    title: ClassVar[str] = "Optimal composition (Kairouz–Oh–Viswanath)"

    def _refusal(self, event: PrivacyEvent) -> str | None:
        return refuse_without_epsilon_delta(event)

    @staticmethod
    def _guarantees(composition: Composition) -> list[tuple[float, float, int]]:
        merged: dict[tuple[float, float], int] = {}
        for e, d, k in pairs(composition):
            merged[(e, d)] = merged.get((e, d), 0) + k
        return [(e, d, k) for (e, d), k in merged.items()]

    def exact(self, events: list[PrivacyEvent]) -> bool:
        """Whether every event states the same (ε, δ), so that ``epsilon``/``delta`` are exact optima."""
        return len({(e.epsilon, e.delta) for e in self.check(events)}) <= 1

    @staticmethod
    def _worst(items: list[tuple[float, float, int]]) -> tuple[float, float, int]:
        """(max ε_l, max δ_l, Σ k_l): as many copies of the worst release, which dominate every release;
        the releases themselves when they all state the same (ε, δ)."""
        return max(e for e, _, _ in items), max(d for _, d, _ in items), sum(k for _, _, k in items)

    def _epsilon(self, composition: Composition, target_delta: float) -> float:
        items = self._guarantees(composition)
        worst = kov_epsilon_cached(*self._worst(items), target_delta)
        if len(items) == 1:
            return worst
        return min(worst, kov_heterogeneous_epsilon(items, target_delta))

    def _delta(self, composition: Composition, target_epsilon: float) -> float:
        items = self._guarantees(composition)
        worst = kov_delta(*self._worst(items), target_epsilon)
        if len(items) == 1:
            return worst
        basic_eps = math.fsum(e * k for e, _, k in items)
        basic = (
            math.fsum(d * k for _, d, k in items) if basic_eps <= target_epsilon * (1 + REL_SLACK) else 1.0
        )
        return min(basic, worst, _kov_heterogeneous_delta(items, target_epsilon))
