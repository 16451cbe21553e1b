"""Exact comparisons of lazily read uniforms with tables of irrational thresholds, vectorised.

Two kinds of table:

- :class:`SortedThresholds` — inversion: for ascending thresholds T_0 ≤ … ≤ T_(N−1) it returns
  ``#{k : T_k ≤ V}`` for fresh uniforms V. With T_k = P(X ≤ x_k) this is inversion sampling of X.
- :class:`IndexedThresholds` — Bernoulli decisions: for each sample i it returns
  ``V_i < T_(index_i)``.

How a comparison is made exactly. Each threshold T is known by a bound ``lo ≤ T·2**W ≤ hi`` (W ≥
128, see :mod:`dpdash.sampling.exact_math`), stored as the 16-bit and 64-bit integers
``a = ⌊lo·2^(b−W)⌋`` and ``c = ⌈hi·2^(b−W)⌉`` (b = 16 or 64). For the b-bit prefix u of V,
V ∈ [u·2^−b, (u+1)·2^−b), so

- ``u < a``  ⇒ (u + 1)·2^−b ≤ lo·2^−W ≤ T: V < T for every continuation of the bits;
- ``u ≥ c``  ⇒ u·2^−b ≥ hi·2^−W ≥ T: V ≥ T for every continuation;
- otherwise the decision waits for more bits. About 2^−16 of decisions need the 64-bit prefix and
  about 2^−60 need more: those go to :class:`~dpdash.sampling.bits.LazyUniform`, which reads 64 bits
  at a time and asks the table's exact bound function for bounds at ever higher precision.

So every decision equals the comparison of an infinitely precise uniform with the exact threshold;
the fixed-point tables only decide *when* the answer is already certain. Changing ``a`` downwards or
``c`` upwards only makes more decisions wait, so tables may round conservatively (clamping to 64
bits, monotone fix-ups) without losing exactness.

For inversion, a 2^16-entry *guide table* maps the first 16 bits of V straight to the answer in
every 16-bit bucket that no threshold interval touches, so most samples cost 2 random bytes and one
lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from dpdash.sampling.bits import BitSource, LazyUniform, random_u16, random_u64
from dpdash.sampling.exact_math import Bounds, ceil_shift

__all__ = ["BoundFunction", "IndexedThresholds", "SortedThresholds"]

#: ``bounds(key, prec) -> (lo, hi)`` with ``lo ≤ T_key · 2**prec ≤ hi``, valid at any precision.
BoundFunction = Callable[[int, int], Bounds]

_MAX64 = 2**64 - 1
_LOW48 = np.uint64(2**48 - 1)


def _floor_words(lows: Sequence[int], prec: int, bits: int) -> list[int]:
    shift = prec - bits
    return [min(lo >> shift, 2**bits - 1 if bits == 64 else 2**bits) for lo in lows]


def _ceil_words(highs: Sequence[int], prec: int, bits: int) -> list[int]:
    shift = prec - bits
    return [min(max(ceil_shift(hi, shift), 0), 2**bits) for hi in highs]


def _prefix64(h: np.ndarray, bits: BitSource | None) -> np.ndarray:
    """Extend 16-bit prefixes to 64 bits with the top 48 bits of fresh uint64 words."""
    words = random_u64(h.size, bits)
    return (h.astype(np.uint64) << np.uint64(48)) | (words >> np.uint64(16))


class SortedThresholds:
    """Inversion against ascending thresholds 0 ≤ T_0 ≤ T_1 ≤ … ≤ T_(N−1) ≤ 1, exactly.

    Args:
        lows, highs: bounds at ``prec`` on each T_k (``lows[k] ≤ T_k·2**prec ≤ highs[k]``).
        prec: their precision, ≥ 64.
        bounds: the exact bound function ``bounds(k, prec)`` for T_k at any precision.

    :meth:`count` returns ``C = #{k : T_k ≤ V}`` for fresh uniforms V, so ``P(C ≤ j) = T_j``.
    """

    __slots__ = ("_bounds", "ceil64_m1", "floor64", "guide", "size")

    def __init__(self, lows: Sequence[int], highs: Sequence[int], prec: int, bounds: BoundFunction) -> None:
        if prec < 64:
            raise ValueError(f"prec must be >= 64, got prec={prec}")
        self.size = len(lows)
        # The thresholds ascend, so a running max of lower bounds (and a running min of upper bounds
        # from the right) are still valid bounds; they make both word tables sorted.
        floor64 = np.array(_floor_words(lows, prec, 64), dtype=np.uint64)
        ceil_m1 = np.array(
            [min(max(c - 1, 0), _MAX64) for c in _ceil_words(highs, prec, 64)], dtype=np.uint64
        )
        self.floor64 = np.maximum.accumulate(floor64) if self.size else floor64
        self.ceil64_m1 = np.minimum.accumulate(ceil_m1[::-1])[::-1].copy() if self.size else ceil_m1
        self._bounds = bounds
        self.guide = self._build_guide()

    def threshold_bounds(self, k: int, prec: int) -> Bounds:
        """The exact bound function: ``lo ≤ T_k·2**prec ≤ hi``."""
        return self._bounds(k, prec)

    def _build_guide(self) -> np.ndarray:
        """Answer for each 16-bit bucket if the whole bucket settles it, else −1."""
        low = np.arange(2**16, dtype=np.uint64) << np.uint64(48)
        high = low | _LOW48
        j_low = np.searchsorted(self.floor64, low, side="right")
        j_high = np.searchsorted(self.floor64, high, side="right")
        if self.size:
            prev = self.ceil64_m1[np.maximum(j_low - 1, 0)]
            settled = (j_low == j_high) & ((j_low == 0) | (prev < low))
        else:
            settled = np.ones(low.size, dtype=bool)
        return np.where(settled, j_low, -1).astype(np.int64)

    def count(self, n: int, bits: BitSource | None = None) -> np.ndarray:
        """``#{k : T_k ≤ V}`` for ``n`` fresh uniforms V, as an int64 array."""
        h = random_u16(n, bits)
        out = self.guide[h]
        pending = np.flatnonzero(out < 0)
        if pending.size:
            u = _prefix64(h[pending], bits)
            j = np.searchsorted(self.floor64, u, side="right")
            # thresholds k ≥ j are certainly above V; those below are certainly at or below V
            # unless u ≤ ⌈hi_k·2^(64−W)⌉ − 1 for the last of them (the upper words ascend).
            ambiguous = (j > 0) & (u <= self.ceil64_m1[np.maximum(j - 1, 0)])
            for i in np.flatnonzero(ambiguous):
                j[i] = self._resolve(int(u[i]), int(j[i]), bits)
            out[pending] = j
        return out

    def _resolve(self, u: int, j: int, bits: BitSource | None) -> int:
        """Exact count for 64-bit prefix ``u`` when some thresholds below ``j`` are unsettled."""
        first = int(np.searchsorted(self.ceil64_m1, np.uint64(u), side="left"))
        v = LazyUniform(u, 64, bits)
        for k in range(first, j):
            if v.less_than(partial(self._bounds, k)):
                return k
        return j


