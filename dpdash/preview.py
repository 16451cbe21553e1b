"""What a release could look like, before it is made (nothing is released, no budget is spent).

A preview answers the data owner's questions before any budget is spent: where would the noisy value
land (a quantile dotplot: Kay et al. 2016, used for DP releases by the ViP interface, PETS 2022), how far
from the truth (±a at a confidence, and relative error), how likely is a noisy count to go negative, or
to land on the other side of a threshold that matters.

The ± is the one a release states, computed by the same function (``dpdash.published``, whose
docstring defines it for every kind of query), always labelled (``PreviewAccuracy.method``):

- **exact**, where a closed form exists: one noisy answer per value (the mechanisms' exact
  half-widths, ``dpdash.accuracy``; plus half a step per rounding: **exact + rounding**), and
  selections (quantiles: the exact chance of each public candidate);
- **simulated**, for everything computed from noisy pieces or post-processed without a closed form (a
  mean = noisy sum / noisy count, a variance): ``SIMULATION_DRAWS`` possible releases drawn with the
  fast numpy sampler (``NoiseMechanism.simulate``, seeded with ``SIMULATION_SEED``), through the same
  calibration (``dpdash.release.calibrate``), the same combination and the same post-processing code
  (``dpdash.release.postprocess_values``) as the release, with ±a read off the draws and its Monte
  Carlo standard error. The preview centres the draws on the true values (owner only); the release
  states the same function at its released pieces, which are public (``dpdash.published``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from dpdash import _validation as check
from dpdash.errors import ParameterError
from dpdash.mechanisms.base import NoiseMechanism
from dpdash.published import (
    SIMULATION_DRAWS,
    SIMULATION_SEED,
    Accuracy,
    noise_accuracy,
    numeric_accuracy,
    read_half_widths,
    simulate_releases,
    simulation_draws,
)

__all__ = [
    "DOTS",
    "SIMULATION_DRAWS",
    "SIMULATION_SEED",
    "PreviewAccuracy",
    "chance_below",
    "chance_of_crossing",
    "exact_accuracy",
    "preview_accuracy",
    "quantile_dots",
    "relative_error",
    "selection_dots",
    "selection_half_width",
    "simulate_releases",
    "simulated_accuracy",
    "simulation_draws",
]

#: Dots in a quantile dotplot (ViP used 20–50; UX.md asks for 25).
DOTS = 25


@dataclass(frozen=True, eq=False)
class PreviewAccuracy:
    """The ± of what will be published, for the data owner's preview (NOT PRIVATE: built from true
    values; never publish it).

    Attributes:
        confidence: c of the half-widths.
        truth: the true values (owner only), one per released value.
        half_widths: a_i per value: Pr[|released_i − true_i| ≤ a_i] ≥ c (exact), or the c-quantile of
            |released_i − true_i| over the draws (simulated).
        joint_half_width: a for all values at once: Pr[max_i |released_i − true_i| ≤ a] ≥ c.
        method: ``"exact"``, ``"exact + rounding"`` (exact noise, plus half a step per rounding) or
            ``"simulated"``.
        definition: what the numbers mean, in words (the confidence, exact or simulated with N seeded
            draws and the Monte Carlo standard error).
        dots: (k, DOTS) possible released values, each dot 1/DOTS of the probability.
        draws, seed, mc_error: simulated only: the number of draws, the seed, and the Monte Carlo
            standard error of ``joint_half_width`` (from the distribution-free 95% interval of a
            quantile estimated by order statistics: half its width / 1.96).
        mechanism: exact only: the mechanism whose noise law gives the chances.
        samples: simulated only: the (draws, k) possible released values.
        stated: the ± a release states for these settings (``dpdash.published``), which
            ``half_widths`` and ``joint_half_width`` are (simulated ones at the true values here).
    """

    confidence: float
    truth: np.ndarray
    half_widths: np.ndarray
    joint_half_width: float
    method: str
    definition: str
    dots: np.ndarray
    draws: int | None = None
    seed: int | None = None
    mc_error: float | None = None
    mechanism: NoiseMechanism | None = field(default=None, repr=False)
    samples: np.ndarray | None = field(default=None, repr=False)
    stated: Accuracy | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        """A short label for the ±: "exact", "exact + rounding" or "simulated (N draws, MC error ≈ x)"."""
        if self.method != "simulated":
            return self.method
        return f"simulated: {self.draws:,} seeded draws, Monte Carlo error ≈ {self.mc_error:.2g}"

    def relative_errors(self) -> np.ndarray:
        """a_i/|true_i| (∞ where the true value is 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.truth == 0, math.inf, self.half_widths / np.abs(self.truth))

    def chance_below(self, threshold: float) -> np.ndarray:
        """Pr[released_i < threshold] per value: exact, or the share of draws."""
        threshold = check.finite(threshold, "threshold")
        if self.mechanism is not None:
            return chance_below(self.mechanism, self.truth, threshold)
        assert self.samples is not None
        return np.mean(self.samples < threshold, axis=0)

    def chance_any_below(self, threshold: float, cells: npt.ArrayLike | None = None) -> float:
        """Pr[some released value among ``cells`` (a boolean mask; all by default) < threshold]."""
        mask = np.ones(self.truth.size, bool) if cells is None else np.asarray(cells, dtype=bool)
        if not mask.any():
            return 0.0
        if self.mechanism is not None:  # independent coordinates
            below = chance_below(self.mechanism, self.truth[mask], threshold)
            return max(0.0, float(-np.expm1(np.sum(np.log1p(-np.minimum(below, 1.0))))))
        assert self.samples is not None
        return float(np.mean(np.any(self.samples[:, mask] < threshold, axis=1)))

    def chance_of_crossing(self, threshold: float) -> np.ndarray:
        """The chance that the released value lands on the other side of ``threshold`` than the truth."""
        below = self.chance_below(threshold)
        return np.where(self.truth >= threshold, below, 1.0 - below)

    def possible_releases(self, n: int, rng: int = SIMULATION_SEED) -> np.ndarray:
        """n possible released vectors (for an animation): draws of the simulation, or fresh seeded
        numpy draws of the exact mechanism."""
        if self.samples is not None:
            return self.samples[:n].astype(float)
        assert self.mechanism is not None
        return np.asarray(self.mechanism.simulate(self.truth, n, rng=rng), dtype=float)


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


