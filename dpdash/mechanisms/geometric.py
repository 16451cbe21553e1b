"""The geometric mechanism = discrete Laplace noise, for integer queries (Ghosh, Roughgarden &
Sundararajan 2009)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from dpdash import sampling
from dpdash.accuracy import integer_half_width
from dpdash.mechanisms.base import IntegerNoiseMechanism
from dpdash.mechanisms.families import LaplaceFamily

__all__ = ["DiscreteLaplaceNoise", "Geometric"]


class DiscreteLaplaceNoise:
    """Discrete Laplace noise Pr[z] = ((1 − r)/(1 + r))·r^|z|, r = e^(−1/scale), with an exact rational
    scale; Pr[|Z| > m] = 2r^(m+1)/(1 + r). Draws come from ``dpdash.sampling.discrete_laplace``."""

    __slots__ = ("_log_r", "scale")

    def __init__(self, scale: Fraction) -> None:
        self.scale = Fraction(scale)
        self._log_r = -1.0 / float(self.scale)

    def __repr__(self) -> str:
        return f"DiscreteLaplaceNoise(scale={float(self.scale)!r})"

    def log_abs_tail(self, m: int) -> float:
        """ln Pr[|Z| > m] = ln 2 + (m + 1)·ln r − ln(1 + r), for an integer m ≥ 0."""
        return math.log(2.0) + (m + 1) * self._log_r - math.log1p(math.exp(self._log_r))

    def half_width(self, tail: float) -> int:
        """The smallest integer a ≥ 0 with Pr[|Z| > a] ≤ tail."""
        # Continuous solution of 2r^(m+1)/(1+r) = t, then an exact integer check around it.
        guess = (math.log(tail) - self.log_abs_tail(0)) / self._log_r
        return integer_half_width(self.log_abs_tail, tail, guess)

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        return sampling.discrete_laplace(self.scale, shape)


@dataclass(frozen=True, slots=True, kw_only=True)
class Geometric(LaplaceFamily, IntegerNoiseMechanism):
    """Add two-sided geometric (discrete Laplace) noise to an integer query: (ε, 0)-DP.

    Pr[Z = z] = ((1 − r)/(1 + r))·r^|z| with r = e^(−ε/Δ₁) (MATH.md writes α = 1/r), for integer Δ₁.

    Args:
        epsilon: ε > 0.
        sensitivity: Δ₁, the integer ℓ1 sensitivity of the integer-valued query.

    ``scale`` is b = Δ₁/ε (so r = e^(−1/b)); Var = 2r/(1 − r)²; Pr[|Z| > m] = 2r^(m+1)/(1 + r).

    >>> m = Geometric(epsilon=1.0, sensitivity=1)
    >>> m.accuracy(0.95), round(m.variance, 4)
    (3, 1.8413)
    """

    name: ClassVar[str] = "Geometric"

    sensitivity: int

    @property
    def _log_r(self) -> float:
        return -self.epsilon / self.sensitivity

    @property
    def noise(self) -> Any:
        """scipy.stats.dlaplace(a=ε/Δ₁), whose pmf tanh(a/2)·e^(−a|z|) is the same law."""
        return stats.dlaplace(-self._log_r)

    @property
    def variance(self) -> float:
        """2r/(1 − r)², with 1 − r = −expm1(−ε/Δ₁) for precision at small ε."""
        r = math.exp(self._log_r)
        return 2.0 * r / math.expm1(self._log_r) ** 2

    @property
    def _integer_noise(self) -> DiscreteLaplaceNoise:
        """Discrete Laplace noise of scale Δ₁/ε (the float ε taken as the exact binary rational it holds):
        exactly the law of ``noise``, with Pr[|Z| > m] = 2r^(m+1)/(1 + r)."""
        return DiscreteLaplaceNoise(Fraction(self.sensitivity) / Fraction(self.epsilon))

    def _profile(self, eps: np.ndarray) -> np.ndarray:
        # Shift Δ: outputs z ≤ 0 have loss ε and mass 1/(1 + r) under P, contributing
        # (1 − e^(ε′ − ε))/(1 + r); outputs 0 < z < Δ contribute c·(r^z − e^ε′·r^(Δ − z))⁺ with
        # c = (1 − r)/(1 + r), positive exactly for z < Z* = Δ(1 − ε′/ε)/2; outputs z ≥ Δ have negative
        # loss and contribute nothing. Summing the two geometric series over 1 ≤ z ≤ Z = ⌈Z*⌉ − 1 (and
        # ≤ Δ − 1): c·Σ r^z − c·e^ε′·Σ r^(Δ−z) = (1 − r^Z)·(r − e^ε′·r^(Δ−Z))/(1 + r), in O(1) for any Δ.
        log_r = self._log_r
        r = math.exp(log_r)
        below = np.where(eps < self.epsilon, -np.expm1(eps - self.epsilon), 0.0) / (1.0 + r)
        if self.sensitivity == 1:
            return below
        delta = float(self.sensitivity)
        count = np.clip(np.ceil(delta * (1.0 - eps / self.epsilon) / 2.0) - 1.0, 0.0, delta - 1.0)
        middle = -np.expm1(count * log_r) * (r - np.exp(eps + (delta - count) * log_r)) / (1.0 + r)
        return below + np.clip(middle, 0.0, None)

    def _draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        # The difference of two i.i.d. geometric variables with success probability 1 − r is
        # discrete Laplace with parameter r.
        p = -math.expm1(self._log_r)
        return rng.geometric(p, size).astype(np.int64) - rng.geometric(p, size).astype(np.int64)
