"""Conversions between privacy definitions that more than one part of dpdash needs (the Gaussian
mechanism's multi-answer release, the accountants, the risk page's reference points)."""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import optimize

from dpdash.errors import ParameterError, ParameterTypeError

__all__ = ["CONVERSIONS", "zcdp_delta", "zcdp_epsilon"]


def _non_negative(value: object, name: str, *, allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(f"{name} must be a real number, got {name}={value!r}")
    x = float(value)
    if math.isnan(x) or x < 0 or (math.isinf(x) and not allow_inf):
        rule = "a number >= 0" if allow_inf else "a finite number >= 0"
        raise ParameterError(f"{name} must be {rule}, got {name}={value!r}")
    return x


def _unit_closed(value: object, name: str) -> float:
    x = _non_negative(value, name)
    if x > 1:
        raise ParameterError(f"{name} must be a number in [0, 1], got {name}={value!r}")
    return x


CONVERSIONS = ("tight", "simple")


def _conversion(value: object) -> str:
    """The name of a conversion, one of CONVERSIONS."""
    if value not in CONVERSIONS:
        raise ParameterError(f"conversion must be one of {CONVERSIONS}, got conversion={value!r}")
    return str(value)


# ln(α − 1) is searched on this grid, then refined by bounded Brent around the best point.
_LOG_ORDER_GRID = np.linspace(-14.0, 14.0, 113)


def _log_delta_at(rho: float, epsilon: float, alpha: np.ndarray) -> np.ndarray:
    """ln δ of CKS Cor. 13 at order α: (α − 1)(αρ − ε) + (α − 1)·ln(1 − 1/α) − ln α."""
    return (alpha - 1.0) * (alpha * rho - epsilon + np.log1p(-1.0 / alpha)) - np.log(alpha)


def _epsilon_at(rho: float, log_delta: float, alpha: np.ndarray) -> np.ndarray:
    """ε of CKS Cor. 13 at order α: αρ + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)."""
    return alpha * rho + np.log1p(-1.0 / alpha) - (log_delta + np.log(alpha)) / (alpha - 1.0)


def _minimise_over_orders(objective) -> float:  # type: ignore[no-untyped-def]
    """min over α > 1 of ``objective(α)`` (a vectorised function), by grid then Brent on ln(α − 1)."""
    values = objective(1.0 + np.exp(_LOG_ORDER_GRID))
    values = np.where(np.isnan(values), np.inf, values)
    best = int(np.argmin(values))
    lo = _LOG_ORDER_GRID[max(best - 1, 0)]
    hi = _LOG_ORDER_GRID[min(best + 1, len(_LOG_ORDER_GRID) - 1)]
    result = optimize.minimize_scalar(
        lambda u: float(objective(np.array([1.0 + math.exp(u)]))[0]),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return float(min(values[best], result.fun))


def zcdp_epsilon(rho: float, delta: float, conversion: str = "tight") -> float:
    """The ε at which a ρ-zCDP mechanism is (ε, δ)-DP.

    - ``"simple"``: ε = ρ + 2√(ρ·ln(1/δ)) (Bun & Steinke 2016, Prop. 1.3).
    - ``"tight"`` (default): ε = min over α > 1 of αρ + ln(1 − 1/α) − (ln δ + ln α)/(α − 1)
      (Canonne, Kamath & Steinke 2020, Cor. 13, from the Rényi conversion of their Prop. 12; also
      Asoodeh et al. 2020), never above the simple one, which is also checked; and ε = 0 when
      δ ≥ √(1 − e^(−ρ)) (the KL bound on total variation, as in dp_accounting).

    >>> round(zcdp_epsilon(0.5, 1e-6, "simple"), 4), round(zcdp_epsilon(0.5, 1e-6), 4)
    (5.7565, 5.2215)
    """
    rho = _non_negative(rho, "rho", allow_inf=True)
    delta = _unit_closed(delta, "delta")
    conversion = _conversion(conversion)
    if rho == 0.0:
        return 0.0
    if math.isinf(rho) or delta == 0.0:
        return math.inf
    if delta >= 1.0:
        return 0.0
    simple = rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
    if conversion == "simple":
        return simple
    if delta * delta + math.expm1(-rho) > 0.0:
        return 0.0
    log_delta = math.log(delta)
    tight = _minimise_over_orders(lambda alpha: _epsilon_at(rho, log_delta, alpha))
    return max(0.0, min(simple, tight))


def zcdp_delta(rho: float, epsilon: float, conversion: str = "tight") -> float:
    """The δ at which a ρ-zCDP mechanism is (ε, δ)-DP.

    - ``"simple"``: δ = exp(−(ε − ρ)²/(4ρ)) for ε > ρ (the inverse of Bun & Steinke's Prop. 1.3), else 1.
    - ``"tight"``: δ = min over α > 1 of e^((α−1)(αρ−ε))·(1 − 1/α)^α/(α − 1) (CKS 2020, Cor. 13), capped by
      the simple one and by √(1 − e^(−ρ)).

    >>> zcdp_delta(0.5, 5.2216) <= 1e-6 < zcdp_delta(0.5, 5.2216, "simple")
    True
    """
    rho = _non_negative(rho, "rho", allow_inf=True)
    epsilon = _non_negative(epsilon, "epsilon")
    conversion = _conversion(conversion)
    if rho == 0.0:
        return 0.0
    if math.isinf(rho):
        return 1.0
    simple = math.exp(-((epsilon - rho) ** 2) / (4.0 * rho)) if epsilon > rho else 1.0
    if conversion == "simple":
        return simple
    kl = math.sqrt(-math.expm1(-rho))
    log_tight = _minimise_over_orders(lambda alpha: _log_delta_at(rho, epsilon, alpha))
    return min(1.0, simple, kl, math.exp(log_tight))
