"""The vector mechanism: i.i.d. noise on each coordinate of a d-dimensional answer (model coefficients,
a mean vector), scaled to the ℓ1 (Laplace) or ℓ2 (Gaussian) sensitivity of the whole vector."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from scipy import stats

from dpdash import _validation as check
from dpdash._forward import Forwarded
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.mechanisms.gaussian import Gaussian
from dpdash.mechanisms.laplace import Laplace

__all__ = ["VectorMechanism"]


@dataclass(frozen=True, slots=True, kw_only=True)
class VectorMechanism:
    """Add independent noise of one ``Laplace`` or ``Gaussian`` mechanism to each of d coordinates.

    The base mechanism's sensitivity is that of the whole vector: Δ₁ = max ‖f(x) − f(x′)‖₁ for
    Laplace noise Lap(Δ₁/ε) per coordinate ((ε, 0)-DP; Dwork & Roth 2014, Theorem 3.6), Δ₂ = max
    ‖f(x) − f(x′)‖₂ for Gaussian noise (the analytic calibration is exact in any dimension because
    the privacy loss of N(0, σ²I) only sees the shift's ℓ2 norm; Balle & Wang 2018, Theorem 8).

    Accuracy in the norm that suits the noise, exactly:

    - ℓ∞: ``accuracy(confidence)``, the base mechanism's simultaneous half-width over d coordinates;
    - ℓ1 error of Laplace noise: a sum of d Exp(b) variables, Gamma(d, b);
    - ℓ2 error of Gaussian noise: σ·χ_d.

    ``release`` is the base mechanism's exact release on its grid (``release_accuracy`` for it).

    >>> v = VectorMechanism.laplace(epsilon=1.0, l1_sensitivity=2.0, dimension=3)
    >>> v.scale, round(v.norm_accuracy(0.95), 4)
    (2.0, 12.5916)
    >>> g = VectorMechanism.gaussian(epsilon=1.0, delta=1e-5, l2_sensitivity=1.0, dimension=10)
    >>> g.norm, round(g.expected_squared_error, 2)
    ('l2', 139.18)
    """

    name: ClassVar[str] = "Vector mechanism"

    base: Laplace | Gaussian
    dimension: int

    def __post_init__(self) -> None:
        if not isinstance(self.base, Laplace | Gaussian):
            raise ParameterTypeError(f"base must be a Laplace or Gaussian mechanism, got base={self.base!r}")
        object.__setattr__(self, "dimension", check.positive_int(self.dimension, "dimension"))

    @classmethod
    def laplace(cls, *, epsilon: float, l1_sensitivity: float, dimension: int) -> VectorMechanism:
        """Lap(Δ₁/ε) on each coordinate."""
        return cls(base=Laplace(epsilon=epsilon, sensitivity=l1_sensitivity), dimension=dimension)

    @classmethod
    def gaussian(
        cls,
        *,
        epsilon: float,
        delta: float,
        l2_sensitivity: float,
        dimension: int,
        calibration: str = "analytic",
    ) -> VectorMechanism:
        """N(0, σ²) on each coordinate, σ calibrated to (ε, δ) for ℓ2 sensitivity Δ₂."""
        base = Gaussian(epsilon=epsilon, delta=delta, sensitivity=l2_sensitivity, calibration=calibration)
        return cls(base=base, dimension=dimension)

    # The base mechanism's parameters, read through (``norm`` is its sensitivity norm).
    epsilon = Forwarded[float]("base.epsilon")
    delta = Forwarded[float]("base.delta")
    rho = Forwarded[float]("base.rho")
    norm = Forwarded[str]("base.sensitivity_norm", '``"l1"`` for Laplace noise, ``"l2"`` for Gaussian noise.')
    sensitivity = Forwarded[float]("base.sensitivity")
    scale = Forwarded[float]("base.scale", "b (Laplace) or σ (Gaussian) of each coordinate.")

    @property
    def expected_squared_error(self) -> float:
        """E‖noise‖₂² = d·Var (2b²·d or σ²·d)."""
        return self.dimension * self.base.variance

    def accuracy(self, confidence: float = 0.95) -> float:
        """The smallest a with Pr[max_i |noise_i| ≤ a] ≥ confidence (exact)."""
        return self.base.accuracy(confidence, self.dimension)

    def norm_accuracy(self, confidence: float = 0.95) -> float:
        """The smallest a with Pr[‖noise‖ ≤ a] ≥ confidence in the mechanism's norm (exact):
        ℓ1: Gamma(d, b).ppf for Laplace noise; ℓ2: σ·√(χ²_d.ppf) for Gaussian noise."""
        c = check.open_unit(confidence, "confidence")
        if self.norm == "l1":
            return float(stats.gamma.ppf(c, self.dimension, scale=self.scale))
        return float(self.scale * math.sqrt(stats.chi2.ppf(c, self.dimension)))

    def _vector(self, values: npt.ArrayLike) -> np.ndarray:
        array = check.numeric_array(values, "values")
        if array.size != self.dimension:
            raise ParameterError(
                f"values must hold {self.dimension} coordinates (the mechanism's dimension), got {array.size}"
            )
        return array

    def simulate(
        self, true_value: npt.ArrayLike, size: int, rng: np.random.Generator | int | None = None
    ) -> np.ndarray:
        """``size`` possible noisy vectors, for previews only."""
        return self.base.simulate(self._vector(true_value), size, rng)

    def release(self, values: npt.ArrayLike) -> np.ndarray:
        """The noisy vector that may be published (the base mechanism's exact release for d answers)."""
        return self.base.release(self._vector(values))

    def release_trials(self, values: npt.ArrayLike, n: int) -> np.ndarray:
        """n independent outputs of ``release(values)``: the base mechanism's ``release_trials`` for the
        d answers (its plan for d answers), shape (n, *shape(values)). For an empirical privacy audit."""
        return self.base.release_trials(self._vector(values), n)

    def release_accuracy(self, confidence: float = 0.95) -> float:
        """ℓ∞ half-width of what ``release`` adds (see ``NoiseMechanism.release_accuracy``)."""
        return self.base.release_accuracy(confidence, self.dimension)
