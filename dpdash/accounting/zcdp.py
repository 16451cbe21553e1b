"""Zero-concentrated DP (Bun & Steinke 2016) and its conversion to (ε, δ) (Canonne, Kamath & Steinke 2020)."""

from __future__ import annotations

import math
from typing import ClassVar

from dpdash.accounting.accountant import Accountant, Composition
from dpdash.accounting.events import ApproxDPEvent, PrivacyEvent
from dpdash.conversions import CONVERSIONS, zcdp_delta, zcdp_epsilon
from dpdash.errors import ParameterError

__all__ = ["ZCDPAccountant", "zcdp_delta", "zcdp_epsilon"]


class ZCDPAccountant(Accountant):
    """zCDP composition (Bun & Steinke 2016): ρ-zCDP releases compose to (Σρ_i)-zCDP, converted to (ε, δ)
    with ``zcdp_epsilon`` / ``zcdp_delta``.

    ρ of each event: Gaussian Δ₂²/(2σ²) and discrete Gaussian Δ²/(2σ²) exactly (their Rényi divergence is
    αρ); pure ε-DP events (Laplace, geometric, staircase, ...) ε²/2 (Bun & Steinke 2016, Prop. 1.4); ρ-zCDP
    events their ρ. Approximate (ε, δ) events with δ > 0 imply no zCDP bound and are refused.

    Args:
        conversion: ``"tight"`` (default, CKS 2020 Cor. 13) or ``"simple"`` (ρ + 2√(ρ ln(1/δ))).
    """

    name: ClassVar[str] = "zcdp"
    title: ClassVar[str] = "zCDP (Bun–Steinke; CKS conversion)"
    finite_at_zero_delta: ClassVar[bool] = False

    def __init__(self, conversion: str = "tight") -> None:
        if conversion not in CONVERSIONS:
            raise ParameterError(f"conversion must be one of {CONVERSIONS}, got conversion={conversion!r}")
        self.conversion = conversion

    def __repr__(self) -> str:
        return f"ZCDPAccountant(conversion={self.conversion!r})"

    def _refusal(self, event: PrivacyEvent) -> str | None:
        if isinstance(event, ApproxDPEvent) or event.rho is None:
            return "an (ε, δ) guarantee with δ > 0 implies no zCDP bound; use basic, advanced, optimal or pld"
        return None

    def rho(self, events: list[PrivacyEvent]) -> float:
        """Σρ over the worst path (∞ with a non-private event)."""
        from dpdash.accounting.accountant import compositions

        events = self.check(events)
        if not events:
            return 0.0
        paths, _ = compositions(events)
        return max(_rho(path) for path in paths)

    def _epsilon(self, composition: Composition, target_delta: float) -> float:
        return zcdp_epsilon(_rho(composition), target_delta, self.conversion)

    def _delta(self, composition: Composition, target_epsilon: float) -> float:
        return zcdp_delta(_rho(composition), target_epsilon, self.conversion)


def _rho(composition: Composition) -> float:
    return math.fsum(float(s.rho) * k for s, k in composition)  # type: ignore[arg-type]
