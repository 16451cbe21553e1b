"""Each mechanism against its closed forms, published values and scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from dpdash import accuracy
from dpdash.mechanisms import (
    DiscreteGaussian,
    DiscreteGaussianNoise,
    Gaussian,
    Geometric,
    Laplace,
    Staircase,
    StaircaseNoise,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    discrete_gaussian_delta,
    gaussian_delta,
    optimal_gamma,
)

# ---- Laplace --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("epsilon", "sensitivity"), [(1.0, 1.0), (0.01, 1.0), (2.0, 5.0), (10.0, 0.5)])
def test_laplace_closed_forms(epsilon: float, sensitivity: float) -> None:
    m = Laplace(epsilon=epsilon, sensitivity=sensitivity)
    b = sensitivity / epsilon
    assert m.scale == pytest.approx(b, rel=1e-15)
    assert m.variance == pytest.approx(2 * b * b, rel=1e-15)
    assert m.std == pytest.approx(math.sqrt(2) * b, rel=1e-15)
    for t in [0.5, 1.0, 3.0]:
        assert m.tail(t * b) == pytest.approx(math.exp(-t), rel=1e-13)  # Pr[|Y| ≥ t·b] = e^−t
    # One answer within b·ln(1/β) w.p. 1 − β; k answers exactly: −b·ln(1 − c^(1/k)).
    assert m.accuracy(0.95) == pytest.approx(b * math.log(20), rel=1e-13)
    assert m.accuracy(0.9, 50) == pytest.approx(-b * math.log(1 - 0.9 ** (1 / 50)), rel=1e-10)
    assert m.accuracy_union_bound(0.9, 50) == pytest.approx(b * math.log(50 / 0.1), rel=1e-13)
    np.testing.assert_allclose(m.noise.var(), stats.laplace(scale=b).var(), rtol=1e-15)
    eps = np.array([0.0, epsilon / 2, epsilon, 2 * epsilon])
    expected = np.maximum(0.0, 1 - np.exp((eps - epsilon) / 2))
    np.testing.assert_allclose(m.privacy_profile(eps), expected, rtol=1e-13, atol=1e-300)


def test_textbook_worked_example_10000_counts() -> None:
    """Dwork & Roth Thm 3.8's example: 10 000 counts at ε = 1, 95%: ln(10 000/0.05) ≈ 12.2; the exact
    simultaneous half-width −ln(1 − 0.95^(1/10 000)) ≈ 12.18 is a little tighter."""
    m = Laplace(epsilon=1.0, sensitivity=1.0)
    union = m.accuracy_union_bound(confidence=0.95, k=10_000)
    exact = m.accuracy(confidence=0.95, k=10_000)
    assert union == pytest.approx(math.log(10_000 / 0.05), rel=1e-13)
    assert round(union, 1) == 12.2
    assert exact == pytest.approx(-math.log(-math.expm1(math.log(0.95) / 10_000)), rel=1e-13)
    assert round(exact, 2) == 12.18
    assert exact < union


def test_laplace_for_accuracy_closed_form() -> None:
    m = Laplace.for_accuracy(alpha=3.0, confidence=0.95, sensitivity=1.0)
    assert m.epsilon == pytest.approx(math.log(20) / 3.0, rel=1e-15)
    assert m.accuracy(0.95) <= 3.0


# ---- Gaussian -------------------------------------------------------------------------------------


def test_classic_gaussian_formula_and_ux_gap_against_laplace() -> None:
    """σ = Δ√(2 ln(1.25/δ))/ε. Near ε = 1, Δ = 1, δ = 1e-6 a classic-Gaussian count's 95% half-width
    is about 10.4, against 3.0 for Laplace (UX.md, feature 3)."""
    g = Gaussian(epsilon=0.999, delta=1e-6, sensitivity=1.0, calibration="classic")
    assert g.scale == pytest.approx(math.sqrt(2 * math.log(1.25e6)) / 0.999, rel=1e-15)
    assert g.accuracy(0.95) == pytest.approx(1.959963984540054 * g.scale, rel=1e-12)
    assert round(g.accuracy(0.95), 1) == 10.4
    assert round(Laplace(epsilon=1.0, sensitivity=1.0).accuracy(0.95), 1) == 3.0


def test_classic_gaussian_refuses_epsilon_of_one_or_more() -> None:
    with pytest.raises(ValueError, match=r"must be < 1 .* got epsilon=1.0; use calibration='analytic'"):
        Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, calibration="classic")
    with pytest.raises(ValueError, match=r"needs epsilon=.* use calibration='analytic'"):
        Gaussian.for_accuracy(alpha=1.0, sensitivity=1.0, delta=1e-5, calibration="classic")


@pytest.mark.parametrize(
    ("epsilon", "delta", "sensitivity"),
    [(1.0, 1e-5, 1.0), (0.1, 1e-6, 1.0), (4.0, 1e-10, 3.0), (10.0, 0.5, 1.0), (0.01, 1e-7, 2.0)],
)
def test_analytic_gaussian_is_the_exact_crossing(epsilon: float, delta: float, sensitivity: float) -> None:
    sigma = analytic_gaussian_sigma(epsilon, delta, sensitivity)
    assert gaussian_delta(epsilon, sigma, sensitivity) <= delta
    assert gaussian_delta(epsilon, sigma * (1 - 1e-12), sensitivity) > delta
    # Independent root-finding with scipy on the plain (non-log) formula.
    def plain(s: float) -> float:
        a = sensitivity / (2 * s) - epsilon * s / sensitivity
        b = -sensitivity / (2 * s) - epsilon * s / sensitivity
        return stats.norm.cdf(a) - math.exp(epsilon) * stats.norm.cdf(b) - delta

    reference = optimize.brentq(plain, sigma / 4, sigma * 4, xtol=1e-14, rtol=1e-14)
    assert sigma == pytest.approx(reference, rel=1e-8)
    if epsilon < 1:
        assert sigma < classic_gaussian_sigma(epsilon, delta, sensitivity)


def test_analytic_gaussian_published_value() -> None:
    """Balle & Wang (2018), Fig. 1 regime: ε = 1, δ = 1e-5, Δ = 1 needs σ ≈ 3.73 (classic: 4.84)."""
    assert analytic_gaussian_sigma(1.0, 1e-5, 1.0) == pytest.approx(3.7306, abs=1e-4)


def test_gaussian_accuracy_and_rho() -> None:
    g = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=2.0)
    assert g.accuracy(0.95) == pytest.approx(stats.norm.ppf(0.975) * g.scale, rel=1e-13)
    c, k = 0.95, 100
    assert g.accuracy(c, k) == pytest.approx(g.scale * stats.norm.ppf((1 + c ** (1 / k)) / 2), rel=1e-9)
    assert g.rho == pytest.approx(4.0 / (2 * g.scale**2))


# ---- geometric ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("epsilon", "sensitivity"), [(1.0, 1), (0.1, 1), (2.0, 4), (0.5, 10)])
def test_geometric_closed_forms(epsilon: float, sensitivity: int) -> None:
    m = Geometric(epsilon=epsilon, sensitivity=sensitivity)
    alpha = math.exp(epsilon / sensitivity)  # MATH.md's α
    assert m.variance == pytest.approx(2 * alpha / (alpha - 1) ** 2, rel=1e-12)
    z = np.arange(-30, 31)
    pmf = (alpha - 1) / (alpha + 1) * alpha ** (-np.abs(z).astype(float))
    np.testing.assert_allclose(m.noise.pmf(z), pmf, rtol=1e-12)
    r = 1 / alpha
    for a in [0, 1, 5]:
        assert m.tail(a) == pytest.approx(2 * r ** (a + 1) / (1 + r), rel=1e-12)
    assert m.tail(2.7) == m.tail(2)


def test_geometric_rejects_fractional_sensitivity() -> None:
    with pytest.raises(ValueError, match=r"sensitivity must be an integer >= 1 .* got sensitivity=1.5"):
        Geometric(epsilon=1.0, sensitivity=1.5)
    assert Geometric(epsilon=1.0, sensitivity=2.0).sensitivity == 2  # an integral float is that integer


# ---- discrete Gaussian ----------------------------------------------------------------------------


@pytest.mark.parametrize("sigma", [0.2, 0.9, 1.0, 2.5, 17.0, 150.0, 199.9, 200.1, 750.0, 5_000.0])
def test_discrete_gaussian_noise_against_brute_force(sigma: float) -> None:
    noise = DiscreteGaussianNoise(sigma)
    x = np.arange(-int(50 * sigma) - 20, int(50 * sigma) + 21)
    w = np.exp(-(x.astype(float) ** 2) / (2 * sigma**2))
    pmf = w / w.sum()
    np.testing.assert_allclose(noise.pmf(x[::97]), pmf[::97], rtol=1e-12, atol=1e-300)
    assert noise.var() == pytest.approx(float((x.astype(float) ** 2 * pmf).sum()), rel=1e-12)
    for m in [0, 1, int(sigma), int(2 * sigma) + 3, int(5 * sigma)]:
        tail = pmf[x > m].sum()
        assert float(noise.sf(m)) == pytest.approx(tail, rel=1e-11)
        assert float(noise.cdf(-m - 1)) == pytest.approx(tail, rel=1e-11)


@pytest.mark.parametrize("sigma", [3.0, 40.0, 1e4])
def test_discrete_gaussian_normaliser_by_poisson_summation(sigma: float) -> None:
    """Σ_k e^(−k²/2σ²) = σ√(2π)·Σ_n e^(−2π²σ²n²) (Poisson summation; exact identity)."""
    n = np.arange(-3, 4)
    poisson = sigma * math.sqrt(2 * math.pi) * np.exp(-2 * math.pi**2 * sigma**2 * n * n).sum()
    noise = DiscreteGaussianNoise(sigma)
    assert float(np.exp(-noise.logpmf(0))) == pytest.approx(poisson, rel=1e-13)


def test_discrete_gaussian_calibration_and_cks_theorem_7() -> None:
    m = DiscreteGaussian(epsilon=1.0, delta=1e-5, sensitivity=1)
    assert discrete_gaussian_delta(1.0, m.scale, 1) <= 1e-5
    assert discrete_gaussian_delta(1.0, math.nextafter(m.scale, 0), 1) > 1e-5
    # CKS §1: the discrete Gaussian's privacy is essentially that of the continuous one at σ ≥ 1.
    assert m.scale == pytest.approx(analytic_gaussian_sigma(1.0, 1e-5, 1.0), rel=0.01)
    assert m.rho == pytest.approx(1 / (2 * m.scale**2))


def test_discrete_gaussian_large_scale_is_fast_and_consistent() -> None:
    m = DiscreteGaussian(epsilon=0.01, delta=1e-7, sensitivity=100)
    continuous = Gaussian(epsilon=0.01, delta=1e-7, sensitivity=100.0)
    assert m.scale == pytest.approx(continuous.scale, rel=1e-6)
    assert abs(m.accuracy(0.95) - continuous.accuracy(0.95)) <= 1.0


# ---- staircase ------------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0, 8.0])
def test_optimal_gamma_minimises_the_cost(epsilon: float) -> None:
    """G&V's closed forms for γ* agree with a numerical minimisation of E|X| and of Var[X]."""
    for cost, objective in [
        ("l1", lambda g: StaircaseNoise(epsilon, 1.0, g).mean_absolute()),
        ("l2", lambda g: StaircaseNoise(epsilon, 1.0, g).var()),
    ]:
        found = optimize.minimize_scalar(objective, bounds=(1e-9, 1 - 1e-9), method="bounded",
                                         options={"xatol": 1e-12}).x
        assert optimal_gamma(epsilon, cost) == pytest.approx(found, abs=1e-6)


