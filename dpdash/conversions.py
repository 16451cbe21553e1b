"""Conversions between privacy definitions that more than one part of dpdash needs."""

from __future__ import annotations

import math

from scipy import optimize

from dpdash import _validation as check
from dpdash._search import bracket, smallest_true

__all__ = ["zcdp_delta", "zcdp_epsilon", "zcdp_epsilon_simple"]


def zcdp_delta(rho: float, epsilon: float) -> float:
    """δ such that ρ-zCDP implies (ε, δ)-DP, by the tight conversion of Canonne, Kamath & Steinke
    (2020, Corollary 13):

        δ = inf over α > 1 of exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α,

    minimised over ln(α − 1) numerically (the expression is evaluated in log space).
    """
    rho = check.positive_finite(rho, "rho")
    epsilon = check.non_negative_finite(epsilon, "epsilon")

    def log_delta(log_alpha_minus_one: float) -> float:
        a = 1.0 + math.exp(log_alpha_minus_one)
        return (a - 1) * (a * rho - epsilon) - math.log(a - 1) + a * math.log1p(-1.0 / a)

    # The minimiser is near α* = (ε + ρ)/(2ρ) (where the exponent is smallest); search around it.
    centre = math.log(max((epsilon + rho) / (2 * rho) - 1.0, 1e-6))
    result = optimize.minimize_scalar(
        log_delta, bounds=(centre - 20.0, centre + 20.0), method="bounded", options={"xatol": 1e-10}
    )
    return min(1.0, math.exp(min(float(result.fun), log_delta(centre))))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The smallest ε with ``zcdp_delta(ρ, ε) ≤ δ``, to one unit in the last place and on the safe side
    (bisection over the bits of ε); never above ``zcdp_epsilon_simple``."""
    rho = check.positive_finite(rho, "rho")
    delta = check.open_unit(delta, "delta")
    if zcdp_delta(rho, 0.0) <= delta:
        return 0.0

    def meets(epsilon: float) -> bool:
        return zcdp_delta(rho, epsilon) <= delta

    upper = zcdp_epsilon_simple(rho, delta)
    lo, hi = bracket(meets, upper, lower=1e-300, upper=max(2 * upper, 1e-300), what="epsilon")
    return smallest_true(meets, lo, hi)


def zcdp_epsilon_simple(rho: float, delta: float) -> float:
    """ε = ρ + 2√(ρ ln(1/δ)) (Bun & Steinke 2016, Proposition 1.3)."""
    rho = check.positive_finite(rho, "rho")
    delta = check.open_unit(delta, "delta")
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
