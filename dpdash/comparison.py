"""The mechanism line-up: every noise mechanism at the same ε (and δ), side by side.

This is what the dashboard's Mechanism explorer shows, as plain data for a notebook too. A mechanism
that cannot run with the given parameters (the classic Gaussian at ε ≥ 1, an integer mechanism with a
fractional sensitivity) appears with the reason instead of numbers, so nothing silently disappears.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import DPDashError
from dpdash.mechanisms import (
    DiscreteGaussian,
    Gaussian,
    Geometric,
    Laplace,
    NoiseMechanism,
    Staircase,
)

__all__ = [
    "LINEUP",
    "Candidate",
    "accuracy_curves",
    "compare",
    "epsilon_for_accuracy",
    "lineup",
]

#: The mechanisms compared, in display order.
LINEUP = (
    "Laplace",
    "Gaussian (analytic)",
    "Gaussian (classic)",
    "Geometric",
    "Discrete Gaussian",
    "Staircase",
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One entry of the line-up: a mechanism, or the reason it is not available."""

    label: str
    mechanism: NoiseMechanism | None
    unavailable: str | None = None


def _build(label: str, epsilon: float, delta: float, l1: float, l2: float) -> NoiseMechanism:
    """The mechanism called ``label`` at (ε, δ); ℓ1-type noise takes Δ₁, Gaussian noise Δ₂, and the
    per-answer mechanisms (discrete Gaussian, staircase) take Δ₁ as the change of one answer."""
    if label == "Laplace":
        return Laplace(epsilon=epsilon, sensitivity=l1)
    if label == "Gaussian (analytic)":
        return Gaussian(epsilon=epsilon, delta=delta, sensitivity=l2)
    if label == "Gaussian (classic)":
        return Gaussian(epsilon=epsilon, delta=delta, sensitivity=l2, calibration="classic")
    if label == "Geometric":
        return Geometric(epsilon=epsilon, sensitivity=l1)
    if label == "Discrete Gaussian":
        return DiscreteGaussian(epsilon=epsilon, delta=delta, sensitivity=l1)
    if label == "Staircase":
        return Staircase(epsilon=epsilon, sensitivity=l1)
    raise ValueError(f"label must be one of {LINEUP}, got label={label!r}")


def _why_unavailable(label: str, epsilon: float, l1: float) -> str | None:
    if label == "Gaussian (classic)" and epsilon >= 1.0:
        return "classic calibration is proven only for ε < 1 (Dwork & Roth, Thm A.1); use analytic"
    if label in ("Geometric", "Discrete Gaussian") and l1 != math.floor(l1):
        return "integer mechanism: needs an integer sensitivity"
    return None


def _checked(delta: float, l1_sensitivity: float, l2_sensitivity: float) -> tuple[float, float, float]:
    """δ, Δ₁ and Δ₂ of a line-up, checked."""
    return (
        check.open_unit(delta, "delta"),
        check.positive_finite(l1_sensitivity, "l1_sensitivity"),
        check.positive_finite(l2_sensitivity, "l2_sensitivity"),
    )


def lineup(*, epsilon: float, delta: float, l1_sensitivity: float, l2_sensitivity: float) -> list[Candidate]:
    """Every mechanism of ``LINEUP`` at (ε, δ), or the reason it cannot run there."""
    epsilon = check.positive_finite(epsilon, "epsilon")
    delta, l1, l2 = _checked(delta, l1_sensitivity, l2_sensitivity)
    out = []
    for label in LINEUP:
        reason = _why_unavailable(label, epsilon, l1)
        mechanism = None if reason else _build(label, epsilon, delta, l1, l2)
        out.append(Candidate(label, mechanism, reason))
    return out


def compare(
    *,
    epsilon: float,
    delta: float,
    l1_sensitivity: float,
    l2_sensitivity: float,
    k: int = 1,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """One row per mechanism: its guarantee, scale, SD, exact half-widths for one and for all k answers
    at ``confidence``, the union-bound half-width, and Pr[|noise| > SD]. Unavailable mechanisms keep
    their row, with NaNs and the reason in ``note``."""
    k = check.positive_int(k, "k")
    confidence = check.open_unit(confidence, "confidence")
    rows = []
    for candidate in lineup(
        epsilon=epsilon, delta=delta, l1_sensitivity=l1_sensitivity, l2_sensitivity=l2_sensitivity
    ):
        m = candidate.mechanism
        if m is None:
            rows.append({"mechanism": candidate.label, "note": candidate.unavailable})
            continue
        rows.append(
            {
                "mechanism": candidate.label,
                "epsilon": m.epsilon,
                "delta": m.delta,
                "sensitivity": m.sensitivity,
                "sensitivity_norm": m.sensitivity_norm,
                "scale": m.scale,
                "sd": m.std,
                "half_width_1": m.accuracy(confidence, 1),
                "half_width_k": m.accuracy(confidence, k),
                "union_bound_k": m.accuracy_union_bound(confidence, k),
                "note": "",
            }
        )
    return pd.DataFrame(rows, columns=[
        "mechanism", "epsilon", "delta", "sensitivity", "sensitivity_norm", "scale", "sd",
        "half_width_1", "half_width_k", "union_bound_k", "note",
    ])  # fmt: skip


def accuracy_curves(
    *,
    epsilons: np.ndarray,
    delta: float,
    l1_sensitivity: float,
    l2_sensitivity: float,
    k: int = 1,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Exact half-width (all k answers at ``confidence``) against ε, long format
    (mechanism, epsilon, half_width); ε where a mechanism is unavailable are left out."""
    rows = []
    for epsilon in np.asarray(epsilons, dtype=float):
        for candidate in lineup(
            epsilon=float(epsilon), delta=delta, l1_sensitivity=l1_sensitivity, l2_sensitivity=l2_sensitivity
        ):
            if candidate.mechanism is not None:
                rows.append(
                    {
                        "mechanism": candidate.label,
                        "epsilon": float(epsilon),
                        "half_width": float(candidate.mechanism.accuracy(confidence, k)),
                    }
                )
    return pd.DataFrame(rows, columns=["mechanism", "epsilon", "half_width"])


def epsilon_for_accuracy(
    *,
    alpha: float,
    delta: float,
    l1_sensitivity: float,
    l2_sensitivity: float,
    k: int = 1,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """For each mechanism, the smallest ε whose exact half-width (all k answers at ``confidence``) is
    ≤ α, δ fixed: ``Cls.for_accuracy`` per mechanism, or the reason it cannot reach α."""
    alpha = check.positive_finite(alpha, "alpha")
    delta, l1, l2 = _checked(delta, l1_sensitivity, l2_sensitivity)
    rows = []
    for label in LINEUP:
        reason = _why_unavailable(label, 0.5, l1)  # ε-independent reasons only
        if reason is None:
            try:
                sample = _build(label, 0.5, delta, l1, l2)
                params: dict[str, object] = {"sensitivity": sample.sensitivity}
                if sample.delta > 0:
                    params["delta"] = delta
                if isinstance(sample, Gaussian):
                    params["calibration"] = sample.calibration
                found = type(sample).for_accuracy(alpha=alpha, confidence=confidence, k=k, **params)
                rows.append(
                    {
                        "mechanism": label,
                        "epsilon": found.epsilon,
                        "half_width_k": found.accuracy(confidence, k),
                        "note": "",
                    }
                )
                continue
            except DPDashError as error:
                reason = str(error)
        rows.append({"mechanism": label, "epsilon": math.nan, "half_width_k": math.nan, "note": reason})
    return pd.DataFrame(rows, columns=["mechanism", "epsilon", "half_width_k", "note"])