def test_staircase_beats_laplace_at_large_epsilon() -> None:
    """G&V: at large ε the staircase's E|X| ~ Δe^(−ε/2), far below Laplace's Δ/ε."""
    s = Staircase(epsilon=8.0, sensitivity=1.0)
    assert s.noise.mean_absolute() < 0.2 * Laplace(epsilon=8.0, sensitivity=1.0).scale
    assert Staircase(epsilon=1.0, sensitivity=1.0).gamma == pytest.approx(1 / (1 + math.exp(0.5)))


def test_staircase_gamma_validation() -> None:
    with pytest.raises(ValueError, match=r"gamma must be a number in \[0, 1\], got gamma=1.5"):
        Staircase(epsilon=1.0, sensitivity=1.0, gamma=1.5)
    with pytest.raises(ValueError, match=r"cost must be one of \('l1', 'l2'\), got cost='l3'"):
        optimal_gamma(1.0, "l3")


# ---- accuracy helpers -----------------------------------------------------------------------------


def test_simultaneous_tail_is_accurate_for_large_k() -> None:
    t = accuracy.simultaneous_tail(0.95, 10**9)
    assert t == pytest.approx(-math.log(0.95) / 10**9, rel=1e-8)
    assert accuracy.simultaneous_coverage(t, 10**9) == pytest.approx(0.95, rel=1e-12)
