"""Exact geometric variates G with P(G ≥ g) = exp(−g/scale), g = 0, 1, 2, …, vectorised.

Used by the discrete Laplace sampler for large scales (X = G1 − G2) and for its far tails.

Small scales (≤ 4096) — inversion with a tail by memorylessness. With r = exp(−1/scale),
P(G ≤ g) = 1 − r^(g+1). For L = ⌈12·scale⌉ the thresholds T_g = 1 − r^(g+1), g < L, go in a
:class:`~dpdash.sampling.thresholds.SortedThresholds` table, so ``C = #{g < L : T_g ≤ V}`` equals G
whenever G < L. The event C = L is exactly {G ≥ L} (probability r^L = e^−12 ≈ 6·10^−6), and given
it, G − L has the same law as G (memorylessness), so G = L + a fresh geometric there.

Large scales — mixed-radix digits. With base B = 4096 and K ≥ 1 levels chosen so that
scale / B^K ≤ 4096, every g ≥ 0 is uniquely g = B^K·Q + Σ_(i<K) B^i·D_i with 0 ≤ D_i < B, and

    r^g = (r^(B^K))^Q · Π_i (r^(B^i))^(D_i),

a product of one factor per digit. So Q and the D_i are independent: Q is geometric with scale
scale/B^K (the small-scale case) and D_i is the geometric with ratio ρ_i = exp(−B^i/scale)
truncated to {0, …, B − 1}, sampled by inversion against P(D_i ≤ d) = (1 − ρ_i^(d+1)) / (1 − ρ_i^B).
Every table size is therefore bounded (≤ 49 153 entries) whatever the scale.

All thresholds are bounded rigorously in fixed point (:mod:`dpdash.sampling.exact_math`) and every
comparison is exact (:mod:`dpdash.sampling.thresholds`).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import ceil

import numpy as np

from dpdash.sampling.bits import BitSource
from dpdash.sampling.exact_math import (
    Bounds,
    div_bounds,
    exp_bounds,
    one_minus,
    power_bounds,
    round_out,
)
from dpdash.sampling.thresholds import SortedThresholds

__all__ = ["DIRECT_MAX_SCALE", "sample_geometric"]

#: Scales up to this use one inversion table; larger ones use mixed-radix digits.
DIRECT_MAX_SCALE = Fraction(4096)
#: Tables cover P(G ≥ L) = e^(−TAIL_FACTOR); beyond that a loop (rare) takes over.
TAIL_FACTOR = 12
_BASE = 4096
_GUARD = 32
# The largest value an int64 may take before we refuse to continue (never reached in practice:
# it needs about 2^40 consecutive events of probability e^−12).
_INT64_SAFE = 2**62


def check_width(lows: list[int], highs: list[int], prec: int) -> bool:
    """Whether every bound is narrower than 2^(prec−80) units, i.e. 2^−80 in value."""
    limit = 1 << (prec - 80)
    return all(h - lo < limit for lo, h in zip(lows, highs, strict=True))


def table_precision(entries: int, extra: int = 0) -> int:
    """A working precision for a recurrence over ``entries`` steps: 128 bits plus guard bits."""
    return 128 + 2 * entries.bit_length() + extra


@lru_cache(maxsize=32)
def direct_table(scale: Fraction) -> tuple[SortedThresholds, int]:
    """The inversion table of T_g = 1 − exp(−(g+1)/scale), g = 0 … L−1, and L."""
    length = max(1, ceil(TAIL_FACTOR * scale))

    def bounds(g: int, prec: int) -> Bounds:
        work = prec + _GUARD
        return round_out(one_minus(exp_bounds(Fraction(-(g + 1)) / scale, work), work), work, prec)

    prec = table_precision(length)
    while True:
        r = exp_bounds(-1 / scale, prec)
        p_lo, p_hi = power_bounds(r, length, prec)
        one = 1 << prec
        lows = [max(0, one - h) for h in p_hi[1:]]
        highs = [one - lo for lo in p_lo[1:]]
        if check_width(lows, highs, prec):
            break
        prec *= 2
    return SortedThresholds(lows, highs, prec, bounds), length


def _truncated_bounds(ratio_exponent: Fraction, d: int, prec: int) -> Bounds:
    """Bound on (1 − ρ^(d+1)) / (1 − ρ^B) with ρ = exp(−ratio_exponent)."""
    den_exp = ratio_exponent * _BASE
    work = prec + _GUARD + max(0, ceil(1 / den_exp)).bit_length() + 8
    num = one_minus(exp_bounds(-ratio_exponent * (d + 1), work), work)
    den = one_minus(exp_bounds(-den_exp, work), work)
    return round_out(div_bounds(num, den, work), work, prec)


@lru_cache(maxsize=32)
def digit_table(scale: Fraction, level: int) -> SortedThresholds:
    """Inversion table of D_level: P(D ≤ d) = (1 − ρ^(d+1)) / (1 − ρ^B), ρ = exp(−B^level/scale)."""
    beta = Fraction(_BASE**level) / scale

    def bounds(d: int, prec: int) -> Bounds:
        return _truncated_bounds(beta, d, prec)

    prec = table_precision(_BASE, max(0, ceil(1 / (beta * _BASE))).bit_length())
    while True:
        rho = exp_bounds(-beta, prec)
        p_lo, p_hi = power_bounds(rho, _BASE, prec)
        one = 1 << prec
        den = (max(0, one - p_hi[_BASE]), one - p_lo[_BASE])
        lows, highs = [], []
        for d in range(_BASE - 1):
            num = (max(0, one - p_hi[d + 1]), one - p_lo[d + 1])
            lo, hi = div_bounds(num, den, prec)
            lows.append(lo)
            highs.append(hi)
        if check_width(lows, highs, prec):
            break
        prec *= 2
    return SortedThresholds(lows, highs, prec, bounds)


def levels(scale: Fraction) -> int:
    """The number K of base-4096 digits so that scale / 4096^K ≤ DIRECT_MAX_SCALE."""
    k = 0
    while scale / _BASE**k > DIRECT_MAX_SCALE:
        k += 1
    return k


def _direct(scale: Fraction, n: int, bits: BitSource | None) -> np.ndarray:
    table, length = direct_table(scale)
    g = table.count(n, bits)
    tail = np.flatnonzero(g == length)
    if tail.size:
        more = _direct(scale, tail.size, bits)
        if int(more.max()) > _INT64_SAFE - length:
            raise OverflowError("a geometric variate exceeded the int64 range")
        g[tail] = length + more
    return g


def sample_geometric(scale: Fraction, n: int, bits: BitSource | None = None) -> np.ndarray:
    """``n`` exact draws of G with P(G ≥ g) = exp(−g/scale), as int64 (no parameter checks)."""
    k = levels(scale)
    if k == 0:
        return _direct(scale, n, bits)
    top = _BASE**k
    q = _direct(scale / top, n, bits)
    if q.size and int(q.max()) > _INT64_SAFE // top:
        raise OverflowError("a geometric variate exceeded the int64 range")
    g = q * top
    for level in range(k):
        g += digit_table(scale, level).count(n, bits) * (_BASE**level)
    return g
