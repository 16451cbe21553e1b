"""What ε means for a person in the data: the attacker's view.

Two exact statements of the guarantee, for people who are not privacy experts:

- **Posterior bound.** An attacker who believes with probability p (the prior) that a person is in the
  data believes it, after seeing an ε-DP release, with probability at most
  e^ε·p / (1 − p + e^ε·p) (Kasiviswanathan & Smith 2014; Dwork & Roth 2014, §2.3: ε bounds the
  change in odds by a factor e^ε).
- **Hypothesis testing.** Any test of "this person is in the data" (against its neighbour) has
  FPR + e^ε·FNR ≥ 1 − δ and FNR + e^ε·FPR ≥ 1 − δ (Wasserman & Zhou 2010; Kairouz, Oh & Viswanath
  2015), so at a false-positive rate FPR its detection rate is at most
  min(e^ε·FPR + δ, 1 − e^(−ε)·(1 − δ − FPR)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpdash import _validation as check
from dpdash.conversions import zcdp_epsilon
from dpdash.errors import ParameterError

__all__ = [
    "REFERENCE_POINTS",
    "IconArray",
    "ReferencePoint",
    "icon_array",
    "max_detection_rate",
    "posterior_bound",
    "posterior_table",
]


def _probabilities(values: npt.ArrayLike, name: str, *, closed: bool) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    low_ok = array >= 0 if closed else array > 0
    high_ok = array <= 1 if closed else array < 1
    if not np.all(low_ok & high_ok):
        rule = "probabilities in [0, 1]" if closed else "probabilities strictly between 0 and 1"
        raise ParameterError(f"{name} must be {rule}, got {name}={values!r}")
    return array


def posterior_bound(prior: npt.ArrayLike, epsilon: float) -> np.ndarray:
    """The attacker's largest possible belief after an ε-DP release: e^ε·p / (1 − p + e^ε·p).

    Computed as p / (p + (1 − p)·e^(−ε)), which does not overflow at large ε.

    >>> round(float(posterior_bound(0.5, 1.0)), 4)
    0.7311
    """
    p = _probabilities(prior, "prior", closed=True)
    epsilon = check.non_negative_finite(epsilon, "epsilon")
    return p / (p + (1.0 - p) * math.exp(-epsilon))


def max_detection_rate(false_positive_rate: npt.ArrayLike, epsilon: float, delta: float = 0.0) -> np.ndarray:
    """The highest true-positive rate any membership test can reach at this false-positive rate under
    (ε, δ)-DP: min(e^ε·FPR + δ, 1 − e^(−ε)·(1 − δ − FPR)), clipped to [0, 1].

    >>> round(float(max_detection_rate(0.01, 1.0)), 4)  # ε = 1: at 1% false positives, ≤ 2.7%
    0.0272
    """
    fpr = _probabilities(false_positive_rate, "false_positive_rate", closed=True)
    epsilon = check.non_negative_finite(epsilon, "epsilon")
    if not 0.0 <= delta < 1.0:
        raise ParameterError(f"delta must be a number in [0, 1), got delta={delta!r}")
    first = math.exp(epsilon) * fpr + delta
    second = 1.0 - math.exp(-epsilon) * (1.0 - delta - fpr)
    return np.clip(np.minimum(first, second), 0.0, 1.0)


def posterior_table(priors: npt.ArrayLike, epsilons: npt.ArrayLike) -> np.ndarray:
    """posterior_bound for every (prior, ε) pair: rows are priors, columns are ε values."""
    p = _probabilities(priors, "priors", closed=True)
    eps = np.asarray(epsilons, dtype=float)
    if not np.all(np.isfinite(eps) & (eps >= 0)):
        raise ParameterError(f"epsilons must be finite numbers >= 0, got epsilons={epsilons!r}")
    return p[:, None] / (p[:, None] + (1.0 - p[:, None]) * np.exp(-eps[None, :]))


@dataclass(frozen=True, slots=True)
class IconArray:
    """A 100-person picture of the posterior bound: of 100 people who each are in the data with the
    prior's probability, an attacker who names them all as "in" is right about ``before`` of them
    without the release and, after it, can be confident about at most ``after`` (the bound × 100,
    rounded up so the picture never understates the risk)."""

    before: int
    after: int
    prior: float
    posterior: float

    def sentence(self) -> str:
        return (
            f"Without this release an attacker is right about {self.before} in 100 people; "
            f"with it, at most {self.after} in 100."
        )


def icon_array(prior: float, epsilon: float) -> IconArray:
    """The 100-person icon array for a prior and ε."""
    p = float(_probabilities(prior, "prior", closed=True))
    posterior = float(posterior_bound(p, epsilon))
    return IconArray(
        before=round(100 * p), after=min(100, math.ceil(100 * posterior - 1e-9)), prior=p, posterior=posterior
    )


@dataclass(frozen=True, slots=True)
class ReferencePoint:
    """A point on the ε scale with its definition: unit of privacy, time window, where it comes from."""

    label: str
    epsilon: float
    delta: float
    unit: str
    window: str
    source: str


def _census_2020_epsilon() -> float:
    # The Bureau published a total ρ = 2.63 (zCDP); converted here at δ = 1e-10 (CKS 2020, Cor. 13).
    return zcdp_epsilon(2.63, 1e-10)


REFERENCE_POINTS: tuple[ReferencePoint, ...] = (
    ReferencePoint(
        "Policy tier: likely to harm if disclosed", 0.05, 1e-7, "one record", "the dataset's whole budget",
        "OpenDP DP Creator default tiers",
    ),
    ReferencePoint(
        "Policy tier: could harm if disclosed", 0.25, 1e-6, "one record", "the dataset's whole budget",
        "OpenDP DP Creator default tiers",
    ),
    ReferencePoint(
        "Policy tier: would not harm if disclosed", 1.0, 1e-5, "one record", "the dataset's whole budget",
        "OpenDP DP Creator default tiers",
    ),
    ReferencePoint(
        "US Census 2020 redistricting data", _census_2020_epsilon(), 1e-10, "one person",
        "the whole 2020 redistricting release",
        "US Census Bureau: total ρ = 2.63 zCDP; ε computed by dpdash at δ = 1e-10 (CKS 2020, Cor. 13)",
    ),
    ReferencePoint(
        "Apple emoji usage (local model)", 4.0, 0.0, "one device", "one day",
        "Apple Differential Privacy Technical Overview; local DP: not comparable one-to-one with central ε",
    ),
)  # fmt: skip
