"""Monotone searches over floats, to the last bit.

Calibrations ("smallest σ with δ(σ) ≤ δ", "smallest ε whose accuracy is ≤ α") are monotone yes/no
questions. Bisecting over the bit patterns of positive doubles (which are ordered like the numbers they
encode) ends, in at most 64 steps, at two adjacent doubles: the answer is exact to one unit in the last place.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

from dpdash.errors import ParameterError


def _ordinal(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _from_ordinal(i: int) -> float:
    return struct.unpack("<d", struct.pack("<q", i))[0]


def smallest_true(predicate: Callable[[float], bool], lo: float, hi: float) -> float:
    """The smallest double x in (lo, hi] with ``predicate(x)``.

    Requires 0 < lo < hi, ``predicate(lo)`` false, ``predicate(hi)`` true, and the predicate monotone
    (false then true) on [lo, hi].
    """
    ilo, ihi = _ordinal(lo), _ordinal(hi)
    while ihi - ilo > 1:
        mid = (ilo + ihi) // 2
        if predicate(_from_ordinal(mid)):
            ihi = mid
        else:
            ilo = mid
    return _from_ordinal(ihi)


def bracket(
    predicate: Callable[[float], bool],
    guess: float,
    *,
    lower: float = 1e-12,
    upper: float = 1e12,
    what: str = "value",
) -> tuple[float, float]:
    """(lo, hi) with ``predicate(lo)`` false and ``predicate(hi)`` true, by doubling from ``guess``.

    Raises ``ParameterError`` naming ``what`` if no such pair exists within [lower, upper].
    """
    x = min(max(guess, lower), upper)
    if predicate(x):
        hi = x
        while True:
            lo = max(hi / 2.0, lower)
            if not predicate(lo):
                return lo, hi
            if lo <= lower:
                raise ParameterError(f"the {what} is below {lower:g}: the target is met even there")
            hi = lo
    lo = x
    while True:
        hi = min(lo * 2.0, upper)
        if predicate(hi):
            return lo, hi
        if hi >= upper or not math.isfinite(hi):
            raise ParameterError(f"the target needs a {what} above {upper:g}, which dpdash refuses")
        lo = hi
