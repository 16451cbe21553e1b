"""Rigorous fixed-point bounds on exp of a rational, with Python integers only.

A *bound* at precision ``prec`` on a real number ``T ≥ 0`` is a pair of integers ``(lo, hi)`` with

    lo ≤ T · 2**prec ≤ hi.

Every function here returns a valid bound (it contains the true value, always) and a tight one
(``hi − lo`` is a few units, independent of ``prec``), so that asking again with a larger ``prec``
pins ``T`` down as finely as needed. The samplers rely on validity for exactness and on tightness
only for speed: a decision "V < T" for a uniform V is taken from a bound only when the bound already
settles it (see ``dpdash.sampling.bits.LazyUniform``).

No floating-point number is used anywhere. The only transcendental function is exp, computed by its
Taylor series on integers with an explicit error bound:

    e^f = Σ_k f^k / k!,   0 ≤ f ≤ 1,

with each term rounded down (so each is at most 2 units low) and the tail after the first zero term
bounded by 4 units; e^n for an integer n ≥ 1 is e^1 raised by binary powering on bounds, and
e^(−y) = 1 / e^y by outward-rounded integer division. Guard bits proportional to log2(n) absorb the
error growth of the powering, so the result is tight to about 1 unit at ``prec``.

Reference: this is standard interval (ball) arithmetic, as used for the exact samplers of Canonne,
Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (the samplers in
this package compare a uniform with such bounds instead of running their Algorithm 1 bit by bit).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import floor

__all__ = [
    "Bounds",
    "ceil_shift",
    "div_bounds",
    "exp_bounds",
    "mul_bounds",
    "one_minus",
    "power_bounds",
    "rational_bounds",
    "round_out",
]

#: ``(lo, hi)`` with ``lo ≤ T · 2**prec ≤ hi``.
Bounds = tuple[int, int]

# A rational strictly above ln 2 = 0.693147…: if y ≥ (prec + 1)·_LN2_ABOVE then e^(−y) <
# 2^−(prec+1).
_LN2_ABOVE = Fraction(6932, 10000)


def ceil_shift(x: int, shift: int) -> int:
    """⌈x / 2**shift⌉ for ``shift ≥ 0``."""
    return -((-x) >> shift)


def round_out(bounds: Bounds, from_prec: int, to_prec: int) -> Bounds:
    """Re-express a bound at a lower precision, rounding outward (so it stays valid)."""
    shift = from_prec - to_prec
    if shift < 0:
        raise ValueError(f"to_prec must be <= from_prec, got to_prec={to_prec}, from_prec={from_prec}")
    return bounds[0] >> shift, ceil_shift(bounds[1], shift)


def rational_bounds(x: Fraction, prec: int) -> Bounds:
    """Bound on a rational ``x ≥ 0``: ``(⌊x·2**prec⌋, ⌈x·2**prec⌉)``."""
    num = x.numerator << prec
    return num // x.denominator, -((-num) // x.denominator)


def mul_bounds(a: Bounds, b: Bounds, prec: int) -> Bounds:
    """Bound on the product of two non-negative numbers given by bounds at ``prec``."""
    return (a[0] * b[0]) >> prec, ceil_shift(a[1] * b[1], prec)


def div_bounds(a: Bounds, b: Bounds, prec: int) -> Bounds:
    """Bound on ``A / B`` for ``A ≥ 0``, ``B > 0`` bounded at ``prec`` (needs ``b[0] > 0``)."""
    if b[0] <= 0:
        raise ZeroDivisionError("the divisor's lower bound must be > 0; raise the precision")
    return (a[0] << prec) // b[1], -((-(a[1] << prec)) // b[0])


def one_minus(a: Bounds, prec: int) -> Bounds:
    """Bound on ``1 − A`` for ``0 ≤ A ≤ 1`` given by a bound at ``prec``."""
    one = 1 << prec
    return max(0, one - a[1]), min(one, one - a[0])


def power_bounds(base: Bounds, count: int, prec: int) -> tuple[list[int], list[int]]:
    """Bounds on ``base**k`` for ``k = 0 … count`` by the recurrence ``x_(k+1) = x_k · base``.

    Each step rounds outward, so every bound is valid; the width grows by about ``k`` units (plus
    ``k`` times the width of ``base``), which callers absorb with guard bits and then check.
    """
    lo_b, hi_b = base
    lows = [0] * (count + 1)
    highs = [0] * (count + 1)
    lo = hi = 1 << prec
    lows[0] = highs[0] = lo
    for k in range(1, count + 1):
        lo = (lo * lo_b) >> prec
        hi = -((-hi * hi_b) >> prec)
        lows[k] = lo
        highs[k] = hi
    return lows, highs


def _exp_series(p: int, q: int, prec: int) -> Bounds:
    """Bound on e^(p/q) for ``0 ≤ p/q ≤ 1`` by the Taylor series.

    Terms t_k = ⌊t_(k−1)·p/(q·k)⌋ with t_0 = 2**prec undershoot the exact terms by less than 2 each
    (e_k < e_(k−1)·f/k + 1 < 2); the loop stops at the first zero term t_K, whose exact value is <
    2, and the exact tail from K on is at most twice that (the ratio of consecutive terms is ≤ 1/2).
    So the sum S of the computed terms satisfies S ≤ e^f·2**prec < S + 2K + 2.
    """
    term = 1 << prec
    total = term
    k = 0
    while term:
        k += 1
        term = term * p // (q * k)
        total += term
    return total, total + 2 * k + 2


@lru_cache(maxsize=64)
def _e_bounds(prec: int) -> Bounds:
    """Bound on e = e^1 at ``prec``."""
    return _exp_series(1, 1, prec)


def _pow_int_bounds(base: Bounds, n: int, prec: int) -> Bounds:
    """Bound on ``base**n`` (n ≥ 0) by binary powering, each product rounded outward."""
    result: Bounds = (1 << prec, 1 << prec)
    square = base
    while n:
        if n & 1:
            result = mul_bounds(result, square, prec)
        n >>= 1
        if n:
            square = mul_bounds(square, square, prec)
    return result


def _exp_nonneg(y: Fraction, prec: int) -> Bounds:
    """Bound on e^y for rational ``y ≥ 0`` (absolute at ``prec``; the value may exceed 1)."""
    n = floor(y)
    f = y - n
    result = _exp_series(f.numerator, f.denominator, prec)
    if n:
        result = mul_bounds(result, _pow_int_bounds(_e_bounds(prec), n, prec), prec)
    return result


def exp_bounds(x: Fraction, prec: int) -> Bounds:
    """Bound on e^x · 2**prec for a rational ``x`` (any sign): ``lo ≤ e^x·2**prec ≤ hi``.

    The bound is always valid and at most a few units wide. For very negative ``x``
    (e^x < 2^−(prec+1)) it is ``(0, 1)``.

    >>> lo, hi = exp_bounds(Fraction(-1, 2), 64)
    >>> lo <= 11188515852577165299 <= hi and hi - lo <= 4   # ⌊e^(−1/2)·2^64⌋
    True
    """
    if prec < 0:
        raise ValueError(f"prec must be an integer >= 0, got prec={prec}")
    x = Fraction(x)
    if x == 0:
        one = 1 << prec
        return one, one
    y = -x if x < 0 else x
    n = floor(y)
    guard = 2 * n.bit_length() + 24
    work = prec + guard
    if x > 0:
        work += (3 * n) // 2 + 2  # e^x < 2^(1.5x): keep the absolute error below a unit
        return round_out(_exp_nonneg(y, work), work, prec)
    if y >= (prec + 1) * _LN2_ABOVE:
        return 0, 1
    lo, hi = _exp_nonneg(y, work)  # bounds on e^y · 2**work, both ≥ 2**work
    num = 1 << (prec + work)
    return num // hi, -((-num) // lo)
