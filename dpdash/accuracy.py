"""Accuracy conventions shared by every mechanism.

dpdash's convention (see MATH.md): "accuracy at confidence c for k answers" is the smallest half-width a
with Pr[max_i |noise_i| ≤ a] ≥ c over k independent coordinates. Since the coordinates are independent,
that is the smallest a whose two-sided tail per coordinate is at most t = 1 − c^(1/k).

The textbook bound (Dwork & Roth, Theorem 3.8) instead splits the failure probability β = 1 − c evenly
over the k coordinates by the union bound: per-coordinate tail β/k. For Laplace noise this gives
b·ln(k/β). It is never smaller than the exact half-width, and it is labelled "union bound" wherever shown.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpdash import _validation as check

__all__ = [
    "EXACT_LABEL",
    "UNION_BOUND_LABEL",
    "simultaneous_coverage",
    "simultaneous_tail",
    "smallest_integer",
    "union_bound_tail",
]

EXACT_LABEL = "exact: Pr[all k answers within ±a] = confidence"
UNION_BOUND_LABEL = "union bound (Dwork & Roth Thm 3.8): per-answer tail (1 − confidence)/k"


def simultaneous_tail(confidence: float, k: int = 1) -> float:
    """Per-coordinate two-sided tail t = 1 − c^(1/k) that makes k independent answers all fit w.p. c.

    Computed as −expm1(ln(c)/k) so that it stays accurate when t is tiny (large k).

    >>> round(simultaneous_tail(0.95, 1), 12)
    0.05
    """
    c = check.open_unit(confidence, "confidence")
    k = check.positive_int(k, "k")
    return -math.expm1(math.log(c) / k)


def union_bound_tail(confidence: float, k: int = 1) -> float:
    """Per-coordinate tail β/k of the union bound, with β = 1 − c.

    >>> round(union_bound_tail(0.95, 10), 12)
    0.005
    """
    c = check.open_unit(confidence, "confidence")
    k = check.positive_int(k, "k")
    return (1.0 - c) / k


def simultaneous_coverage(tail: float, k: int = 1) -> float:
    """Pr[all k independent answers within ±a] = (1 − t)^k, given the per-answer tail t = Pr[|noise| > a]."""
    k = check.positive_int(k, "k")
    if not 0.0 <= tail <= 1.0:
        raise ValueError(f"tail must be a probability in [0, 1], got tail={tail!r}")
    return math.exp(k * math.log1p(-tail)) if tail < 1.0 else 0.0


def smallest_integer(predicate: Callable[[int], bool], guess: float, lower: int = 0) -> int:
    """The smallest integer m ≥ ``lower`` with ``predicate(m)``, for a predicate that is false then true.

    ``guess`` (from a continuous approximation) is only a starting point: it is checked and moved, one
    integer at a time near the answer and by galloping steps far from it, so the result never rests on
    the floating-point rounding of the guess.
    """
    m = max(lower, math.floor(guess)) if math.isfinite(guess) else lower
    step = 1
    while not predicate(m):  # too small: gallop up
        m += step
        step *= 2
    step = 1
    while m > lower and predicate(m - 1):  # walk down while the previous integer also qualifies
        below = max(lower, m - step)
        if predicate(below):
            m, step = below, step * 2
        else:
            m, step = m - 1, 1
    return m


def integer_half_width(log_abs_tail: Callable[[int], float], tail: float, guess: float) -> int:
    """The smallest integer a ≥ 0 with Pr[|Z| > a] ≤ ``tail``, given m ↦ ln Pr[|Z| > m] (non-increasing)
    and a continuous ``guess`` to start from."""
    log_target = math.log(tail)
    return smallest_integer(lambda m: log_abs_tail(m) <= log_target, guess)