class IndexedThresholds:
    """Exact Bernoulli decisions ``V_i < T_(index_i)`` against a table of thresholds in [0, 1].

    Args:
        lows, highs: bounds at ``prec`` on each T_k; for a bracketed table, bounds valid for every
            threshold the entry stands for (see :class:`dpdash.sampling.discrete_gaussian`).
        prec: their precision, ≥ 64.
        bounds: the exact bound function ``bounds(key, prec)``; ``key`` is the table index unless
            :meth:`less` is given separate keys.
    """

    __slots__ = ("_bounds", "ceil16", "ceil64_m1", "floor16", "floor64", "size")

    def __init__(self, lows: Sequence[int], highs: Sequence[int], prec: int, bounds: BoundFunction) -> None:
        if prec < 64:
            raise ValueError(f"prec must be >= 64, got prec={prec}")
        self.size = len(lows)
        self.floor16 = np.array(_floor_words(lows, prec, 16), dtype=np.int32)
        self.ceil16 = np.array(_ceil_words(highs, prec, 16), dtype=np.int32)
        self.floor64 = np.array(_floor_words(lows, prec, 64), dtype=np.uint64)
        self.ceil64_m1 = np.array(
            [min(max(c - 1, 0), _MAX64) for c in _ceil_words(highs, prec, 64)], dtype=np.uint64
        )
        self._bounds = bounds

    def threshold_bounds(self, key: int, prec: int) -> Bounds:
        """The exact bound function: ``lo ≤ T_key·2**prec ≤ hi``."""
        return self._bounds(key, prec)

    def less(
        self,
        index: np.ndarray | None,
        n: int,
        bits: BitSource | None = None,
        keys: np.ndarray | None = None,
    ) -> np.ndarray:
        """``V_i < T_(index_i)`` for ``n`` fresh uniforms (``index=None``: all use entry 0).

        ``keys[i]`` (default ``index[i]``) is passed to the exact bound function when the stored
        words do not settle sample i.
        """
        h = random_u16(n, bits).astype(np.int32)
        if index is None:
            floor16, ceil16 = self.floor16[0], self.ceil16[0]
        else:
            floor16, ceil16 = self.floor16[index], self.ceil16[index]
        out = h < floor16
        pending = np.flatnonzero(~out & (h < ceil16))
        if pending.size:
            u = _prefix64(h[pending].astype(np.uint16), bits)
            idx = np.zeros(pending.size, dtype=np.intp) if index is None else index[pending]
            below = u < self.floor64[idx]
            ambiguous = ~below & (u <= self.ceil64_m1[idx])
            for i in np.flatnonzero(ambiguous):
                key = int(keys[pending[i]]) if keys is not None else int(idx[i])
                v = LazyUniform(int(u[i]), 64, bits)
                below[i] = v.less_than(partial(self._bounds, key))
            out[pending] = below
        return out