# ---- the ± of what will be published --------------------------------------------------------------------


def exact_accuracy(
    mechanism: NoiseMechanism, true_values: npt.ArrayLike, confidence: float = 0.95
) -> PreviewAccuracy:
    """The exact ± of one noisy answer per value, without post-processing: the ± a release of these
    values states (``dpdash.published.noise_accuracy``: exact for integer noise; for real answers exact
    for the noise on the release grid plus half a grid step), with the exact quantile dots."""
    truth = _answers(true_values)
    stated = noise_accuracy(mechanism, truth.size, confidence)
    assert stated is not None  # no post-processing: always exact
    return PreviewAccuracy(
        confidence=stated.confidence,
        truth=truth,
        half_widths=np.asarray(stated.half_widths, dtype=float),
        joint_half_width=float(stated.joint_half_width or 0.0),
        method="exact",
        definition=stated.definition,
        dots=quantile_dots(mechanism, truth),
        mechanism=mechanism,
        stated=stated,
    )


def simulated_accuracy(
    samples: npt.ArrayLike,
    true_values: npt.ArrayLike,
    confidence: float = 0.95,
    *,
    seed: int | None = SIMULATION_SEED,
    what: str = "",
    stated: Accuracy | None = None,
) -> PreviewAccuracy:
    """±a read off simulated releases (``dpdash.published.read_half_widths``: per value the ⌈cN⌉-th
    smallest |released_i − true_i| of the N draws, for all values at once the same order statistic of
    the largest error), with its Monte Carlo standard error. ``stated``: the accuracy a release states
    for these settings when it was computed apart (its numbers are then the ones shown)."""
    draws = np.asarray(samples, dtype=float)
    truth = _answers(true_values)
    c = check.open_unit(confidence, "confidence")
    widths = read_half_widths(draws, truth, c)
    levels = (np.arange(DOTS) + 0.5) / DOTS
    dots = np.quantile(draws, levels, axis=0, method="inverted_cdf").T
    k, n = truth.size, widths.draws
    if stated is None:
        definition = (
            f"simulated preview{what}: {c:.0%} of {n:,} possible releases (seeded numpy draws"
            + (f", seed {seed}" if seed is not None else "")
            + ", through the same calibration, combination and post-processing as the release) have each "
            "value within ±a of its true value"
            + (f", and all {k} at once within ±{widths.joint:.4g}" if k > 1 else "")
            + f"; Monte Carlo standard error of ±a ≈ {widths.mc_error:.2g} (95% interval "
            f"[{widths.low:.4g}, {widths.high:.4g}])"
        )
        each, joint, method = widths.each, widths.joint, "simulated"
    else:
        definition, method = stated.definition, "simulated" if stated.method == "simulated" else stated.method
        each = np.asarray(stated.half_widths, dtype=float)
        joint = float(stated.joint_half_width if stated.joint_half_width is not None else widths.joint)
    return PreviewAccuracy(
        confidence=c,
        truth=truth,
        half_widths=np.asarray(each, dtype=float),
        joint_half_width=float(joint),
        method=method,
        definition=definition,
        dots=dots,
        draws=n,
        seed=seed,
        mc_error=widths.mc_error if method == "simulated" else None,
        samples=draws,
        stated=stated,
    )


