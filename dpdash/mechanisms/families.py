"""What each pair of twin mechanisms shares: the continuous one and its discrete counterpart for integer
queries take the same parameters and derive their noise scale the same way.

- ``LaplaceFamily`` (Laplace, geometric): (ε, 0)-DP for ℓ1 sensitivity Δ₁ with scale b = Δ₁/ε.
- ``GaussianFamily`` (Gaussian, discrete Gaussian): (ε, δ)-DP with σ calibrated to (ε, δ, Δ), and
  ρ = Δ²/(2σ²)-zCDP.

Each validates its parameters once, in ``__post_init__`` (Δ an integer for the discrete twin).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field
from typing import ClassVar

from dpdash import _validation as check
from dpdash.mechanisms.base import NoiseMechanism

__all__ = ["GaussianFamily", "LaplaceFamily"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LaplaceFamily(NoiseMechanism):
    """Noise of scale b = Δ₁/ε, ε-DP for ℓ1 sensitivity Δ₁ (Dwork & Roth 2014, §3.3; its discrete twin,
    Ghosh, Roughgarden & Sundararajan 2009)."""

    sensitivity_norm: ClassVar[str] = "l1"
    delta: ClassVar[float] = 0.0  # pure ε-DP

    epsilon: float
    sensitivity: float
    scale: float = field(init=False)  # b = Δ₁/ε

    def __post_init__(self) -> None:
        self._set("epsilon", check.epsilon(self.epsilon))
        self._check_sensitivity()
        self._set("scale", self.sensitivity / self.epsilon)


@dataclass(frozen=True, slots=True, kw_only=True)
class GaussianFamily(NoiseMechanism):
    """Noise of scale σ calibrated to (ε, δ)-DP for sensitivity Δ (``_calibrate``); ρ = Δ²/(2σ²)-zCDP
    (Bun & Steinke 2016, Prop. 1.6; Canonne, Kamath & Steinke 2020, Theorem 4 for the discrete one).
    The subclass declares ``scale`` (σ) after its own fields."""

    epsilon: float
    delta: float
    sensitivity: float

    def __post_init__(self) -> None:
        self._set("epsilon", check.epsilon(self.epsilon))
        self._set("delta", check.open_unit(self.delta, "delta"))
        self._check_sensitivity()
        self._calibrate()

    @abstractmethod
    def _calibrate(self) -> None:
        """Set ``scale`` (σ) for the validated ε, δ and Δ, and whatever the mechanism derives from it."""

    @property
    def rho(self) -> float:
        """ρ = Δ²/(2σ²)-zCDP."""
        return self.sensitivity**2 / (2.0 * self.scale**2)
