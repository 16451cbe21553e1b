"""Exact discrete Laplace noise on OS randomness: P(X = x) ∝ exp(−|x|/scale), x ∈ ℤ.

With r = exp(−1/scale) the pmf is P(X = x) = (1 − r)/(1 + r) · r^|x| (the "geometric mechanism"
noise of Ghosh, Roughgarden & Sundararajan 2009; Canonne, Kamath & Steinke, "The Discrete Gaussian
for Differential Privacy", NeurIPS 2020, Algorithm 2, is its reference sampler, kept in
:mod:`dpdash.sampling.reference`).

Algorithm (scale ≤ 4096): inversion of the CDF, exactly. For x ≤ 0, P(X ≤ x) = r^(−x)/(1 + r), and
for x ≥ 0, P(X ≤ x) = 1 − r^(x+1)/(1 + r). With L = ⌈12·scale⌉ the 2L + 2 thresholds
T_j = P(X < j − L), j = 0 … 2L + 1, go in a sorted table; for a uniform V the count
``C = #{j : T_j ≤ V}`` gives X = C − L − 1 when 1 ≤ C ≤ 2L + 1. C = 0 is exactly the left tail
{X ≤ −L − 1} (probability r^(L+1)/(1 + r) < 4·10^−6) and, given it, −X − L − 1 is geometric with
P(· ≥ g) = r^g; likewise on the right. That geometric is the law of X given X ≥ 0, so the tails are
drawn by re-sampling X until it is ≥ 0 (each try succeeds with probability 1/(1 + r) > 1/2).

Algorithm (scale > 4096): X = G1 − G2 for independent geometrics with P(G ≥ g) = r^g
(:mod:`dpdash.sampling.geometric`, bounded tables): P(G1 − G2 = x) ∝ Σ_g r^(g+|x|)·r^g ∝ r^|x|.

Exactness: every threshold is bounded rigorously in fixed point and every comparison with the
uniform is decided exactly, reading more random bits when the bound does not settle it
(:mod:`dpdash.sampling.thresholds`). No floating-point arithmetic takes part.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from math import ceil

import numpy as np

from dpdash.sampling import _params
from dpdash.sampling._threads import sample_in_threads
from dpdash.sampling.bits import BitSource
from dpdash.sampling.exact_math import (
    Bounds,
    div_bounds,
    exp_bounds,
    mul_bounds,
    one_minus,
    power_bounds,
    round_out,
)
from dpdash.sampling.geometric import (
    DIRECT_MAX_SCALE,
    TAIL_FACTOR,
    check_width,
    sample_geometric,
    table_precision,
)
from dpdash.sampling.thresholds import SortedThresholds

__all__ = ["MAX_SCALE", "discrete_laplace"]

#: The largest accepted scale. Beyond it the int64 results could, with astronomically small but
#: non-zero probability, overflow; 2**40 keeps that below 2^−(2^20).
MAX_SCALE = 2**40

_GUARD = 32


@dataclass(frozen=True, slots=True)
class LaplaceTable:
    """The inversion table of the discrete Laplace at one scale and its half-width L."""

    thresholds: SortedThresholds
    half_width: int


def _cdf_bounds(scale: Fraction, half_width: int, j: int, prec: int) -> Bounds:
    """Bound on T_j = P(X < j − L).

    T_j = r^k/(1 + r) with k = L + 1 − j for j ≤ L + 1, else T_j = 1 − r^k/(1 + r) with k = j − L.
    """
    work = prec + _GUARD
    one = 1 << work
    r = exp_bounds(-1 / scale, work)
    if j <= half_width + 1:
        k = half_width + 1 - j
        q = div_bounds(exp_bounds(Fraction(-k) / scale, work), (one + r[0], one + r[1]), work)
        return round_out(q, work, prec)
    k = j - half_width
    q = div_bounds(exp_bounds(Fraction(-k) / scale, work), (one + r[0], one + r[1]), work)
    return round_out(one_minus(q, work), work, prec)


@lru_cache(maxsize=32)
def laplace_table(scale: Fraction) -> LaplaceTable:
    """Build (once per scale) the 2L + 2 thresholds T_j = P(X < j − L) by a power recurrence."""
    half_width = max(1, ceil(TAIL_FACTOR * scale))
    prec = table_precision(half_width)
    while True:
        one = 1 << prec
        r = exp_bounds(-1 / scale, prec)
        s = div_bounds((one, one), (one + r[0], one + r[1]), prec)  # 1/(1 + r)
        p_lo, p_hi = power_bounds(r, half_width + 1, prec)
        q = [mul_bounds((lo, hi), s, prec) for lo, hi in zip(p_lo, p_hi, strict=True)]
        # ascending: q_(L+1), …, q_1, q_0 = 1/(1+r), then 1 − q_2, …, 1 − q_(L+1)
        left = q[::-1]
        right = [one_minus(b, prec) for b in q[2:]]
        lows = [b[0] for b in left] + [b[0] for b in right]
        highs = [b[1] for b in left] + [b[1] for b in right]
        if check_width(lows, highs, prec):
            break
        prec *= 2

    def bounds(j: int, bound_prec: int) -> Bounds:
        return _cdf_bounds(scale, half_width, j, bound_prec)

    return LaplaceTable(SortedThresholds(lows, highs, prec, bounds), half_width)


def _direct(scale: Fraction, n: int, bits: BitSource | None) -> np.ndarray:
    table = laplace_table(scale)
    half = table.half_width
    x = table.thresholds.count(n, bits)
    x -= half + 1
    if n and (int(x.min()) < -half or int(x.max()) > half):
        # C = 0 (left tail) or C = 2L + 2 (right tail): X = ∓(L + 1 + G)
        for where, sign in ((np.flatnonzero(x < -half), -1), (np.flatnonzero(x > half), 1)):
            if where.size:
                x[where] = sign * (half + 1 + _non_negative_part(scale, where.size, bits))
    return x


def _non_negative_part(scale: Fraction, n: int, bits: BitSource | None) -> np.ndarray:
    """``n`` draws of X given X ≥ 0, i.e. geometric with P(G ≥ g) = exp(−g/scale)."""
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while todo.size:
        x = _direct(scale, todo.size, bits)
        if int(np.abs(x).max()) > 2**62:
            raise OverflowError("a discrete Laplace variate exceeded the int64 range")
        ok = x >= 0
        out[todo[ok]] = x[ok]
        todo = todo[~ok]
    return out


def sample_discrete_laplace(scale: Fraction, n: int, bits: BitSource | None = None) -> np.ndarray:
    """``n`` exact discrete Laplace draws at a validated rational scale, as int64 (no checks)."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if scale <= DIRECT_MAX_SCALE:
        return _direct(scale, n, bits)
    return sample_geometric(scale, n, bits) - sample_geometric(scale, n, bits)


