"""Privacy events: what one release did, as data.

One event per release. An event records the mechanism family and the parameters that determine its
privacy loss (a noise scale and a sensitivity), the guarantee it was released under (ε, δ, and ρ where one
is defined), the query's label, and optionally the part of the data it touched (``partition``). It says
nothing about how releases add up: that is the accountants' job (``dpdash.accounting.accountant``), and each
event's docstring states the exact mathematics an accountant needs, in the spirit of dp_accounting's
``dp_event.py``. This module holds the events of noise mechanisms and the registry of every event type;
``event_base`` the base class, ``guarantee_events`` the events that state a guarantee, ``event_factory``
how events are made from mechanisms, releases and JSON.

Conventions shared by every event:

- Neighbouring datasets differ by adding or removing one record (MATH.md's default); sensitivities are the
  user's, stated for that relation.
- ``partition = (by, part)`` says the release only read the records whose attribute ``by`` has the value
  ``part``. Two events with the same ``by`` and different ``part`` touched disjoint records, so they compose
  in parallel (the larger cost counts, McSherry 2009); events with different ``by`` (or none) may overlap and
  compose sequentially. This holds for add/remove neighbours, where one record lies in exactly one part.
- ``query`` and ``partition`` are labels: two events that differ only in them have the same ``setting``
  and the same privacy loss.

>>> from dpdash import Laplace
>>> from dpdash.accounting.event_factory import event_for, event_from_dict
>>> event = event_for(Laplace(epsilon=0.5, sensitivity=1.0), query="count of patients")
>>> event.epsilon, event.delta, event.rho, event.scale
(0.5, 0.0, 0.125, 2.0)
>>> event_from_dict(event.to_dict()) == event
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dpdash import _validation as check
from dpdash.accounting.event_base import (
    _PROFILE_SLACK,
    PrivacyEvent,
    _integer_sensitivity,
    _PureEvent,
    _smallest_epsilon,
    canonical_json,
)
from dpdash.accounting.guarantee_events import ApproxDPEvent, NonPrivateEvent, PureDPEvent, ZCDPEvent
from dpdash.errors import ParameterError
from dpdash.mechanisms import (
    discrete_gaussian_delta,
    gaussian_delta,
)

__all__ = [
    "ApproxDPEvent",
    "DiscreteGaussianEvent",
    "GaussianEvent",
    "GeometricEvent",
    "LaplaceEvent",
    "NonPrivateEvent",
    "PrivacyEvent",
    "PureDPEvent",
    "ZCDPEvent",
    "canonical_json",
]


def _real_sensitivity(value: object) -> float:
    return check.positive_finite(value, "sensitivity")


@dataclass(frozen=True, slots=True, kw_only=True)
class _ScaledNoiseEvent(_PureEvent):
    """An event of (discrete) Laplace-type noise on a query with ℓ1 sensitivity Δ₁ (subclasses have the
    fields ``epsilon``, ``sensitivity`` and ``scale``): b = Δ₁/ε, (ε, 0)-DP."""

    _check_sensitivity: ClassVar[Callable[[object], float]] = staticmethod(_real_sensitivity)

    def __post_init__(self) -> None:
        self._check_labels()
        object.__setattr__(self, "epsilon", check.positive_finite(self.epsilon, "epsilon"))
        object.__setattr__(self, "sensitivity", self._check_sensitivity(self.sensitivity))
        object.__setattr__(self, "scale", self.sensitivity / self.epsilon)


@dataclass(frozen=True, slots=True, kw_only=True)
class _StatedGaussianEvent(PrivacyEvent):
    """An event of (discrete) Gaussian noise N(0, σ²) on a query with sensitivity Δ, stated at a point
    (ε, δ) of its exact privacy profile ``_profile(ε, σ, Δ)`` (subclasses have the fields ``sigma``,
    ``sensitivity``, ``epsilon`` and ``delta``): construction checks δ(ε) ≤ δ. ρ = Δ²/(2σ²)."""

    _check_sensitivity: ClassVar[Callable[[object], float]] = staticmethod(_real_sensitivity)
    _profile: ClassVar[Callable[[float, float, float], Any]] = staticmethod(gaussian_delta)
    _kind: ClassVar[str] = "Gaussian"  # for messages: "a Gaussian release ..."

    def __post_init__(self) -> None:
        self._check_labels()
        object.__setattr__(self, "sigma", check.positive_finite(self.sigma, "sigma"))
        object.__setattr__(self, "sensitivity", self._check_sensitivity(self.sensitivity))
        object.__setattr__(self, "epsilon", check.positive_finite(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta", check.open_unit(self.delta, "delta"))
        exact = float(self._profile(self.epsilon, self.sigma, self.sensitivity))
        if exact > self.delta * (1.0 + _PROFILE_SLACK):
            raise ParameterError(
                f"a {self._kind} release with sigma={self.sigma!r} and sensitivity={self.sensitivity!r} "
                f"is not ({self.epsilon!r}, {self.delta!r})-DP: its exact δ at ε={self.epsilon!r} is "
                f"{exact:.6g}"
            )

    @property
    def rho(self) -> float:
        return self.sensitivity**2 / (2.0 * self.sigma**2)

    def to_dict(self) -> dict[str, Any]:
        out = PrivacyEvent.to_dict(self)
        out["rho"] = self.rho
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class LaplaceEvent(_ScaledNoiseEvent):
    """A release of f(x) + Z with Z ~ Lap(b)^d i.i.d., b = Δ₁/ε, for a query with ℓ1 sensitivity Δ₁.

    Mathematics (what an accountant may use):
        The worst-case pair of output distributions is Lap(0, b) against Lap(Δ₁, b) in one coordinate
        (dp_accounting's ``LaplaceDpEvent`` with noise multiplier b/Δ₁ = 1/ε). Its privacy loss
        L(z) = (|z − Δ₁| − |z|)/b lies in [−ε, ε], so the release is (ε, 0)-DP, with exact privacy profile
        δ(ε′) = 1 − e^((ε′ − ε)/2) for ε′ < ε and 0 otherwise; it is (ε²/2)-zCDP (Bun & Steinke 2016,
        Prop. 1.4); its Rényi divergence of order α is dp_accounting's ``_laplace_rdp(ε, α)``
        (Mironov 2017, Prop. 6).

    Args:
        epsilon: ε = Δ₁/b > 0.
        sensitivity: Δ₁ > 0.

    ``scale`` is b = Δ₁/ε. ``LaplaceEvent.from_scale(scale=b, sensitivity=Δ₁)`` builds one from b.
    """

    family: ClassVar[str] = "laplace"

    epsilon: float
    sensitivity: float
    scale: float = field(init=False)

    @classmethod
    def from_scale(
        cls, *, scale: float, sensitivity: float, query: str = "", partition: tuple[str, str] | None = None
    ) -> LaplaceEvent:
        """The event of Lap(b) noise on a query with ℓ1 sensitivity Δ₁: ε = Δ₁/b."""
        b = check.positive_finite(scale, "scale")
        d = check.positive_finite(sensitivity, "sensitivity")
        return cls(epsilon=d / b, sensitivity=d, query=query, partition=partition)

    @property
    def mechanism(self) -> str:
        return "Laplace"

    def describe(self) -> str:
        return f"Laplace, ε = {self.epsilon:.4g} (Δ₁ = {self.sensitivity:g}, b = {self.scale:.4g})"


@dataclass(frozen=True, slots=True, kw_only=True)
class GeometricEvent(_ScaledNoiseEvent):
    """A release of f(x) + Z for an integer query, Z two-sided geometric (discrete Laplace):
    Pr[Z = z] = tanh(a/2)·e^(−a|z|) with a = ε/Δ₁ = 1/b, for an integer ℓ1 sensitivity Δ₁.

    Mathematics:
        The worst-case pair is Z against Z + Δ₁ (dp_accounting's ``DiscreteLaplaceDpEvent`` with
        noise parameter a and sensitivity Δ₁). The privacy loss lies in [−ε, ε], so the release is
        (ε, 0)-DP and (ε²/2)-zCDP. Its Rényi divergence of order α has the closed form
        D_α = ln(tanh(a/2)·[e^(a(α−1)Δ) + e^(−aαΔ)]/(1 − e^(−a)) + tanh(a/2)·Σ_{k=1}^{Δ−1}
        e^(−a((2α−1)k + (1−α)Δ))) / (α − 1), summing P^α Q^(1−α) over z ≤ 0, z ≥ Δ and 0 < z < Δ.

    Args:
        epsilon: ε > 0.
        sensitivity: Δ₁, an integer ≥ 1.

    ``scale`` is b = Δ₁/ε; ``noise_parameter`` is a = 1/b.
    """

    family: ClassVar[str] = "geometric"
    _check_sensitivity: ClassVar[Callable[[object], int]] = staticmethod(_integer_sensitivity)

    epsilon: float
    sensitivity: int
    scale: float = field(init=False)

    @property
    def noise_parameter(self) -> float:
        """a = ε/Δ₁, the discrete Laplace parameter of Pr[Z = z] ∝ e^(−a|z|)."""
        return self.epsilon / self.sensitivity

    @property
    def mechanism(self) -> str:
        return "Geometric"

    def describe(self) -> str:
        return f"Geometric, ε = {self.epsilon:.4g} (Δ₁ = {self.sensitivity})"


@dataclass(frozen=True, slots=True, kw_only=True)
class GaussianEvent(_StatedGaussianEvent):
    """A release of f(x) + Z with Z ~ N(0, σ²I), for a query with ℓ2 sensitivity Δ₂, stated as (ε, δ)-DP.

    Mathematics:
        The worst-case pair is N(0, σ²) against N(Δ₂, σ²) (dp_accounting's ``GaussianDpEvent`` with noise
        multiplier σ/Δ₂). The privacy loss is normal, L ~ N(μ, 2μ) with μ = Δ₂²/(2σ²) = ρ, so the release is
        exactly ρ-zCDP with ρ = Δ₂²/(2σ²) (Rényi divergence αρ at every order α; Bun & Steinke 2016), and
        its exact privacy profile is δ(ε′) = Φ(Δ₂/(2σ) − ε′σ/Δ₂) − e^ε′·Φ(−Δ₂/(2σ) − ε′σ/Δ₂) (Balle & Wang
        2018, Thm 8). ``epsilon`` and ``delta`` are the point of that profile the release was stated at
        (its calibration target); construction checks δ(ε) ≤ δ, so the stated guarantee is true.

    Args:
        sigma: σ > 0, the noise's standard deviation.
        sensitivity: Δ₂ > 0.
        epsilon: ε > 0 of the stated guarantee.
        delta: δ in (0, 1) of the stated guarantee.

    ``GaussianEvent.from_sigma(sigma=, sensitivity=, delta=)`` states the smallest ε at that δ.
    """

    family: ClassVar[str] = "gaussian"

    sigma: float
    sensitivity: float
    epsilon: float
    delta: float

    @classmethod
    def from_sigma(
        cls,
        *,
        sigma: float,
        sensitivity: float,
        delta: float,
        query: str = "",
        partition: tuple[str, str] | None = None,
    ) -> GaussianEvent:
        """The event of N(0, σ²) noise, stated at the smallest ε with exact δ(ε) ≤ δ."""
        sigma = check.positive_finite(sigma, "sigma")
        sensitivity = check.positive_finite(sensitivity, "sensitivity")
        delta = check.open_unit(delta, "delta")
        epsilon = _smallest_epsilon(lambda e: float(gaussian_delta(e, sigma, sensitivity)), delta)
        return cls(
            sigma=sigma,
            sensitivity=sensitivity,
            epsilon=epsilon,
            delta=delta,
            query=query,
            partition=partition,
        )

    @property
    def noise_multiplier(self) -> float:
        """σ/Δ₂, dp_accounting's parametrisation."""
        return self.sigma / self.sensitivity

    @property
    def mechanism(self) -> str:
        return "Gaussian"

    def describe(self) -> str:
        return (
            f"Gaussian, ε = {self.epsilon:.4g}, δ = {self.delta:.3g} (Δ₂ = {self.sensitivity:g}, "
            f"σ = {self.sigma:.4g})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscreteGaussianEvent(_StatedGaussianEvent):
    """A release of f(x) + Z for an integer query, Z discrete Gaussian: Pr[Z = z] ∝ e^(−z²/(2σ²)) on the
    integers, for an integer sensitivity Δ (neighbours change one coordinate by at most Δ), stated as
    (ε, δ)-DP.

    Mathematics (Canonne, Kamath & Steinke 2020, "CKS"):
        The worst-case pair is Z against Z + Δ. The release is ρ-zCDP with ρ = Δ²/(2σ²) (CKS Thm 4: Rényi
        divergence ≤ αρ at every order α), and its exact privacy profile is
        δ(ε′) = Pr[Z > ε′σ²/Δ − Δ/2] − e^ε′·Pr[Z > ε′σ²/Δ + Δ/2] (CKS Thm 7); its privacy-loss
        distribution is dp_accounting's ``from_discrete_gaussian_mechanism(σ, Δ)``. ``epsilon`` and
        ``delta`` are the stated point of that profile; construction checks δ(ε) ≤ δ.

    Args:
        sigma: σ > 0 (the discrete Gaussian's parameter, not quite its standard deviation).
        sensitivity: Δ, an integer ≥ 1.
        epsilon: ε > 0 of the stated guarantee.
        delta: δ in (0, 1) of the stated guarantee.
    """

    family: ClassVar[str] = "discrete_gaussian"
    _check_sensitivity: ClassVar[Callable[[object], int]] = staticmethod(_integer_sensitivity)
    _profile: ClassVar[Callable[[float, float, int], Any]] = staticmethod(discrete_gaussian_delta)
    _kind: ClassVar[str] = "discrete Gaussian"

    sigma: float
    sensitivity: int
    epsilon: float
    delta: float

    @property
    def mechanism(self) -> str:
        return "Discrete Gaussian"

    def describe(self) -> str:
        return (
            f"Discrete Gaussian, ε = {self.epsilon:.4g}, δ = {self.delta:.3g} (Δ = {self.sensitivity}, "
            f"σ = {self.sigma:.4g})"
        )


EVENT_TYPES: dict[str, type[PrivacyEvent]] = {
    cls.family: cls
    for cls in (
        LaplaceEvent,
        GeometricEvent,
        GaussianEvent,
        DiscreteGaussianEvent,
        PureDPEvent,
        ApproxDPEvent,
        ZCDPEvent,
        NonPrivateEvent,
    )
}


