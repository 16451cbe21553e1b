"""The Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006; Dwork & Roth 2014, §3.3)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from scipy import stats

from dpdash import _validation as check
from dpdash.accuracy import simultaneous_tail
from dpdash.mechanisms.families import LaplaceFamily
from dpdash.mechanisms.geometric import DiscreteLaplaceNoise
from dpdash.mechanisms.grid import ReleasePlan, grid_for

__all__ = ["Laplace"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Laplace(LaplaceFamily):
    """Add Lap(b) noise, density e^(−|z|/b)/(2b), with b = Δ₁/ε: (ε, 0)-DP.

    Args:
        epsilon: ε > 0.
        sensitivity: Δ₁, the ℓ1 sensitivity of the (possibly vector-valued) query.

    Var = 2b²; Pr[|Z| > t] = e^(−t/b), so one answer is within b·ln(1/β) with probability 1 − β.

    >>> m = Laplace(epsilon=1.0, sensitivity=1.0)
    >>> m.scale, round(m.accuracy(0.95), 4), round(m.accuracy_union_bound(0.95, k=10_000), 2)
    (1.0, 2.9957, 12.21)
    """

    name: ClassVar[str] = "Laplace"

    @property
    def noise(self) -> Any:
        """scipy.stats.laplace(scale=b)."""
        return stats.laplace(scale=self.scale)

    @property
    def variance(self) -> float:
        """2b²."""
        return 2.0 * self.scale**2

    def tail(self, half_width: float) -> float:
        """Pr[|Z| > a] = e^(−a/b)."""
        a = check.non_negative_finite(half_width, "half_width")
        return math.exp(-a / self.scale)

    def _half_width(self, tail: float) -> float:
        return -self.scale * math.log(tail)

    def _profile(self, eps: np.ndarray) -> np.ndarray:
        # Shift Δ against the loss L(z) = (|z − Δ| − |z|)/b, which runs linearly from ε to −ε:
        # δ(ε′) = 1 − e^((ε′ − ε)/2) for ε′ < ε, else 0 (Balle, Barthe & Gaboardi 2018, §3).
        return np.where(eps < self.epsilon, -np.expm1((eps - self.epsilon) / 2.0), 0.0)

    @classmethod
    def _closed_form_epsilon(
        cls, alpha: float, confidence: float, sensitivity: float, k: int, params: dict[str, Any]
    ) -> float:
        """ε = Δ₁·ln(1/t)/α with t = 1 − c^(1/k) (the exact simultaneous tail)."""
        delta1 = check.sensitivity(sensitivity)
        return delta1 * -math.log(simultaneous_tail(confidence, k)) / alpha

    def _draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        return rng.laplace(0.0, self.scale, size)

    def release_plan(self, k: int = 1) -> ReleasePlan:
        """Round the k answers to a grid g = 2^j and add exact discrete Laplace noise in grid units.

        Rounding moves each answer by ≤ g/2, so neighbours' rounded answers differ, in grid units and
        in ℓ1, by at most D = ⌊Δ₁/g⌋ + k. Discrete Laplace noise of scale D/ε is ε-DP for integer ℓ1
        sensitivity D, so the release keeps the stated ε; its scale g·D/ε exceeds b = Δ₁/ε by at most
        2/GRID_FINENESS of b (g ≤ Δ₁/(k·4096)).
        """
        k = check.positive_int(k, "k")
        grid = grid_for(self.sensitivity, k)
        units_sensitivity = math.floor(self.sensitivity / grid.step) + k
        return ReleasePlan(grid, DiscreteLaplaceNoise(Fraction(units_sensitivity) / Fraction(self.epsilon)))
