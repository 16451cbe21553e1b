"""Goodness of fit of the exact samplers against their exact distributions.

OS randomness cannot be seeded, so every test uses a large sample and fails only below a p-value of
``P_MIN = 1e-6`` (see ``tests/sampling/checks.py``); frequency tests allow 5 standard errors
(two-sided false-alarm probability 6·10^−7 each). The oracles are floating-point pmfs (scipy's
``dlaplace``; a directly normalised sum for the discrete Gaussian), which is fine for a test oracle.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpdash.sampling import (
    bernoulli,
    bernoulli_exp,
    discrete_gaussian,
    discrete_laplace,
    reference,
    uniform_integers,
)
from dpdash.sampling.geometric import sample_geometric
from tests.sampling.checks import (
    P_MIN,
    chisquare_cdf,
    chisquare_pmf,
    chisquare_two_sample,
    discrete_gaussian_pmf,
    within_standard_errors,
)

N = 2_000_000  # draws per goodness-of-fit test (≥ 10^6 as required)
SCALES = [0.7, 1, Fraction(7, 2), 10, 1000]  # 0.7 is the float, i.e. its exact binary value


@pytest.mark.parametrize("scale", SCALES, ids=str)
def test_discrete_laplace_fits_its_pmf(scale) -> None:
    b = float(scale)
    half = math.ceil(40 * b) + 40  # P(|X| > half) < e^−40
    values = np.arange(-half, half + 1)
    probs = stats.dlaplace.pmf(values, 1 / b)
    x = discrete_laplace(scale, N)
    assert x.dtype == np.int64 and x.shape == (N,)
    pvalue, bins = chisquare_pmf(x, values, probs)
    assert bins > 5
    assert pvalue > P_MIN, f"scale={scale}: p={pvalue:.2e} over {bins} bins"


@pytest.mark.parametrize("sigma", SCALES, ids=str)
def test_discrete_gaussian_fits_its_pmf(sigma) -> None:
    s2 = float(sigma) ** 2
    values, probs = discrete_gaussian_pmf(s2, math.ceil(12 * float(sigma)) + 12)
    x = discrete_gaussian(sigma, N)
    assert x.dtype == np.int64 and x.shape == (N,)
    pvalue, bins = chisquare_pmf(x, values, probs)
    assert bins > 3
    assert pvalue > P_MIN, f"sigma={sigma}: p={pvalue:.2e} over {bins} bins"


def test_discrete_gaussian_with_an_irrational_sigma() -> None:
    values, probs = discrete_gaussian_pmf(2.0, 40)  # σ = √2, given as σ² = 2
    x = discrete_gaussian(sigma_squared=2, size=N)
    pvalue, _ = chisquare_pmf(x, values, probs)
    assert pvalue > P_MIN


# Large scales go through other code paths: mixed-radix geometric digits for scale > 4096, and
# bracketed acceptance tables for σ > 5461. Binned by quantiles; 10^6 draws each.


@pytest.mark.parametrize("scale", [5000, 10**6, 2**40], ids=str)
def test_discrete_laplace_large_scales(scale: int) -> None:
    a = 1 / scale
    quantiles = stats.laplace.ppf(np.linspace(0.01, 0.99, 99), scale=scale)
    x = discrete_laplace(scale, 1_000_000)
    pvalue, _ = chisquare_cdf(
        x, np.floor(quantiles).astype(np.int64), lambda k: stats.dlaplace.cdf(k, a)
    )
    assert pvalue > P_MIN


@pytest.mark.parametrize("sigma", [5000, 10**6], ids=str)
def test_discrete_gaussian_large_scales(sigma: int) -> None:
    # For σ ≥ 5000 the discrete Gaussian CDF is Φ((k + 1/2)/σ) up to the midpoint rule's error,
    # O(σ^−3) ≈ 10^−11 here, far below what 10^6 draws can detect.
    quantiles = stats.norm.ppf(np.linspace(0.01, 0.99, 99), scale=sigma)
    x = discrete_gaussian(sigma, 1_000_000)
    edges = np.floor(quantiles).astype(np.int64)
    pvalue, _ = chisquare_cdf(x, edges, lambda k: stats.norm.cdf((k + 0.5) / sigma))
    assert pvalue > P_MIN


@pytest.mark.parametrize("scale", [Fraction(7, 2), Fraction(100_000)], ids=str)
def test_geometric_fits_its_pmf(scale: Fraction) -> None:
    r = math.exp(-1 / float(scale))
    edges = np.unique(
        np.floor(stats.geom.ppf(np.linspace(0.01, 0.99, 99), 1 - r)).astype(np.int64) - 1
    )
    g = sample_geometric(scale, 1_000_000)
    assert g.min() >= 0
    pvalue, _ = chisquare_cdf(g, edges, lambda k: 1 - r ** (k + 1.0))  # P(G ≤ k) = 1 − r^(k+1)
    assert pvalue > P_MIN


def test_the_goodness_of_fit_check_has_power() -> None:
    # the same check rejects a sampler whose scale is 2% off
    half = 440
    values = np.arange(-half, half + 1)
    pvalue, _ = chisquare_pmf(discrete_laplace(10, N), values, stats.dlaplace.pmf(values, 1 / 10.2))
    assert pvalue < P_MIN


# --- Bernoulli trials and uniform integers ----------------------------------------------------


@pytest.mark.parametrize(
    "p", [0, 1, Fraction(1, 3), Fraction(1, 2), 0.999, 1e-3, Fraction(1, 10**6)], ids=str
)
def test_bernoulli_frequency(p) -> None:
    x = bernoulli(p, 1_000_000)
    assert set(np.unique(x).tolist()) <= {0, 1}
    assert within_standard_errors(int(x.sum()), x.size, float(p))


@pytest.mark.parametrize("gamma", [0, 0.5, 1, 2.3, 7, Fraction(1, 10**9)], ids=str)
def test_bernoulli_exp_frequency(gamma) -> None:
    x = bernoulli_exp(gamma, 1_000_000)
    assert within_standard_errors(int(x.sum()), x.size, math.exp(-float(gamma)))


def test_bernoulli_exp_of_a_huge_gamma_is_zero() -> None:
    assert bernoulli_exp(10**6, 10_000).sum() == 0  # P(1) = e^−1000000


@pytest.mark.parametrize("upper", [2, 6, 1000])
def test_uniform_integers_are_uniform(upper: int) -> None:
    x = uniform_integers(upper, 600 * upper if upper > 6 else 600_000)
    assert x.min() >= 0 and x.max() < upper
    counts = np.bincount(x, minlength=upper)
    assert stats.chisquare(counts).pvalue > P_MIN


def test_uniform_integers_above_two_to_the_forty() -> None:
    upper = 2**40 + 3
    x = uniform_integers(upper, 1_000_000)
    assert x.min() >= 0 and x.max() < upper
    edges = np.array([upper * k // 64 for k in range(1, 64)])  # bucket k: [edge_(k−1), edge_k)
    counts = np.bincount(np.searchsorted(edges, x, side="right"), minlength=64)
    sizes = np.diff(np.concatenate([[0], edges, [upper]]))
    assert stats.chisquare(counts, x.size * sizes / upper).pvalue > P_MIN


def test_uniform_integers_at_the_int64_limit() -> None:
    x = uniform_integers(2**63, 100_000)
    assert x.min() >= 0
    assert within_standard_errors(int((x >= 2**62).sum()), x.size, 0.5)
    assert uniform_integers(1, 5).tolist() == [0, 0, 0, 0, 0]


# --- the fast samplers agree with the reference (CKS Algorithms 1–3 in plain Python) -----------

REFERENCE_DRAWS = 12_000


@pytest.mark.parametrize("scale", [Fraction(7, 2), 0.7], ids=str)
def test_discrete_laplace_agrees_with_reference(scale) -> None:
    ref = np.array([reference.discrete_laplace(Fraction(scale)) for _ in range(REFERENCE_DRAWS)])
    assert chisquare_two_sample(ref, discrete_laplace(scale, 1_000_000)) > P_MIN


@pytest.mark.parametrize("sigma_squared", [Fraction(9, 4), Fraction(2)], ids=str)
def test_discrete_gaussian_agrees_with_reference(sigma_squared: Fraction) -> None:
    ref = np.array([reference.discrete_gaussian(sigma_squared) for _ in range(REFERENCE_DRAWS)])
    fast = discrete_gaussian(sigma_squared=sigma_squared, size=1_000_000)
    assert chisquare_two_sample(ref, fast) > P_MIN


def test_reference_bernoulli_exp_frequency() -> None:
    gamma = Fraction(23, 10)
    hits = sum(reference.bernoulli_exp(gamma) for _ in range(20_000))
    assert within_standard_errors(hits, 20_000, math.exp(-2.3))
    assert reference.bernoulli_exp(0) == 1