def discrete_laplace(
    scale: _params.RationalLike, size: _params.Size = 1, *, _bits: BitSource | None = None
) -> np.ndarray:
    """Exact discrete Laplace noise: P(X = x) = (1 − r)/(1 + r)·r^|x|, r = exp(−1/scale), x ∈ ℤ.

    Release-grade: OS randomness and exact rational arithmetic only (see the module docstring for
    the algorithm and the exactness argument; Canonne, Kamath & Steinke 2020, Algorithm 2, is the
    reference). Adding it to an integer query with ℓ1 sensitivity Δ at ``scale = Δ/ε`` is ε-DP.

    Args:
        scale: a rational in (0, 2**40]; a float is taken as the exact binary number it holds.
        size: the number of draws, or a shape.

    Returns:
        An int64 array of shape ``size``. The variance is 2r/(1 − r)².

    Raises:
        ParameterError: a scale that is not finite, ≤ 0 or > 2**40, or a negative size.
        ParameterTypeError: a scale or size of the wrong type.

    >>> from fractions import Fraction
    >>> x = discrete_laplace(Fraction(7, 2), 5)
    >>> x.dtype, x.shape
    (dtype('int64'), (5,))
    """
    scale = _params.positive_scale(scale, "scale", MAX_SCALE, "2**40")
    shape = _params.shape(size)

    def sample(n: int, bits: BitSource | None) -> np.ndarray:
        return sample_discrete_laplace(scale, n, bits)

    return sample_in_threads(sample, math.prod(shape), _bits).reshape(shape)
