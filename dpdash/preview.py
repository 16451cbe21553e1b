"""What a release could look like, before it is made (nothing is released, no budget is spent).

A preview answers the data owner's questions before any budget is spent: where would the noisy value
land (a quantile dotplot: Kay et al. 2016, used for DP releases by the ViP interface, PETS 2022), how far
from the truth (±a at a confidence, and relative error), how likely is a noisy count to go negative, or
to land on the other side of a threshold that matters.

Two kinds of numbers, always labelled (``PreviewAccuracy.method``):

- **exact**, where a closed form exists: one noisy answer per value and no post-processing (the
  mechanisms' exact half-widths, ``dpdash.accuracy``), and selections (quantiles: the exact chance of
  each public candidate);
- **simulated**, for everything computed from noisy pieces or post-processed (a mean = noisy sum /
  noisy count, a variance, rounding, clamping): ``preview_accuracy`` draws ``SIMULATION_DRAWS`` possible
  releases with the fast numpy sampler (``NoiseMechanism.simulate``, seeded with
  ``SIMULATION_SEED``), through the same calibration (``dpdash.release.calibrate``), the same
  combination and the same post-processing code (``dpdash.release.postprocess_values``) as the
  release, and reads ±a off the draws, with its Monte Carlo standard error.
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
#: Possible releases a simulated preview draws (fewer when there are many values: at most
#: ``_SIMULATION_NUMBERS`` numbers in all, and never fewer than ``_SIMULATION_MIN_DRAWS`` draws).
SIMULATION_DRAWS = 4_000
SIMULATION_SEED = 20261122
_SIMULATION_NUMBERS = 2_000_000
_SIMULATION_MIN_DRAWS = 400
#: z of the two-sided 95% normal interval, for the Monte Carlo error of a simulated half-width.
_Z95 = 1.959963984540054


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
        method: ``"exact"`` or ``"simulated"``.
        definition: what the numbers mean, in words (the confidence, exact or simulated with N seeded
            draws and the Monte Carlo standard error).
        dots: (k, DOTS) possible released values, each dot 1/DOTS of the probability.
        draws, seed, mc_error: simulated only: the number of draws, the seed, and the Monte Carlo
            standard error of ``joint_half_width`` (from the distribution-free 95% interval of a
            quantile estimated by order statistics: half its width / 1.96).
        mechanism: exact only: the mechanism whose noise law gives the chances.
        samples: simulated only: the (draws, k) possible released values.
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

    @property
    def label(self) -> str:
        """A short label for the ±: "exact" or "simulated (N draws, MC error ≈ x)"."""
        if self.method == "exact":
            return "exact"
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
    """The exact ± of one noisy answer per value, without post-processing: the half-width of the noise
    ``release()`` adds (``release_accuracy``: exact for integer noise; for real answers exact for the
    noise on the release grid plus half a grid step)."""
    truth = _answers(true_values)
    c = check.open_unit(confidence, "confidence")
    k = truth.size
    each = float(mechanism.release_accuracy(c, 1))
    joint = float(mechanism.release_accuracy(c, k))
    definition = (
        f"exact: each value is within ±a of its true value with probability {c:.0%}"
        + (f", and all {k} at once within ±{joint:.4g}" if k > 1 else "")
        + f" ({mechanism.name}, scale {mechanism.scale:.4g}"
        + ("" if mechanism.integer_valued else "; includes half a step of the release grid")
        + ")"
    )
    return PreviewAccuracy(
        confidence=c,
        truth=truth,
        half_widths=np.full(k, each),
        joint_half_width=joint,
        method="exact",
        definition=definition,
        dots=quantile_dots(mechanism, truth),
        mechanism=mechanism,
    )


def simulation_draws(k: int) -> int:
    """The number of draws a simulated preview of k values uses: ``SIMULATION_DRAWS``, fewer for
    very many values (memory), never fewer than 400."""
    return max(_SIMULATION_MIN_DRAWS, min(SIMULATION_DRAWS, _SIMULATION_NUMBERS // max(k, 1)))


def simulate_releases(
    query: Any,
    pieces: Sequence[Any],
    true_pieces: Mapping[str, npt.ArrayLike],
    *,
    postprocess: Sequence[str] = (),
    draws: int = SIMULATION_DRAWS,
    rng: np.random.Generator | int = SIMULATION_SEED,
) -> np.ndarray:
    """``draws`` possible published answers, shape (draws, k): each calibrated piece
    (``dpdash.release.calibrate``) drawn with the fast numpy sampler around its true value, combined
    as the query combines them (a mean: centre + noisy centred sum / max(noisy count, 1)), then
    post-processed with ``dpdash.release.postprocess_values``. For previews only, never published.

    ``true_pieces`` maps each piece's name to its true values (``{"answer": values}`` for a query of
    one piece; ``Evaluation.pieces`` for a composite query).
    """
    from dpdash.queries import CompositeQuery
    from dpdash.release import postprocess_values

    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    n = check.positive_int(draws, "draws")
    noisy = {}
    for piece in pieces:
        truth = np.atleast_1d(np.asarray(true_pieces[piece.name]))
        noisy[piece.name] = np.asarray(piece.mechanism.simulate(truth, n, rng=generator), dtype=float)
    if isinstance(query, CompositeQuery):
        values = np.asarray(query.combine(noisy), dtype=float)
    else:
        values = noisy["answer"]
    if postprocess:
        values = postprocess_values(postprocess, query, values)
    return values.reshape(n, -1)


def _order_statistic(sorted_values: np.ndarray, rank: float) -> np.ndarray:
    """The value at 1-based ``rank`` (clipped to 1..N) along axis 0 of sorted draws."""
    n = sorted_values.shape[0]
    index = int(min(max(math.ceil(rank), 1), n)) - 1
    return sorted_values[index]


def simulated_accuracy(
    samples: npt.ArrayLike,
    true_values: npt.ArrayLike,
    confidence: float = 0.95,
    *,
    seed: int | None = SIMULATION_SEED,
    what: str = "",
) -> PreviewAccuracy:
    """±a read off simulated releases: per value the ⌈cN⌉-th smallest |released_i − true_i| of the N
    draws, for all values at once the same order statistic of max_i |released_i − true_i|. Its Monte
    Carlo standard error is (hi − lo)/(2·1.96), where [lo, hi] are the order statistics of ranks
    cN ∓ 1.96·√(N·c·(1 − c)): a distribution-free 95% interval for the true quantile (the rank of the
    true quantile among the draws is Binomial(N, c))."""
    draws = np.asarray(samples, dtype=float)
    truth = _answers(true_values)
    if draws.ndim != 2 or draws.shape[1] != truth.size:
        raise ParameterError(f"samples must have shape (draws, {truth.size}), got {draws.shape}")
    c = check.open_unit(confidence, "confidence")
    n = draws.shape[0]
    errors = np.sort(np.abs(draws - truth[None, :]), axis=0)
    each = _order_statistic(errors, c * n)
    joint_errors = np.sort(np.max(np.abs(draws - truth[None, :]), axis=1))
    joint = float(_order_statistic(joint_errors, c * n))
    spread = _Z95 * math.sqrt(n * c * (1.0 - c))
    low = float(_order_statistic(joint_errors, c * n - spread))
    high = float(_order_statistic(joint_errors, c * n + spread))
    mc_error = (high - low) / (2.0 * _Z95)
    levels = (np.arange(DOTS) + 0.5) / DOTS
    dots = np.quantile(draws, levels, axis=0, method="inverted_cdf").T
    k = truth.size
    definition = (
        f"simulated preview{what}: {c:.0%} of {n:,} possible releases (seeded numpy draws"
        + (f", seed {seed}" if seed is not None else "")
        + ", through the same calibration, combination and post-processing as the release) have each "
        "value within ±a of its true value"
        + (f", and all {k} at once within ±{joint:.4g}" if k > 1 else "")
        + f"; Monte Carlo standard error of ±a ≈ {mc_error:.2g} (95% interval [{low:.4g}, {high:.4g}])"
    )
    return PreviewAccuracy(
        confidence=c,
        truth=truth,
        half_widths=np.asarray(each, dtype=float),
        joint_half_width=joint,
        method="simulated",
        definition=definition,
        dots=dots,
        draws=n,
        seed=seed,
        mc_error=mc_error,
        samples=draws,
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
    """The ± of what ``release`` will publish for a numeric query, from its calibrated ``pieces``
    (``dpdash.release.calibrate``): exact for one noisy answer per value and no post-processing,
    otherwise simulated (``simulate_releases``, ``simulated_accuracy``) with ``draws`` seeded draws
    (default ``simulation_draws(k)``). The one helper the app's preview, release page and planner use.

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
    if len(pieces) == 1 and pieces[0].name == "answer" and not steps:
        return exact_accuracy(pieces[0].mechanism, truth, confidence)
    parts = true_pieces if true_pieces is not None else {"answer": truth}
    n = simulation_draws(truth.size) if draws is None else check.positive_int(draws, "draws")
    samples = simulate_releases(query, pieces, parts, postprocess=steps, draws=n, rng=seed)
    what = ""
    if steps:
        from dpdash.release import describe_postprocessing

        what = (
            " of the post-processed values ("
            + "; then ".join(describe_postprocessing(s) for s in steps)
            + ")"
        )
    return simulated_accuracy(samples, truth, confidence, seed=seed, what=what)


# ---- selections (quantiles, mode): exact -------------------------------------------------------------


def selection_half_width(
    probabilities: npt.ArrayLike, candidates: npt.ArrayLike, truth: float, confidence: float = 0.95
) -> float:
    """Exact: the smallest a with Pr[|picked candidate − truth| ≤ a] ≥ c, from the selection
    mechanism's exact chances of each public candidate."""
    p = np.asarray(probabilities, dtype=float)
    values = np.asarray(candidates, dtype=float)
    c = check.open_unit(confidence, "confidence")
    errors = np.abs(values - float(truth))
    order = np.argsort(errors, kind="stable")
    covered = np.cumsum(p[order])
    index = int(np.searchsorted(covered, c * (1 - 1e-12) * covered[-1]))
    return float(errors[order][min(index, values.size - 1)])


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
