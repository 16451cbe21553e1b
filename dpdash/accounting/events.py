"""Privacy events: what one release did, as data.

One event per release. An event records the mechanism family and the parameters that determine its
privacy loss (a noise scale and a sensitivity), the guarantee it was released under (ε, δ, and ρ where one
is defined), the query's label, and optionally the part of the data it touched (``partition``). It says
nothing about how releases add up: that is the accountants' job (``dpdash.accounting.accountant``), and each
event's docstring states the exact mathematics an accountant needs, in the spirit of dp_accounting's
``dp_event.py``.

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
>>> event = event_for(Laplace(epsilon=0.5, sensitivity=1.0), query="count of patients")
>>> event.epsilon, event.delta, event.rho, event.scale
(0.5, 0.0, 0.125, 2.0)
>>> event_from_dict(event.to_dict()) == event
True
"""

from __future__ import annotations

import json
import math
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.mechanisms import (
    DiscreteGaussian,
    Gaussian,
    Geometric,
    Laplace,
    Staircase,
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
    "event_for",
    "event_from_dict",
    "events_for_release",
]

# A stated (ε, δ) of a Gaussian-type event is accepted when the exact δ(ε) is within this relative slack of
# δ: calibration is exact to the last bit, so only floating-point noise in re-evaluating δ(ε) is forgiven.
_PROFILE_SLACK = 1e-9
# Derived fields read back from JSON (a Laplace scale, ρ) must match the recomputed value this closely.
_DERIVED_RTOL = 1e-12


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the same value always gives the same text (and digest)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def _label(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise ParameterTypeError(f"{name} must be a string, got {name}={value!r} ({type(value).__name__})")
    return value


def _partition(value: object) -> tuple[str, str] | None:
    if value is None:
        return None
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, str) for v in value):
        by, part = value
        if by and part:
            return (by, part)
    raise ParameterError(
        "partition must be None or a pair of non-empty strings (by, part), e.g. ('region', 'North'), "
        f"got partition={value!r}"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class PrivacyEvent:
    """Base class of the events: one release, its privacy-relevant parameters and its labels.

    Attributes:
        query: what was released, for people (e.g. "count of patients by ward").
        partition: ``None`` if the release read the whole dataset, else ``(by, part)``: it read only the
            records whose attribute ``by`` equals ``part`` (see the module docstring).

    Subclasses define ``family`` (the key in JSON), ``epsilon``, ``delta`` and ``rho`` (``None`` where the
    event has no such guarantee) and ``mechanism`` (a name for people).
    """

    family: ClassVar[str] = ""

    query: str = ""
    partition: tuple[str, str] | None = None

    def _check_labels(self) -> None:
        object.__setattr__(self, "query", _label(self.query, "query"))
        object.__setattr__(self, "partition", _partition(self.partition))

    # Each subclass defines these as fields or properties. They are not defined here: a dataclass would
    # take a base-class property for the default value of a subclass field of the same name.
    if TYPE_CHECKING:

        @property
        def epsilon(self) -> float | None:
            """ε of the (ε, δ)-DP guarantee the release was made under; ``None`` if it has none."""

        @property
        def delta(self) -> float | None:
            """δ of that guarantee (0 for pure DP); ``None`` if the event has no (ε, δ) guarantee."""

        @property
        def rho(self) -> float | None:
            """ρ of a ρ-zCDP guarantee (Bun & Steinke 2016); ``None`` if the event implies none."""

        @property
        def mechanism(self) -> str:
            """The mechanism's name, for people."""

    @property
    def setting(self) -> PrivacyEvent:
        """This event without its labels (query, partition, a free-text mechanism name): events with equal
        settings have the same privacy loss, so an accountant composes them by count."""
        names, labels = _SETTING_LAYOUT[type(self)]
        if all(getattr(self, name) == value for name, value in labels.items()):
            return self
        # A copy without re-validation: the parameters were checked when this event was built.
        copy = object.__new__(type(self))
        for name in names:
            object.__setattr__(copy, name, labels[name] if name in labels else getattr(self, name))
        return copy

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict: ``{"type": family, <parameters>, <derived values>, "query", "partition"}``.

        Derived values (a scale, ρ) are included for people reading the JSON; ``event_from_dict`` checks
        that they agree with the parameters.
        """
        out: dict[str, Any] = {"type": self.family}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def describe(self) -> str:
        """One line for people, e.g. ``Laplace, ε = 0.5 (Δ₁ = 1, b = 2)``."""
        raise NotImplementedError


def _pure_rho(epsilon: float) -> float:
    return epsilon * epsilon / 2.0


@dataclass(frozen=True, slots=True, kw_only=True)
class LaplaceEvent(PrivacyEvent):
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

    def __post_init__(self) -> None:
        self._check_labels()
        object.__setattr__(self, "epsilon", check.positive_finite(self.epsilon, "epsilon"))
        object.__setattr__(self, "sensitivity", check.positive_finite(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "scale", self.sensitivity / self.epsilon)

    @classmethod
    def from_scale(
        cls, *, scale: float, sensitivity: float, query: str = "", partition: tuple[str, str] | None = None
    ) -> LaplaceEvent:
        """The event of Lap(b) noise on a query with ℓ1 sensitivity Δ₁: ε = Δ₁/b."""
        b = check.positive_finite(scale, "scale")
        d = check.positive_finite(sensitivity, "sensitivity")
        return cls(epsilon=d / b, sensitivity=d, query=query, partition=partition)

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def rho(self) -> float:
        return _pure_rho(self.epsilon)

    @property
    def mechanism(self) -> str:
        return "Laplace"

    def describe(self) -> str:
        return f"Laplace, ε = {self.epsilon:.4g} (Δ₁ = {self.sensitivity:g}, b = {self.scale:.4g})"


@dataclass(frozen=True, slots=True, kw_only=True)
class GeometricEvent(PrivacyEvent):
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

    epsilon: float
    sensitivity: int
    scale: float = field(init=False)

    def __post_init__(self) -> None:
        self._check_labels()
        object.__setattr__(self, "epsilon", check.positive_finite(self.epsilon, "epsilon"))
        object.__setattr__(self, "sensitivity", _integer_sensitivity(self.sensitivity))
        object.__setattr__(self, "scale", self.sensitivity / self.epsilon)

    @property
    def noise_parameter(self) -> float:
        """a = ε/Δ₁, the discrete Laplace parameter of Pr[Z = z] ∝ e^(−a|z|)."""
        return self.epsilon / self.sensitivity

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def rho(self) -> float:
        return _pure_rho(self.epsilon)

    @property
    def mechanism(self) -> str:
        return "Geometric"

    def describe(self) -> str:
        return f"Geometric, ε = {self.epsilon:.4g} (Δ₁ = {self.sensitivity})"


def _integer_sensitivity(value: object) -> int:
    d = check.positive_finite(value, "sensitivity")
    if d != math.floor(d):
        raise ParameterError(f"sensitivity must be an integer >= 1, got sensitivity={value!r}")
    return int(d)


@dataclass(frozen=True, slots=True, kw_only=True)
class GaussianEvent(PrivacyEvent):
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

    def __post_init__(self) -> None:
        self._check_labels()
        object.__setattr__(self, "sigma", check.positive_finite(self.sigma, "sigma"))
        object.__setattr__(self, "sensitivity", check.positive_finite(self.sensitivity, "sensitivity"))
        object.__setattr__(self, "epsilon", check.positive_finite(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta", check.open_unit(self.delta, "delta"))
        exact = float(gaussian_delta(self.epsilon, self.sigma, self.sensitivity))
        if exact > self.delta * (1.0 + _PROFILE_SLACK):
            raise ParameterError(
                f"a Gaussian release with sigma={self.sigma!r} and sensitivity={self.sensitivity!r} is not "
                f"({self.epsilon!r}, {self.delta!r})-DP: its exact δ at ε={self.epsilon!r} is {exact:.6g}"
            )

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
    def rho(self) -> float:
        return self.sensitivity**2 / (2.0 * self.sigma**2)

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

    def to_dict(self) -> dict[str, Any]:
        out = PrivacyEvent.to_dict(self)
        out["rho"] = self.rho
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscreteGaussianEvent(PrivacyEvent):
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

    sigma: float
    sensitivity: int
    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        self._check_labels()
        object.__setattr__(self, "sigma", check.positive_finite(self.sigma, "sigma"))
        object.__setattr__(self, "sensitivity", _integer_sensitivity(self.sensitivity))
        object.__setattr__(self, "epsilon", check.positive_finite(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta", check.open_unit(self.delta, "delta"))
        exact = float(discrete_gaussian_delta(self.epsilon, self.sigma, self.sensitivity))
        if exact > self.delta * (1.0 + _PROFILE_SLACK):
            raise ParameterError(
                f"a discrete Gaussian release with sigma={self.sigma!r} and sensitivity={self.sensitivity!r} "
                f"is not ({self.epsilon!r}, {self.delta!r})-DP: its exact δ at ε={self.epsilon!r} is "
                f"{exact:.6g}"
            )

    @property
    def rho(self) -> float:
        return self.sensitivity**2 / (2.0 * self.sigma**2)

    @property
    def mechanism(self) -> str:
        return "Discrete Gaussian"

    def describe(self) -> str:
        return (
            f"Discrete Gaussian, ε = {self.epsilon:.4g}, δ = {self.delta:.3g} (Δ = {self.sensitivity}, "
            f"σ = {self.sigma:.4g})"
        )

    def to_dict(self) -> dict[str, Any]:
        out = PrivacyEvent.to_dict(self)
        out["rho"] = self.rho
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class PureDPEvent(PrivacyEvent):
    """A release by any ε-DP mechanism (staircase, exponential mechanism, report-noisy-max, randomized
    response, ...), known only by its guarantee.

    Mathematics:
        Every ε-DP pair of output distributions is a post-processing of the randomized-response pair
        P = (e^ε, 1)/(1 + e^ε), Q = (1, e^ε)/(1 + e^ε) (Kairouz, Oh & Viswanath 2015), so an accountant may
        use that pair as the worst case: its privacy loss is ±ε with Pr_P[+ε] = e^ε/(1 + e^ε)
        (dp_accounting's ``from_privacy_parameters(ε, 0)``), its Rényi divergence of order α is
        D_α = [ln(e^(αε) + e^((1−α)ε)) − ln(1 + e^ε)]/(α − 1), and it is (ε²/2)-zCDP (Bun & Steinke 2016).

    Args:
        epsilon: ε > 0.
        mechanism: the mechanism's name, for people (default "pure ε-DP").
    """

    family: ClassVar[str] = "pure"

    epsilon: float
    mechanism: str = "pure ε-DP"

    def __post_init__(self) -> None:
        self._check_labels()
        object.__setattr__(self, "epsilon", check.positive_finite(self.epsilon, "epsilon"))
        object.__setattr__(self, "mechanism", _label(self.mechanism, "mechanism"))

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def rho(self) -> float:
        return _pure_rho(self.epsilon)

    def describe(self) -> str:
        return f"{self.mechanism}, ε = {self.epsilon:.4g}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApproxDPEvent(PrivacyEvent):
    """A release by any (ε, δ)-DP mechanism with δ > 0, known only by its guarantee.

    Mathematics:
        Every (ε, δ)-DP pair is a post-processing of the pair whose privacy loss is +∞ with probability δ,
        +ε with probability (1 − δ)·e^ε/(1 + e^ε) and −ε with probability (1 − δ)/(1 + e^ε)
        (Kairouz, Oh & Viswanath 2015; dp_accounting's ``from_privacy_parameters(ε, δ)``). A guarantee with
        δ > 0 implies no Rényi-DP or zCDP bound (the loss may be infinite), so ``rho`` is ``None``.

    Args:
        epsilon: ε > 0.
        delta: δ in (0, 1). (Use ``PureDPEvent`` for δ = 0.)
        mechanism: the mechanism's name, for people (default "approximate (ε, δ)-DP").
    """

    family: ClassVar[str] = "approximate"

    epsilon: float
    delta: float
    mechanism: str = "approximate (ε, δ)-DP"

    def __post_init__(self) -> None:
        self._check_labels()
        object.__setattr__(self, "epsilon", check.positive_finite(self.epsilon, "epsilon"))
        if isinstance(self.delta, (int, float)) and not isinstance(self.delta, bool) and self.delta == 0:
            raise ParameterError("delta must be in (0, 1) for an ApproxDPEvent, got delta=0; use PureDPEvent")
        object.__setattr__(self, "delta", check.open_unit(self.delta, "delta"))
        object.__setattr__(self, "mechanism", _label(self.mechanism, "mechanism"))

    @property
    def rho(self) -> None:
        return None

    def describe(self) -> str:
        return f"{self.mechanism}, ε = {self.epsilon:.4g}, δ = {self.delta:.3g}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ZCDPEvent(PrivacyEvent):
    """A release by a mechanism known only to be ρ-zCDP (Bun & Steinke 2016).

    Mathematics:
        D_α(M(x) ‖ M(x′)) ≤ αρ for every order α > 1 (dp_accounting's ``ZCDpEvent(rho)``). It implies
        (ε, δ)-DP for every δ > 0 through a conversion (see ``dpdash.accounting.zcdp``) but has no single
        stated (ε, δ), so ``epsilon`` and ``delta`` are ``None`` and accountants that compose (ε, δ) pairs
        refuse it.

    Args:
        rho: ρ > 0.
        mechanism: the mechanism's name, for people (default "ρ-zCDP").
    """

    family: ClassVar[str] = "zcdp"

    rho: float
    mechanism: str = "ρ-zCDP"

    def __post_init__(self) -> None:
        self._check_labels()
        object.__setattr__(self, "rho", check.positive_finite(self.rho, "rho"))
        object.__setattr__(self, "mechanism", _label(self.mechanism, "mechanism"))

    @property
    def epsilon(self) -> None:
        return None

    @property
    def delta(self) -> None:
        return None

    def describe(self) -> str:
        return f"{self.mechanism}, ρ = {self.rho:.4g}"


@dataclass(frozen=True, slots=True, kw_only=True)
class NonPrivateEvent(PrivacyEvent):
    """A release without any privacy guarantee (e.g. an exact count).

    Mathematics: (ε, δ)-DP for no ε < ∞ and δ < 1. Every accountant reports ε = ∞ (and δ = 1 at any finite
    ε) for a list that contains one, as dp_accounting does for ``NonPrivateDpEvent``.
    """

    family: ClassVar[str] = "non_private"

    @property
    def epsilon(self) -> float:
        return math.inf

    @property
    def delta(self) -> float:
        return 0.0

    @property
    def rho(self) -> float:
        return math.inf

    @property
    def mechanism(self) -> str:
        return "non-private"

    def describe(self) -> str:
        return "non-private release (no guarantee)"


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

# For each event type: its field names, and the labels its ``setting`` drops (with the value they take).
_SETTING_LAYOUT: dict[type[PrivacyEvent], tuple[tuple[str, ...], dict[str, Any]]] = {
    cls: (
        tuple(f.name for f in fields(cls)),
        {
            f.name: f.default
            for f in fields(cls)
            if f.name in ("query", "partition") or (f.name == "mechanism" and f.default is not MISSING)
        },
    )
    for cls in EVENT_TYPES.values()
}

# Values recomputed from the parameters, present in ``to_dict`` for people and checked on the way back.
_DERIVED = {"scale", "rho"}


def event_from_dict(data: Any) -> PrivacyEvent:
    """The event a ``to_dict()`` dict describes, validated as on construction.

    Raises:
        ParameterTypeError: ``data`` is not a dict.
        ParameterError: unknown ``type``, missing or unexpected keys, bad values, or derived values (scale, ρ)
            that disagree with the parameters.
    """
    if not isinstance(data, dict):
        raise ParameterTypeError(f"an event must be a dict, got {type(data).__name__}")
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ParameterError(f"unknown event type {kind!r}; known types: {sorted(EVENT_TYPES)}")
    init_names = {f.name for f in fields(cls) if f.init}
    given = set(data) - {"type"}
    unexpected = given - init_names - _DERIVED
    if unexpected:
        raise ParameterError(f"unexpected keys {sorted(unexpected)} in a {kind!r} event")
    required = {f.name for f in fields(cls) if f.init and f.name not in ("query", "partition")}
    required -= {f.name for f in fields(cls) if f.init and f.default is not MISSING}
    missing = required - given
    if missing:
        raise ParameterError(f"a {kind!r} event needs the keys {sorted(missing)}")
    kwargs = {name: data[name] for name in given & init_names}
    event = cls(**kwargs)
    for name in given & _DERIVED:
        stated, actual = data[name], getattr(event, name)
        if (
            not isinstance(stated, (int, float))
            or isinstance(stated, bool)
            or not math.isclose(float(stated), actual, rel_tol=_DERIVED_RTOL)
        ):
            raise ParameterError(
                f"{name}={stated!r} in a {kind!r} event does not match its parameters ({name}={actual!r})"
            )
    return event


def event_for(mechanism: Any, *, query: str = "", partition: tuple[str, str] | None = None) -> PrivacyEvent:
    """The event of one release by a dpdash mechanism.

    Laplace → ``LaplaceEvent``; Gaussian → ``GaussianEvent`` (σ, Δ₂ and the calibrated (ε, δ));
    Geometric → ``GeometricEvent``; DiscreteGaussian → ``DiscreteGaussianEvent``; a vector mechanism → the
    event of its base mechanism (whose sensitivity is that of the whole vector); the staircase, selection
    mechanisms (exponential, report noisy max, permute-and-flip), randomized response and any other
    mechanism with ``epsilon`` and ``delta = 0`` → ``PureDPEvent`` named after it; a mechanism with
    ``delta > 0`` (e.g. Wishart, whose true δ is 1 − e^(−ε/3)) → ``ApproxDPEvent``.

    >>> from dpdash import Gaussian
    >>> e = event_for(Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0), query="mean age")
    >>> e.mechanism, e.epsilon, e.delta, round(e.sigma, 4), round(e.rho, 5)
    ('Gaussian', 1.0, 1e-05, 3.7306, 0.03593)
    """
    from dpdash.mechanisms import VectorMechanism

    labels = {"query": query, "partition": partition}
    if isinstance(mechanism, Laplace):
        return LaplaceEvent(epsilon=mechanism.epsilon, sensitivity=mechanism.sensitivity, **labels)
    if isinstance(mechanism, Geometric):
        return GeometricEvent(epsilon=mechanism.epsilon, sensitivity=mechanism.sensitivity, **labels)
    if isinstance(mechanism, Gaussian):
        return GaussianEvent(
            sigma=mechanism.scale,
            sensitivity=mechanism.sensitivity,
            epsilon=mechanism.epsilon,
            delta=mechanism.delta,
            **labels,
        )
    if isinstance(mechanism, DiscreteGaussian):
        return DiscreteGaussianEvent(
            sigma=mechanism.scale,
            sensitivity=mechanism.sensitivity,
            epsilon=mechanism.epsilon,
            delta=mechanism.delta,
            **labels,
        )
    if isinstance(mechanism, VectorMechanism):
        return event_for(mechanism.base, **labels)
    if isinstance(mechanism, Staircase):
        return PureDPEvent(epsilon=mechanism.epsilon, mechanism=mechanism.name, **labels)
    epsilon, delta = getattr(mechanism, "epsilon", None), getattr(mechanism, "delta", None)
    if isinstance(mechanism, type) or not _is_number(epsilon) or not _is_number(delta):
        raise ParameterTypeError(
            "mechanism must be a dpdash mechanism instance (Laplace, Gaussian, ExponentialMechanism, ...) "
            f"with epsilon and delta, got {mechanism!r}"[:300]
        )
    name = str(getattr(mechanism, "name", type(mechanism).__name__))
    if delta == 0:
        return PureDPEvent(epsilon=epsilon, mechanism=name, **labels)
    return ApproxDPEvent(epsilon=epsilon, delta=delta, mechanism=name, **labels)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def events_for_release(release: Any, *, partition: tuple[str, str] | None = None) -> list[PrivacyEvent]:
    """The events of a ``dpdash.release.Release``: one per mechanism run of each of its pieces.

    A piece that spent ε on a query whose neighbours change m coordinates ran the per-coordinate
    mechanism at ε/m (``PieceRecord.composition`` says so): it counts as m runs of that mechanism, which
    is how a neighbour sees it. Each event's query label is the release's query name (and the piece's
    name, for composite queries such as a mean).

    Raises:
        ParameterError: a piece's recorded ε or δ is not a whole number of runs of its mechanism.
    """
    pieces = getattr(release, "pieces", None)
    if pieces is None:
        raise ParameterTypeError(f"release must be a dpdash.release.Release, got {type(release).__name__}")
    events: list[PrivacyEvent] = []
    for piece in pieces:
        mechanism = piece.build()
        event = event_for(
            mechanism,
            query=release.query_name if len(pieces) == 1 else f"{release.query_name}: {piece.name}",
            partition=partition,
        )
        runs = max(1, round(piece.epsilon / event.epsilon))
        if not (
            math.isclose(runs * event.epsilon, piece.epsilon, rel_tol=1e-9)
            and math.isclose(runs * (event.delta or 0.0), piece.delta, rel_tol=1e-9, abs_tol=1e-300)
        ):
            raise ParameterError(
                f"piece {piece.name!r} of the release records ε = {piece.epsilon!r}, δ = {piece.delta!r}, "
                f"which is not a whole number of runs of its mechanism ({event.describe()})"
            )
        events.extend([event] * runs)
    return events


def _smallest_epsilon(profile: Any, delta: float) -> float:
    """The smallest ε ≥ 0 with profile(ε) ≤ δ, for a decreasing profile, to the last bit."""
    from dpdash._search import bracket, smallest_true

    def ok(e: float) -> bool:
        return profile(e) <= delta

    if ok(0.0):
        raise ParameterError(
            f"the noise is so large that the release is (0, {delta!r})-DP; no ε > 0 to state"
        )
    lo, hi = bracket(ok, 1.0, lower=1e-300, upper=1e300, what="epsilon")
    return smallest_true(ok, lo, hi)
