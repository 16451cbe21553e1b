"""What a release could look like, computed exactly from the noise distribution (nothing is released).

A preview answers the data owner's questions before any budget is spent: where would the noisy value
land (a quantile dotplot: Kay et al. 2016, used for DP releases by the ViP interface, PETS 2022), how far
from the truth, how likely is a noisy count to go negative, or to land on the other side of a threshold
that matters. Every number here is exact for the mechanism's noise; only the animation of possible
releases draws samples (numpy, seeded: ``NoiseMechanism.simulate``).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from dpdash import _validation as check
from dpdash.errors import ParameterError
from dpdash.mechanisms.base import NoiseMechanism

__all__ = [
    "DOTS",
    "chance_below",
    "chance_of_crossing",
    "quantile_dots",
    "relative_error",
]

#: Dots in a quantile dotplot (ViP used 20–50; UX.md asks for 25).
DOTS = 25


def _answers(true_values: npt.ArrayLike) -> np.ndarray:
    values = np.atleast_1d(np.asarray(true_values, dtype=float))
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)):
        raise ParameterError(f"true_values must be a non-empty list of finite numbers, got {true_values!r}")
    return values


def quantile_dots(mechanism: NoiseMechanism, true_values: npt.ArrayLike, dots: int = DOTS) -> np.ndarray:
    """Possible releases as quantiles: row i holds true_i + F⁻¹((j + ½)/dots), j = 0..dots−1, where F
    is the noise CDF. Each dot stands for 1/dots of the probability, so "3 of 25 dots below 0" reads as
    a 12% chance."""
    values = _answers(true_values)
    dots = check.positive_int(dots, "dots")
    levels = (np.arange(dots) + 0.5) / dots
    offsets = np.asarray(mechanism.noise.ppf(levels), dtype=float)
    return values[:, None] + offsets[None, :]


def chance_below(mechanism: NoiseMechanism, true_values: npt.ArrayLike, threshold: float) -> np.ndarray:
    """Pr[true + Z < threshold] for each true value. For integer noise and integer answers the release
    is an integer, so this is Pr[Z ≤ ⌈threshold − true⌉ − 1]."""
    values = _answers(true_values)
    threshold = check.finite(threshold, "threshold")
    gap = threshold - values
    noise = mechanism.noise
    if mechanism.integer_valued:
        return np.asarray(noise.cdf(np.ceil(gap) - 1.0), dtype=float)
    return np.asarray(noise.cdf(gap), dtype=float)


def chance_of_crossing(mechanism: NoiseMechanism, true_values: npt.ArrayLike, threshold: float) -> np.ndarray:
    """The chance that noise puts the release on the other side of ``threshold`` than the true value:
    Pr[release < threshold] when true ≥ threshold, else Pr[release ≥ threshold]."""
    values = _answers(true_values)
    below = chance_below(mechanism, values, threshold)
    return np.where(values >= threshold, below, 1.0 - below)


def relative_error(half_width: float, true_values: npt.ArrayLike) -> np.ndarray:
    """a/|true| for each value (∞ where the true value is 0): the error as a share of the answer."""
    values = _answers(true_values)
    a = check.non_negative_finite(half_width, "half_width")
    with np.errstate(divide="ignore"):
        return np.where(values == 0, math.inf, a / np.abs(values))
