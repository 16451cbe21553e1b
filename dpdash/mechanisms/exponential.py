"""The exponential mechanism (McSherry & Talwar 2007; Dwork & Roth 2014, §3.4) and permute-and-flip
(McKenna & Sheldon, NeurIPS 2020)."""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from scipy import special

from dpdash import _validation as check
from dpdash import sampling
from dpdash.mechanisms.selection import (
    SelectionMechanism,
    exact_gammas,
    exp_trials,
    float_utilities,
    row_chunks,
)
from dpdash.sampling.thresholds import IndexedThresholds

__all__ = ["ExponentialMechanism", "PermuteAndFlip"]

#: Most proposals the exponential mechanism draws at once.
_MAX_BATCH = 2**22


@dataclass(frozen=True, slots=True, kw_only=True)
class _TrialSelection(SelectionMechanism):
    """A selection mechanism released through exact Bernoulli(exp(−γ_r)) trials, γ_r = f·(u* − u_r)."""

    def release_trials(self, values: npt.ArrayLike, n: int) -> np.ndarray:
        """n independent selections, exact: ``_select`` from a table of exact trials (with one candidate,
        that candidate)."""
        gammas = exact_gammas(values, self.factor)
        out = np.zeros(check.draws(n, "n", len(gammas)), dtype=np.int64)
        if len(gammas) > 1 and out.size > 0:
            self._select(gammas, exp_trials(gammas), out)
        return out

    @abstractmethod
    def _select(self, gammas: list[Fraction], table: IndexedThresholds, out: np.ndarray) -> None:
        """Fill ``out`` with independent selections, given γ and the table of their exact trials."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExponentialMechanism(_TrialSelection):
    """Select candidate r with probability ∝ exp(ε·u(r)/(2Δu)); with ``monotone`` utilities,
    ∝ exp(ε·u(r)/Δu). (ε, 0)-DP (McSherry & Talwar 2007; Dwork & Roth 2014, Theorem 3.10).

    Args:
        epsilon: ε > 0.
        sensitivity: Δu, the utilities' sensitivity.
        monotone: True when between neighbours all utilities move in the same direction.

    Accuracy (Dwork & Roth, Theorem 3.11): Pr[u(selected) ≤ u* − (ln m + t)/f] ≤ e^(−t), f the
    exponent factor (``utility_gap``). It is ε-bounded-range, hence ε²/8-zCDP (Cesar & Rogers 2021).

    Release-grade sampling, exact, by rejection: propose a candidate r uniformly (exact uniform
    integers) and accept it with an exact Bernoulli(exp(−γ_r)) trial, γ_r = f·(u* − u_r) ≥ 0 (a rational);
    repeat until one is accepted. An accepted r has probability ∝ exp(−γ_r) ∝ exp(f·u_r), exactly;
    the expected number of proposals is m / Σ_r exp(−γ_r) ≤ m.

    >>> em = ExponentialMechanism(epsilon=1.0, sensitivity=1.0)
    >>> em.probabilities([0, 1, 2]).round(4).tolist()
    [0.1863, 0.3072, 0.5065]
    >>> em.release([0, 1, 2]) in (0, 1, 2)
    True
    """

    name: ClassVar[str] = "Exponential mechanism"

    @property
    def rho(self) -> float:
        """ε²/8: the exponential mechanism is ε-bounded-range (Cesar & Rogers 2021, "Bounding,
        Concentrating, and Truncating: Unifying Privacy Loss Composition for Data Analytics")."""
        return self.epsilon**2 / 8.0

    def probabilities(self, utilities: npt.ArrayLike) -> np.ndarray:
        """exp(f·u_r) / Σ_s exp(f·u_s), computed as a softmax of f·(u − u*)."""
        scores = float(self.factor) * float_utilities(utilities)
        return np.exp(scores - special.logsumexp(scores))

    def _select(self, gammas: list[Fraction], table: IndexedThresholds, out: np.ndarray) -> None:
        """Rejection from uniform proposals (class docstring).

        The pairs (uniform proposal r, Bernoulli(exp(−γ_r)) trial) are i.i.d., so the accepted proposals,
        taken in the order they were drawn, are i.i.d. draws of the target law: proposals are drawn in
        batches (sized from the acceptance rate Σ_r exp(−γ_r)/m, a float used for nothing else) and the
        first n accepted ones are kept, in order.
        """
        count, m = out.size, len(gammas)
        acceptance = float(np.exp(-np.array([float(g) for g in gammas])).sum()) / m  # ≥ 1/m: γ* = 0
        filled = 0
        while filled < count:
            batch = int(min(1.1 * (count - filled) / acceptance + 16, _MAX_BATCH))
            proposals = sampling.uniform_integers(m, batch)
            accepted = proposals[table.less(proposals, batch)][: count - filled]
            out[filled : filled + accepted.size] = accepted
            filled += accepted.size

    def _draw(self, utilities: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.choice(utilities.size, size=size, p=self.probabilities(utilities))

    def utility_gap(self, confidence: float = 0.95, candidates: int = 1) -> float:
        """(ln m + ln(1/(1 − confidence)))/f (Dwork & Roth, Theorem 3.11, with one optimal candidate)."""
        c = check.open_unit(confidence, "confidence")
        m = check.positive_int(candidates, "candidates")
        return (math.log(m) - math.log1p(-c)) / float(self.factor)


@dataclass(frozen=True, slots=True, kw_only=True)
class PermuteAndFlip(_TrialSelection):
    """Permute-and-flip (McKenna & Sheldon 2020): visit the candidates in a uniformly random order and
    return the first r for which a coin with Pr[heads] = p_r = exp(f·(u_r − u*)) lands heads;
    f = ε/(2Δu), or ε/Δu for ``monotone`` utilities. (ε, 0)-DP, and never worse in expected utility
    than the exponential mechanism (up to twice better).

    It is report-noisy-max with exponential noise, argmax_r (u_r + E_r) with E_r ~ Exp(1/f) (Ding,
    Kifer, Saghafi & Wang 2021), whose textbook privacy proof (Dwork & Roth, Claim 3.9) carries over
    and gives the monotone case.

    Exact selection probabilities: the coins are independent of the order, so candidate r wins when
    its coin is heads and it comes before every other heads; given r's uniform arrival time t, each
    other s is before r *and* heads with probability t·p_s, hence

        Pr[r] = p_r · ∫₀¹ Π_(s≠r) (1 − t·p_s) dt,

    the integral of a polynomial of degree m − 1, computed exactly (to rounding) by Gauss–Legendre
    quadrature with ⌈m/2⌉ + 1 nodes.

    Release-grade sampling, exact: flip every candidate's coin at once (exact Bernoulli(exp(−γ_r))
    trials, γ_r = f·(u* − u_r) rational; the best candidate's coin always lands heads), then return a
    uniformly random heads candidate (exact uniform integer) — the first heads in a uniform order is
    uniform among the heads, so this is permute-and-flip's law exactly.

    >>> pf = PermuteAndFlip(epsilon=1.0, sensitivity=1.0)
    >>> pf.probabilities([0, 1, 2]).round(4).tolist()
    [0.1468, 0.2661, 0.5872]
    """

    name: ClassVar[str] = "Permute-and-flip"

    def probabilities(self, utilities: npt.ArrayLike) -> np.ndarray:
        """p_r ∫₀¹ Π_(s≠r)(1 − t·p_s) dt for every r (class docstring), by Gauss–Legendre quadrature."""
        p = np.exp(float(self.factor) * float_utilities(utilities))
        m = p.size
        if m == 1:
            return np.ones(1)
        nodes, weights = special.roots_legendre(m // 2 + 1)
        t = (nodes + 1.0) / 2.0  # on [0, 1]
        w = weights / 2.0
        out = np.zeros(m)
        for start in range(0, t.size, 256):
            tc = t[start : start + 256, None]
            logs = np.log1p(-tc * p[None, :])  # (nodes, m); t < 1 so every term is finite
            total = logs.sum(axis=1, keepdims=True)
            out += (w[start : start + 256, None] * np.exp(total - logs)).sum(axis=0)
        return p * out

    def _select(self, gammas: list[Fraction], table: IndexedThresholds, out: np.ndarray) -> None:
        """Each row flips all m coins and returns a uniformly random heads candidate (class docstring).
        Rows are grouped by their number of heads c ≥ 1 (the best candidate's coin has γ = 0 and always
        lands heads); a group draws j ~ uniform{0, …, c − 1} exactly for each row and selects the row's
        (j + 1)-th heads candidate."""
        count, m = out.size, len(gammas)
        for start, stop in row_chunks(count, m):
            rows = stop - start
            keys = np.tile(np.arange(m), rows)
            heads = table.less(keys, rows * m).reshape(rows, m)
            seen = np.cumsum(heads, axis=1)  # heads among candidates 0 … r, per row
            rank = np.empty(rows, dtype=np.int64)
            for c in np.unique(seen[:, -1]):
                group = np.flatnonzero(seen[:, -1] == c)
                rank[group] = sampling.uniform_integers(int(c), group.size)
            # The (rank + 1)-th heads: the first candidate with rank + 1 heads up to and including it.
            out[start:stop] = np.argmax(seen > rank[:, None], axis=1)

    def _draw(self, utilities: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        # Report-noisy-max with Exp(1/f) noise: the same law (Ding et al. 2021), vectorised.
        noise = rng.exponential(1.0 / float(self.factor), (size, utilities.size))
        return np.argmax(utilities[None, :] + noise, axis=1)

    def utility_gap(self, confidence: float = 0.95, candidates: int = 1) -> float:
        """−b·ln(1 − confidence^(1/m)), b = 1/f: the winner w has u_w + E_w ≥ u* + E* ≥ u*, so
        u_w ≥ u* − max_r E_r, and Pr[max_r E_r ≤ a] = (1 − e^(−a/b))^m."""
        c = check.open_unit(confidence, "confidence")
        m = check.positive_int(candidates, "candidates")
        return -math.log(-math.expm1(math.log(c) / m)) / float(self.factor)
