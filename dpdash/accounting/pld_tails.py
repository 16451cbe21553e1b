"""The tails of a composed PLD pmf (``running_pld``): its suffix sums, so that δ(ε) = P[∞] + Σ_{l > ε}
P[l]·(1 − e^(ε − l)) is read at any ε, and a path's δ from the base's tails and its own short pmfs in one
pass."""

from __future__ import annotations

import math

import numpy as np
from scipy import signal

from dpdash.accounting.pld import (
    _Pmf,
)

__all__ = []


class _Tails:
    """The hockey-stick divergence of a loss pmf (the base of a split) at many ε at once.

    With U_i = P[∞] + Σ_{j≥i} p_j and W_i = Σ_{j≥i} p_j·e^(l_i − l_j) (W_i = p_i + e^(−interval)·W_{i+1}, a
    stable recurrence: every term ≤ 1), δ(x) = U_i − e^(x − l_i)·W_i where i is the first grid index with
    loss l_i above x (a loss equal to x adds nothing either way). Both are suffix sums, computed only from
    the lowest index asked so far (``start``; a budget check asks about the upper tail) and extended
    downwards, at least doubling."""

    def __init__(self, pmf: _Pmf, interval: float) -> None:
        self.pmf, self.lower, self.interval = pmf, pmf.lower, interval
        self.size = len(pmf.probs)
        self.start = self.size  # upper[k], kept[k] are U and W at index start + k
        self.upper, self.kept = np.array([pmf.infinity]), np.array([0.0])

    def _extend(self, first: int) -> None:
        start = max(0, min(first, self.start - max(self.size - self.start, 1024)))
        probs = self.pmf.probs[start : self.start][::-1]
        ratio = math.exp(-self.interval)
        kept = signal.lfilter([1.0], [1.0, -ratio], probs, zi=[ratio * self.kept[0]])[0]
        self.upper = np.concatenate([np.cumsum(probs)[::-1] + self.upper[0], self.upper])
        self.kept = np.concatenate([kept[::-1], self.kept])
        self.start = start

    def _suffix(self, lo: int) -> None:
        if lo < self.start:
            self._extend(lo)

    def delta(self, x: np.ndarray) -> np.ndarray:
        """δ at each ε in ``x``."""
        # clipped before the integer cast: a huge ε (1e300) would overflow int64
        steps = np.clip(np.floor(x / self.interval), self.lower - 1, self.lower + self.size - 1)
        first = steps.astype(np.int64) - self.lower + 1
        self._suffix(int(first.min()) if len(first) else self.size)
        offset = x - (self.lower + first) * self.interval  # ≤ 0: the first loss above x is at index first
        k = first - self.start
        return np.maximum(self.upper[k] - np.exp(np.minimum(offset, 0.0)) * self.kept[k], 0.0)

    def shifted(self, lo: int, hi: int, scale: float) -> np.ndarray:
        """D_i = U_i − scale·W_i for i = lo … hi (U_0 − scale·W_0·e^(i·interval) below 0, P[∞] from the
        top): δ at every x whose first loss above it is l_i and x − l_i = log(scale), clipped at 0."""
        index = np.arange(lo, hi + 1)
        out = np.full(len(index), self.pmf.infinity)
        inside = (index >= 0) & (index < self.size)
        if inside.any():
            self._suffix(int(index[inside][0]))
            k = index[inside] - self.start
            out[inside] = self.upper[k] - scale * self.kept[k]
        below = index < 0
        if below.any():
            self._suffix(0)
            out[below] = self.upper[0] - scale * self.kept[0] * np.exp(index[below] * self.interval)
        return np.maximum(out, 0.0)

    def path_deltas(self, limit: float, recent: _Pmf | None, owns: list[_Pmf | None]) -> list[float]:
        """δ(limit) of base ⊗ recent ⊗ own for each own (None: nothing), from one correlation.

        For J's loss at grid index L, x = limit − L·interval has its first base loss above it at index
        K − L (K = ⌊limit/interval⌋ − lower + 1) with x − l = limit − (⌊limit/interval⌋ + 1)·interval, the
        same for every L; so δ = P_J[∞] + Σ_b own(b)·F(K − b), F(k) = Σ_a recent(a)·D(k − a), one
        convolution shared by every path, then one dot product per path."""
        grid = math.floor(limit / self.interval)
        scale = math.exp(min(limit - (grid + 1) * self.interval, 0.0))
        top = grid - self.lower + 1  # K
        spans = [(0, 0) if own is None else (own.lower, own.lower + len(own.probs) - 1) for own in owns]
        b_lo, b_hi = min(lo for lo, _ in spans), max(hi for _, hi in spans)
        a_hi = 0 if recent is None else recent.lower + len(recent.probs) - 1
        # Past the base's top every D is P[∞]: a huge limit (ε = 1e300) reads the same as the first one past
        # it, and the indices stay small integers.
        top = min(top, self.size + b_hi + a_hi)
        if recent is None:
            f = self.shifted(top - b_hi, top - b_lo, scale)  # F(k) = D(k)
            recent_infinity = 0.0
        else:
            a_lo, a_hi = recent.lower, recent.lower + len(recent.probs) - 1
            d = self.shifted(top - b_hi - a_hi, top - b_lo - a_lo, scale)
            f = np.maximum(signal.fftconvolve(d, recent.probs, mode="valid"), 0.0)
            recent_infinity = recent.infinity
        out = []
        for own in owns:  # f[j] = F(top − b_hi + j)
            if own is None:  # b = 0 only, with mass 1
                out.append(recent_infinity + float(f[b_hi]))
                continue
            lo = b_hi - (own.lower + len(own.probs) - 1)
            values = f[lo : lo + len(own.probs)][::-1]
            infinity = -math.expm1(math.log1p(-recent_infinity) + math.log1p(-own.infinity))
            out.append(infinity + float(np.dot(own.probs, values)))
        return out
