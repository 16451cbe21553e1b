"""The Gaussian mechanism, classic (Dwork & Roth 2014, Thm A.1) and analytic (Balle & Wang 2018)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy import special, stats

from dpdash import _validation as check
from dpdash._search import bracket, smallest_true
from dpdash.accuracy import simultaneous_tail
from dpdash.conversions import zcdp_delta
from dpdash.errors import ParameterError
from dpdash.mechanisms.discrete_gaussian import DiscreteGaussian, DiscreteGaussianNoise
from dpdash.mechanisms.families import GaussianFamily
from dpdash.mechanisms.gaussian_calibration import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
)
from dpdash.mechanisms.grid import ReleasePlan, grid_for

__all__ = [
    "Gaussian",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "gaussian_delta",
]

CALIBRATIONS = ("analytic", "classic")


@dataclass(frozen=True, slots=True, kw_only=True)
class Gaussian(GaussianFamily):
    """Add N(0, σ²) noise calibrated to (ε, δ)-DP for ℓ2 sensitivity Δ₂.

    Args:
        epsilon: ε > 0.
        delta: δ in (0, 1).
        sensitivity: Δ₂, the ℓ2 sensitivity of the (possibly vector-valued) query.
        calibration: ``"analytic"`` (default): the smallest σ whose exact privacy profile gives
            δ(ε) ≤ δ (Balle & Wang 2018), valid for every ε > 0. ``"classic"``:
            σ = Δ₂√(2 ln(1.25/δ))/ε (Dwork & Roth, Theorem A.1), proven only for ε < 1 and refused
            otherwise; it always needs more noise than the analytic σ.

    zCDP: ρ = Δ₂²/(2σ²) (Bun & Steinke 2016).

    >>> g = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    >>> round(g.scale, 4), round(g.accuracy(0.95), 3)
    (3.7306, 7.312)
    """

    name: ClassVar[str] = "Gaussian"
    sensitivity_norm: ClassVar[str] = "l2"

    calibration: str = "analytic"
    scale: float = field(init=False)  # σ

    def _calibrate(self) -> None:
        self._set("calibration", check.one_of(self.calibration, "calibration", CALIBRATIONS))
        if self.calibration == "classic":
            sigma = classic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
        else:
            sigma = analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
        self._set("scale", sigma)

    @property
    def label(self) -> str:
        """Name with the calibration, e.g. "Gaussian (analytic)"."""
        return f"{self.name} ({self.calibration})"

    @property
    def noise(self) -> Any:
        """scipy.stats.norm(scale=σ)."""
        return stats.norm(scale=self.scale)

    @property
    def variance(self) -> float:
        """σ²."""
        return self.scale**2

    def tail(self, half_width: float) -> float:
        """Pr[|Z| > a] = 2Φ(−a/σ)."""
        a = check.non_negative_finite(half_width, "half_width")
        return float(2.0 * special.ndtr(-a / self.scale))

    def _half_width(self, tail: float) -> float:
        return float(self.scale * stats.norm.isf(tail / 2.0))

    def _profile(self, eps: np.ndarray) -> np.ndarray:
        return gaussian_delta(eps, self.scale, self.sensitivity)

    @classmethod
    def _closed_form_epsilon(
        cls, alpha: float, confidence: float, sensitivity: float, k: int, params: dict[str, Any]
    ) -> float | None:
        """Classic: ε = Δ₂√(2 ln(1.25/δ))·z/α with z = Φ⁻¹(1 − t/2), t = 1 − c^(1/k) (δ fixed in
        ``params``); refused when that ε is ≥ 1. Analytic: none (``for_accuracy`` bisects over ε)."""
        if params.get("calibration", "analytic") != "classic":
            return None
        delta2 = check.sensitivity(sensitivity)
        delta = check.open_unit(params.get("delta"), "delta")
        z = float(stats.norm.isf(simultaneous_tail(confidence, k) / 2.0))
        epsilon = delta2 * math.sqrt(2.0 * math.log(1.25 / delta)) * z / alpha
        if epsilon >= 1.0:
            raise ParameterError(
                f"accuracy alpha={alpha!r} needs epsilon={epsilon:.4g} under the classic Gaussian "
                "calibration, which is proven only for ε < 1; use calibration='analytic'"
            )
        return epsilon

    def _draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        return rng.normal(0.0, self.scale, size)

    def release_plan(self, k: int = 1) -> ReleasePlan:
        """Round the k answers to a grid g = 2^j and add exact discrete Gaussian noise in grid units.

        One answer: rounding to g moves neighbours' rounded answers apart by at most D = ⌊Δ₂/g⌋ + 1
        grid units, and σ is calibrated so that the exact δ(ε) of the discrete Gaussian for integer
        sensitivity D (Canonne, Kamath & Steinke 2020, Theorem 7) is ≤ δ; g·σ exceeds the analytic σ by
        about 1/GRID_FINENESS.

        k answers: the rounded vectors differ by at most D₂ = Δ₂/g + √k in ℓ2. k independent discrete
        Gaussians with parameter σ are D₂²/(2σ²)-zCDP (their Rényi divergences are at most the
        continuous Gaussian's, CKS Proposition 5, and add up over coordinates); σ is the smallest whose
        ρ converts to (ε, δ) by CKS Corollary 13. That is a proven bound, not the exact profile, so
        this σ exceeds the analytic one (by ~8% at k = 100); ``release_accuracy`` reports what is used.
        """
        k = check.positive_int(k, "k")
        if k == 1:
            grid = grid_for(self.sensitivity, 1)
            units_sensitivity = math.floor(self.sensitivity / grid.step) + 1
            integer = DiscreteGaussian(epsilon=self.epsilon, delta=self.delta, sensitivity=units_sensitivity)
            return ReleasePlan(grid, integer.noise)
        grid = grid_for(self.sensitivity, math.sqrt(k))
        l2_units = self.sensitivity / grid.step + math.sqrt(k)

        def private_enough(sigma: float) -> bool:
            return zcdp_delta(l2_units**2 / (2.0 * sigma**2), self.epsilon) <= self.delta

        guess = self.scale / grid.step
        lo, hi = bracket(private_enough, guess, lower=1e-300, upper=1e300, what="noise scale sigma")
        return ReleasePlan(grid, DiscreteGaussianNoise(smallest_true(private_enough, lo, hi)))