def preview_accuracy(
    query: Any,
    pieces: Sequence[Any],
    true_values: npt.ArrayLike,
    *,
    true_pieces: Mapping[str, npt.ArrayLike] | None = None,
    confidence: float = 0.95,
    postprocess: Sequence[str] = (),
    draws: int | None = None,
    seed: int = SIMULATION_SEED,
) -> PreviewAccuracy:
    """The ± ``release`` will publish for a numeric query, from its calibrated ``pieces``
    (``dpdash.release.calibrate``), by the one function that computes it
    (``dpdash.published.numeric_accuracy``): exact for one noisy answer per value (plus half a step per
    rounding), otherwise simulated with ``draws`` seeded draws (default ``simulation_draws(k)``), here at
    the true values (owner only; a release states the same function at its released pieces). With
    post-processing the dots and chances come from the simulation around the true values. The one helper
    the app's preview, release page and planner use.

    >>> import pandas as pd
    >>> from dpdash.queries import Mean
    >>> from dpdash.release import calibrate
    >>> df = pd.DataFrame({"age": [30, 40, 50, 60] * 100})
    >>> q = Mean(column="age", bounds=(0, 100))
    >>> e = q.evaluate(df)
    >>> acc = preview_accuracy(q, calibrate(q, "laplace", df, epsilon=1.0), e.values, true_pieces=e.pieces)
    >>> acc.method, acc.draws, 0.5 < float(acc.half_widths[0]) < 2.0
    ('simulated', 4000, True)
    """
    truth = _answers(true_values)
    steps = tuple(postprocess)
    parts = true_pieces if true_pieces is not None else {"answer": truth}
    stated, samples, _ = numeric_accuracy(
        query, pieces, parts, confidence=confidence, postprocess=steps,
        at="the true values (owner only)", draws=draws, seed=seed,
    )  # fmt: skip
    if samples is None and not steps:
        return exact_accuracy(pieces[0].mechanism, truth, confidence)
    if samples is None:  # exact ± with a rounding allowance: the dots from the simulation
        n = simulation_draws(truth.size) if draws is None else check.positive_int(draws, "draws")
        samples = simulate_releases(query, pieces, parts, postprocess=steps, draws=n, rng=seed)
    return simulated_accuracy(samples, truth, confidence, seed=seed, stated=stated)


# ---- selections (quantiles, mode): exact -------------------------------------------------------------


def selection_half_width(
    probabilities: npt.ArrayLike, candidates: npt.ArrayLike, truth: float, confidence: float = 0.95
) -> float:
    """Exact: the smallest a with Pr[|picked candidate − truth| ≤ a] ≥ c, from the selection
    mechanism's exact chances of each public candidate (a release states it around the best public
    candidate: ``dpdash.published.selection_accuracy``)."""
    from dpdash.published import _half_width

    c = check.open_unit(confidence, "confidence")
    errors = np.abs(np.asarray(candidates, dtype=float) - float(truth))
    return _half_width(np.asarray(probabilities, dtype=float), errors, c)


def selection_dots(probabilities: npt.ArrayLike, candidates: npt.ArrayLike, dots: int = DOTS) -> np.ndarray:
    """Quantile dots of the picked candidate: dot j is the smallest candidate whose cumulative chance
    reaches (j + ½)/dots."""
    p = np.asarray(probabilities, dtype=float)
    values = np.asarray(candidates, dtype=float)
    order = np.argsort(values)
    cdf = np.cumsum(p[order])
    cdf = cdf / cdf[-1]
    levels = (np.arange(check.positive_int(dots, "dots")) + 0.5) / dots
    index = np.minimum(np.searchsorted(cdf, levels), values.size - 1)
    return values[order][index]
