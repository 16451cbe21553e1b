"""Rényi DP composition (Mironov 2017), through Google's ``dp_accounting``."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from scipy import special

from dpdash.accounting import events as ev
from dpdash.accounting.accountant import Accountant, Composition

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["RDPAccountant", "geometric_rdp", "pure_dp_rdp"]


def pure_dp_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """The largest Rényi divergence of order α of any ε-DP pair: that of the randomized-response pair
    (every ε-DP pair is its post-processing, and Rényi divergence cannot grow under post-processing):

        D_α = [ln(e^(αε) + e^((1−α)ε)) − ln(1 + e^ε)] / (α − 1).
    """
    a = np.asarray(orders, dtype=float)
    return (np.logaddexp(a * epsilon, (1.0 - a) * epsilon) - np.logaddexp(0.0, epsilon)) / (a - 1.0)


def geometric_rdp(noise_parameter: float, sensitivity: int, orders: np.ndarray) -> np.ndarray:
    """Rényi divergence of order α between discrete Laplace noise Pr[z] = tanh(a/2)e^(−a|z|) and its shift
    by Δ, exactly: D_α = ln Σ_z P(z)^α Q(z)^(1−α) / (α − 1), the sum split over z ≤ 0, z ≥ Δ (geometric
    series) and 0 < z < Δ (finite), in log space."""
    a, d = float(noise_parameter), int(sensitivity)
    alpha = np.asarray(orders, dtype=float)
    log_c = math.log(math.tanh(a / 2.0))
    log_geometric = -math.log(-math.expm1(-a))  # ln 1/(1 − e^(−a))
    parts = [a * (alpha - 1.0) * d + log_geometric, -a * alpha * d + log_geometric]
    for z in range(1, d):
        parts.append(-a * ((2.0 * alpha - 1.0) * z + (1.0 - alpha) * d))
    log_sum = log_c + special.logsumexp(np.vstack(parts), axis=0)
    return log_sum / (alpha - 1.0)


class RDPAccountant(Accountant):
    """Rényi DP: releases with Rényi divergence ε_i(α) of order α compose to Σε_i(α) at every α (Mironov
    2017, Prop. 1); the total converts to (ε, δ) with dp_accounting's ``compute_epsilon``/``compute_delta``
    (the conversion of Canonne, Kamath & Steinke 2020, Prop. 12, minimised over the orders).

    Each setting's curve is computed once (cached) and multiplied by its count:

    - Laplace: dp_accounting's ``RdpAccountant`` on ``LaplaceDpEvent(1/ε)`` (exact, Mironov 2017 Prop. 6);
    - Gaussian: ``RdpAccountant`` on ``GaussianDpEvent(σ/Δ₂)`` (α·Δ₂²/(2σ²), exact);
    - discrete Gaussian and ρ-zCDP events: ``RdpAccountant`` on ``ZCDpEvent(ρ)`` (αρ; CKS 2020 Thm 4);
    - geometric (discrete Laplace): ``geometric_rdp``, exact (dp_accounting has no RDP for it);
    - other pure ε-DP events: ``pure_dp_rdp``, the worst case for ε-DP (dp_accounting has no event for it).

    Approximate (ε, δ) events with δ > 0 have no Rényi bound and are refused.

    Args:
        orders: the orders α > 1 to optimise over; dp_accounting's ``DEFAULT_RDP_ORDERS`` by default.
    """

    name: ClassVar[str] = "rdp"
    title: ClassVar[str] = "Rényi DP (dp_accounting)"
    finite_at_zero_delta: ClassVar[bool] = False

    def __init__(self, orders: Sequence[float] | None = None) -> None:
        if orders is None:
            from dp_accounting.rdp import rdp_privacy_accountant

            orders = rdp_privacy_accountant.DEFAULT_RDP_ORDERS
        values = tuple(float(order) for order in orders)
        if not values or any(not (order > 1.0 and math.isfinite(order)) for order in values):
            from dpdash.errors import ParameterError

            raise ParameterError(f"orders must be finite numbers > 1, got orders={orders!r}")
        self.orders = values

    def __repr__(self) -> str:
        return f"RDPAccountant(orders=<{len(self.orders)} orders>)"

    def _refusal(self, event: ev.PrivacyEvent) -> str | None:
        if isinstance(event, ev.ApproxDPEvent):
            return (
                "an (ε, δ) guarantee with δ > 0 implies no Rényi-DP bound; use basic, advanced, optimal, pld"
            )
        return None

    def curve(self, composition: Composition) -> np.ndarray:
        """The composed Rényi divergence at each of ``orders``: Σ_settings count·D_α(setting), each order's
        sum correctly rounded (``math.fsum``), so it does not depend on the order of the settings (and the
        running totals, which keep these sums exactly, give the same curve)."""
        rows = np.vstack([count * self.setting_curve(setting) for setting, count in composition])
        return np.array([math.fsum(column) for column in rows.T.tolist()])

    def setting_curve(self, setting: ev.PrivacyEvent) -> np.ndarray:
        """One release's Rényi divergence at each of ``orders`` (cached; read-only)."""
        return _setting_curve(setting, self.orders)

    def epsilon_of_curve(self, curve: np.ndarray, target_delta: float) -> float:
        """ε at δ of a composed curve (dp_accounting's ``compute_epsilon``, CKS 2020 Prop. 12)."""
        from dp_accounting.rdp import rdp_privacy_accountant

        return float(rdp_privacy_accountant.compute_epsilon(self.orders, curve, target_delta)[0])

    def _epsilon(self, composition: Composition, target_delta: float) -> float:
        return self.epsilon_of_curve(self.curve(composition), target_delta)

    def _delta(self, composition: Composition, target_epsilon: float) -> float:
        from dp_accounting.rdp import rdp_privacy_accountant

        return float(
            rdp_privacy_accountant.compute_delta(self.orders, self.curve(composition), target_epsilon)[0]
        )


@functools.lru_cache(maxsize=16384)
def _setting_curve(setting: ev.PrivacyEvent, orders: tuple[float, ...]) -> np.ndarray:
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant

    grid = np.array(orders)
    if isinstance(setting, ev.GeometricEvent):
        curve = geometric_rdp(setting.noise_parameter, setting.sensitivity, grid)
    elif isinstance(setting, ev.PureDPEvent):
        curve = pure_dp_rdp(setting.epsilon, grid)
    else:
        if isinstance(setting, ev.LaplaceEvent):
            event = dp_accounting.LaplaceDpEvent(noise_multiplier=1.0 / setting.epsilon)
        elif isinstance(setting, ev.GaussianEvent):
            event = dp_accounting.GaussianDpEvent(noise_multiplier=setting.noise_multiplier)
        elif isinstance(setting, (ev.DiscreteGaussianEvent, ev.ZCDPEvent)):
            event = dp_accounting.ZCDpEvent(rho=float(setting.rho))  # type: ignore[arg-type]
        else:  # pragma: no cover - refused before
            raise AssertionError(f"no Rényi curve for {setting!r}")
        curve = rdp_privacy_accountant.RdpAccountant(orders=list(orders)).compose(event).rdp
    curve = np.asarray(curve, dtype=float)
    curve.setflags(write=False)
    return curve
