"""Report noisy max with exact discrete Laplace noise: selection probabilities against brute force, the DP
ratio (and why non-monotone scores need twice the noise), accuracy, and both samplers' laws."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpdash.errors import ParameterError
from dpdash.mechanisms import ReportNoisyMax
from tests.sampling.checks import P_MIN, chisquare_pmf


def brute_force(scores: list[int], scale: float, window: int = 40) -> np.ndarray:
    """Sum over every noise vector in a window: argmax with the lowest index on ties."""
    r = math.exp(-1.0 / scale)
    z = np.arange(-window, window + 1)
    pmf = (1 - r) / (1 + r) * r ** np.abs(z)
    grids = np.meshgrid(*([np.arange(z.size)] * len(scores)), indexing="ij")
    noisy = np.stack([s + z[g] for s, g in zip(scores, grids, strict=True)])
    weight = np.prod(np.stack([pmf[g] for g in grids]), axis=0)
    return np.bincount(np.argmax(noisy, axis=0).ravel(), weights=weight.ravel(), minlength=len(scores))


@pytest.mark.parametrize(("scores", "monotone"), [([10, 12, 11], True), ([0, 0, 1], False), ([5, 5], True)])
def test_probabilities_match_brute_force(scores: list[int], monotone: bool) -> None:
    rnm = ReportNoisyMax(epsilon=1.5, sensitivity=1, monotone=monotone)
    window = 40 if len(scores) == 3 else 200
    np.testing.assert_allclose(
        rnm.probabilities(scores), brute_force(scores, rnm.noise_scale, window), atol=1e-12
    )


def test_ties_go_to_the_lowest_index() -> None:
    p = ReportNoisyMax(epsilon=1.0).probabilities([3, 3])
    assert p[0] > p[1] and p.sum() == pytest.approx(1.0)


def test_noise_scale() -> None:
    assert ReportNoisyMax(epsilon=0.5, sensitivity=3).noise_scale == 6.0
    assert ReportNoisyMax(epsilon=0.5, sensitivity=3, monotone=False).noise_scale == 12.0


def test_dp_ratio_for_monotone_counts_and_the_factor_two_otherwise() -> None:
    eps = 1.0
    monotone = ReportNoisyMax(epsilon=eps, sensitivity=1, monotone=True)
    general = ReportNoisyMax(epsilon=eps, sensitivity=1, monotone=False)
    worst_monotone = worst_general = worst_misused = 0.0
    for u in itertools.product(range(4), repeat=3):
        p_mono, p_gen = monotone.probabilities(u), general.probabilities(u)
        for shift in itertools.product((-1, 0, 1), repeat=3):
            v = np.add(u, shift)
            ratio_gen = np.max(np.abs(np.log(p_gen / general.probabilities(v))))
            ratio_mono = np.max(np.abs(np.log(p_mono / monotone.probabilities(v))))
            worst_general = max(worst_general, ratio_gen)
            if all(s >= 0 for s in shift) or all(s <= 0 for s in shift):
                worst_monotone = max(worst_monotone, ratio_mono)
            else:
                worst_misused = max(worst_misused, ratio_mono)
    assert worst_monotone <= eps * (1 + 1e-9)
    assert worst_general <= eps * (1 + 1e-9)
    assert worst_misused > eps  # the monotone scale is not enough when scores move both ways


def test_utility_gap_holds_exactly() -> None:
    scores = list(range(0, 60, 3))
    rnm = ReportNoisyMax(epsilon=0.5, sensitivity=1)
    gap = rnm.utility_gap(0.9, len(scores))
    p = rnm.probabilities(scores)
    assert p[np.array(scores) >= max(scores) - gap].sum() >= 0.9


def test_simulation_follows_the_exact_probabilities() -> None:
    rnm = ReportNoisyMax(epsilon=0.7, sensitivity=1)
    scores = [4, 6, 5, 6]
    draws = rnm.simulate(scores, 60_000, rng=3)
    pvalue, _ = chisquare_pmf(draws, np.arange(4), rnm.probabilities(scores))
    assert pvalue > 1e-3  # seeded: a fixed outcome, kept far from the threshold


def test_release_grade_draws_follow_the_exact_probabilities() -> None:
    rnm = ReportNoisyMax(epsilon=0.7, sensitivity=2, monotone=False)
    scores = [4, 6, 5, 6]
    draws = np.array([rnm.release(scores) for _ in range(5000)])
    pvalue, _ = chisquare_pmf(draws, np.arange(4), rnm.probabilities(scores))
    assert pvalue > P_MIN


def test_integer_scores_and_sensitivity_are_required() -> None:
    with pytest.raises(ParameterError, match=r"utilities must be integers \(counts\)"):
        ReportNoisyMax(epsilon=1.0).release([1.5, 2.0])
    with pytest.raises(ParameterError, match=r"sensitivity must be an integer >= 1"):
        ReportNoisyMax(epsilon=1.0, sensitivity=1.5)
    assert ReportNoisyMax(epsilon=1.0).release([2.0, 9.0, 1.0]) in (0, 1, 2)  # integral floats are fine
