"""Events that state a guarantee rather than a mechanism: pure ε-DP, approximate (ε, δ)-DP, ρ-zCDP, and a
release that is not private at all."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from dpdash import _validation as check
from dpdash.accounting.event_base import PrivacyEvent, _label, _PureEvent
from dpdash.errors import ParameterError

__all__ = ["ApproxDPEvent", "NonPrivateEvent", "PureDPEvent", "ZCDPEvent"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PureDPEvent(_PureEvent):
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
