"""Randomized response: MATH.md's check value, the estimator's unbiasedness and variance (seeded
simulation), the exact accuracy, the privacy profile, and the release-grade sampler's law."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpdash.errors import ParameterError
from dpdash.mechanisms import RandomizedResponse
from dpdash.mechanisms.randomized_response import _replace_bounds
from tests.sampling.checks import P_MIN


def test_the_check_value_of_math_md() -> None:
    rr = RandomizedResponse(epsilon=1.0)
    assert rr.keep_probability == pytest.approx(0.731059, abs=5e-7)
    assert rr.estimator_variance(share=0.5, n=1000) == pytest.approx(0.0011707, abs=5e-8)
    p = rr.keep_probability
    assert rr.estimator_variance(share=0.5, n=1000) == pytest.approx(0.25 / (1000 * (2 * p - 1) ** 2))


@pytest.mark.parametrize("k", [2, 3, 6])
def test_the_transition_matrix_has_ratio_e_to_the_epsilon(k: int) -> None:
    rr = RandomizedResponse(epsilon=0.9, categories=k)
    t = rr.transition_matrix()
    np.testing.assert_allclose(t.sum(axis=1), 1.0)
    assert t.max() / t.min() == pytest.approx(math.exp(0.9))
    assert rr.privacy_profile([0.9, 2.0]).tolist() == [0.0, 0.0]
    assert rr.privacy_profile([0.0])[0] == pytest.approx(rr.keep_probability - rr.other_probability)


@pytest.mark.parametrize(("k", "shares"), [(2, [0.3, 0.7]), (4, [0.1, 0.2, 0.0, 0.7])])
def test_the_estimator_is_unbiased_within_its_stated_variance_on_a_fixed_table(
    k: int, shares: list[float]
) -> None:
    """Seeded simulation: 4000 runs of the mechanism on one table of n = 500; the mean of π̂ is within
    4 standard errors of π and the sample variance within the 99.99% chi-square interval of the
    fixed-table variance."""
    rng = np.random.default_rng(2024)
    rr = RandomizedResponse(epsilon=1.0, categories=k)
    n, runs = 500, 4000
    counts = np.round(np.array(shares) * n).astype(int)
    reports = rr.simulate(np.repeat(np.arange(k), counts), runs, rng=rng)
    estimates = np.array([rr.estimate_from_counts(np.bincount(r, minlength=k)) for r in reports])  # (runs, k)
    np.testing.assert_array_equal(rr.estimate(reports[0]), estimates[0])  # what estimate() does per report
    low, high = stats.chi2.ppf([5e-5, 1 - 5e-5], runs - 1) / (runs - 1)
    for v in range(k):
        pi = counts[v] / n
        variance = rr.estimator_variance(share=pi, n=n, fixed=True)
        assert abs(estimates[:, v].mean() - pi) <= 4 * math.sqrt(variance / runs)
        assert low <= estimates[:, v].var(ddof=1) / variance <= high


def test_the_estimator_is_unbiased_within_math_md_variance_for_sampled_respondents() -> None:
    """Seeded simulation: 4000 surveys of n = 1000 respondents drawn with share π = 0.5 (MATH.md's
    setting, variance 0.0011707 at ε = 1)."""
    rng = np.random.default_rng(99)
    rr = RandomizedResponse(epsilon=1.0)
    n, surveys, pi = 1000, 4000, 0.5
    # Every respondent is drawn and reports on their own: all surveys' respondents in one vector.
    reports = rr.simulate(rng.random(surveys * n) < pi, 1, rng=rng)[0].reshape(surveys, n)
    estimates = np.array([rr.estimate_from_counts(np.bincount(r, minlength=2))[1] for r in reports])
    variance = rr.estimator_variance(share=pi, n=n)
    assert abs(estimates.mean() - pi) <= 4 * math.sqrt(variance / surveys)
    low, high = stats.chi2.ppf([5e-5, 1 - 5e-5], surveys - 1) / (surveys - 1)
    assert low <= estimates.var(ddof=1) / variance <= high


def test_the_accuracy_is_the_exact_binomial_half_width() -> None:
    rr = RandomizedResponse(epsilon=0.5)
    n, share, confidence = 300, 0.2, 0.9
    a = rr.accuracy(n=n, confidence=confidence, share=share)
    y = rr.observed_share(share)
    scale = n * (rr.keep_probability - rr.other_probability)
    counts = np.arange(n + 1)
    pmf = stats.binom.pmf(counts, n, y)
    within = np.abs(counts - n * y) <= a * scale + 1e-9
    assert pmf[within].sum() >= confidence
    narrower = np.abs(counts - n * y) < a * scale - 1e-9
    assert pmf[narrower].sum() < confidence
    assert rr.accuracy(n=n, confidence=confidence) >= a  # the largest over the shares


def test_the_binomial_half_width_is_conservative_for_a_fixed_table() -> None:
    """Hoeffding (1956): the fixed-table report count Bin(m, p) + Bin(n − m, q) is at least as likely to
    fall in the stated interval, checked exactly by convolution."""
    rr = RandomizedResponse(epsilon=0.7)
    n, confidence = 200, 0.95
    a = rr.accuracy(n=n, confidence=confidence)
    p, q = rr.keep_probability, rr.other_probability
    for m in (0, 37, 100, 200):
        pmf = np.convolve(
            stats.binom.pmf(np.arange(m + 1), m, p), stats.binom.pmf(np.arange(n - m + 1), n - m, q)
        )
        mean = m * p + (n - m) * q
        within = np.abs(np.arange(n + 1) - mean) <= a * n * (p - q) + 1e-9
        assert pmf[within].sum() >= confidence


def test_the_replacement_threshold_is_bounded_exactly() -> None:
    for eps, k in [(Fraction(1), 2), (Fraction(1, 3), 5), (Fraction(12), 2)]:
        lo, hi = _replace_bounds(eps, k, 96)
        t = (k - 1) * math.exp(-eps) / (1 + (k - 1) * math.exp(-eps))
        assert lo / 2**96 <= t * (1 + 1e-15) and hi / 2**96 >= t * (1 - 1e-15)
        assert hi - lo <= 4


@pytest.mark.parametrize(("epsilon", "k"), [(1.0, 2), (0.4, 4)])
def test_release_grade_reports_follow_the_transition_matrix(epsilon: float, k: int) -> None:
    rr = RandomizedResponse(epsilon=epsilon, categories=k)
    truth = 1
    reports = rr.release(np.full(40_000, truth))
    observed = np.bincount(reports, minlength=k)
    expected = rr.transition_matrix()[truth] * reports.size
    assert stats.chisquare(observed, expected).pvalue > P_MIN


def test_release_keeps_the_shape_and_refuses_bad_values() -> None:
    rr = RandomizedResponse(epsilon=1.0, categories=3)
    assert rr.release([[0, 1], [2, 2]]).shape == (2, 2)
    with pytest.raises(ParameterError, match=r"values must be category indices 0 … 2"):
        rr.release([0, 3])
    with pytest.raises(ParameterError, match=r"values must be category indices"):
        rr.release([0.5])
    with pytest.raises(ParameterError, match=r"categories must be an integer >= 2"):
        RandomizedResponse(epsilon=1.0, categories=1)
    with pytest.raises(ParameterError, match="counts must hold at least one report"):
        rr.estimate_from_counts([0, 0, 0])
