"""Clopper–Pearson bounds and the ε lower bound, against scipy's exact binomial intervals and by
coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpdash.audit import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_bounds,
    epsilon_lower_bound,
)


@pytest.mark.parametrize(
    ("x", "n"), [(0, 10), (1, 10), (5, 10), (10, 10), (37, 1000), (999, 1000), (0, 10**6)]
)
@pytest.mark.parametrize("alpha", [0.005, 0.05])
def test_one_sided_bounds_match_scipy_exact_intervals(x: int, n: int, alpha: float) -> None:
    # An independent computation: scipy's binomtest, exact (Clopper–Pearson) one-sided intervals.
    low = stats.binomtest(x, n, alternative="greater").proportion_ci(1 - alpha, method="exact").low
    high = stats.binomtest(x, n, alternative="less").proportion_ci(1 - alpha, method="exact").high
    assert float(clopper_pearson_lower(x, n, alpha)) == pytest.approx(
        low, rel=1e-7
    )  # scipy solves for the root to ~1e-8
    assert float(clopper_pearson_upper(x, n, alpha)) == pytest.approx(
        high, rel=1e-7
    )  # scipy solves for the root to ~1e-8


def test_closed_forms_at_the_edges() -> None:
    # x = n: the lower bound is α^(1/n); x = 0: the upper bound is 1 − α^(1/n).
    n, alpha = 500, 0.01
    assert float(clopper_pearson_lower(n, n, alpha)) == pytest.approx(alpha ** (1 / n), rel=1e-12)
    assert float(clopper_pearson_upper(0, n, alpha)) == pytest.approx(1 - alpha ** (1 / n), rel=1e-12)
    bound = float(epsilon_lower_bound(n, n, 0, n, confidence=0.99))
    assert bound == pytest.approx(math.log(0.005 ** (1 / n) / (1 - 0.005 ** (1 / n))), rel=1e-12)


def test_the_lower_bound_is_the_log_ratio_of_the_two_bounds_minus_delta() -> None:
    p_low = float(clopper_pearson_lower(600, 1000, 0.005))
    q_high = float(clopper_pearson_upper(200, 1000, 0.005))
    assert float(epsilon_lower_bound(600, 1000, 200, 1000, delta=0.01, confidence=0.99)) == pytest.approx(
        math.log((p_low - 0.01) / q_high), rel=1e-12
    )
    # no evidence when p̲ ≤ δ
    assert float(epsilon_lower_bound(5, 1000, 1, 1000, delta=0.5)) == -math.inf


def test_bounds_of_one_event_bracket_the_estimate() -> None:
    lower, estimate, upper = epsilon_bounds(600, 1000, 200, 1000, delta=0.0, confidence=0.99)
    assert estimate == pytest.approx(math.log(3.0))
    assert lower < estimate < upper
    assert epsilon_bounds(10, 100, 0, 100, delta=0.0, confidence=0.99)[1:] == (math.inf, math.inf)


def test_the_epsilon_lower_bound_covers_at_its_confidence() -> None:
    # Seeded binomial draws with a true log ratio of exactly 1 (p = e·q): the 90% bound must exceed 1
    # in at most 10% of 20 000 repetitions; it is conservative (Clopper–Pearson and Bonferroni), so we
    # allow up to 10% + 4 standard errors and check it is not vacuous (median bound > 0.5).
    rng = np.random.default_rng(20261123)
    q = 0.1
    p = math.e * q
    reps, n = 20_000, 2_000
    x = rng.binomial(n, p, reps)
    y = rng.binomial(n, q, reps)
    bounds = epsilon_lower_bound(x, n, y, n, confidence=0.9)
    exceed = float(np.mean(bounds > 1.0))
    assert exceed <= 0.10 + 4 * math.sqrt(0.1 * 0.9 / reps)
    assert float(np.median(bounds)) > 0.5
