"""The mechanisms a page offers for a query, by the names people read: one menu for the pages that release
a query (Query & release) and that audit one (Audit), so both list the same mechanisms under the same names.
"""

from __future__ import annotations

from dpdash.mechanisms import (
    DiscreteGaussian,
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Laplace,
    PermuteAndFlip,
    ReportNoisyMax,
    Staircase,
)

__all__ = ["KEY_MECHANISMS", "NOISE_MECHANISMS", "SELECTION_MECHANISMS", "needs_delta"]

#: Mechanisms that add noise to a query's answers.
NOISE_MECHANISMS: dict[str, type] = {
    "Laplace": Laplace,
    "Gaussian (analytic)": Gaussian,
    "Geometric": Geometric,
    "Discrete Gaussian": DiscreteGaussian,
    "Staircase": Staircase,
}
#: Mechanisms that pick one of a query's public candidates (a median, a mode).
SELECTION_MECHANISMS: dict[str, type] = {
    "Exponential mechanism": ExponentialMechanism,
    "Permute-and-flip": PermuteAndFlip,
    "Report noisy max": ReportNoisyMax,
}
#: Keys that are not public: one mechanism, the geometric with a threshold (dpdash.key_release).
KEY_MECHANISMS: dict[str, type] = {"Geometric with a key threshold": Geometric}


def needs_delta(mechanism: type) -> bool:
    """Whether a query's ``mechanism`` (a class of these menus) is calibrated with a δ > 0."""
    return mechanism in (Gaussian, DiscreteGaussian)
