"""zCDP → (ε, δ) conversions: ordered as theory says, and exact at the stated side."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdash.conversions import zcdp_delta, zcdp_epsilon
from dpdash.mechanisms import gaussian_delta


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.73, 10.0])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_tight_conversion_is_between_the_gaussian_and_the_simple_bound(sigma: float, epsilon: float) -> None:
    """A Gaussian with σ is exactly 1/(2σ²)-zCDP, so its exact δ(ε) is at most the conversion's δ, which
    is at most the simple bound exp(−(ε − ρ)²/(4ρ)) (Bun & Steinke 2016)."""
    rho = 1 / (2 * sigma**2)
    tight = zcdp_delta(rho, epsilon)
    assert float(gaussian_delta(epsilon, sigma, 1.0)) <= tight * (1 + 1e-9)
    if epsilon > rho:
        assert tight <= math.exp(-((epsilon - rho) ** 2) / (4 * rho)) * (1 + 1e-9)


def test_minimisation_matches_a_brute_force_grid() -> None:
    rho, eps = 2.63, 17.14
    alpha = 1 + np.geomspace(1e-6, 1e4, 1_000_000)
    log_delta = (alpha - 1) * (alpha * rho - eps) - np.log(alpha - 1) + alpha * np.log1p(-1 / alpha)
    assert zcdp_delta(rho, eps) == pytest.approx(math.exp(log_delta.min()), rel=1e-6)


@pytest.mark.parametrize(("rho", "delta"), [(0.5, 1e-5), (2.63, 1e-10), (0.001, 1e-6)])
def test_epsilon_meets_delta_and_is_below_the_simple_bound(rho: float, delta: float) -> None:
    """ε from the closed form per Rényi order meets δ to floating-point accuracy (1e-9 relative) and is
    not wasteful: 1e-9 less ε misses it."""
    eps = zcdp_epsilon(rho, delta)
    assert zcdp_delta(rho, eps) <= delta * (1 + 1e-9)
    assert zcdp_delta(rho, eps * (1 - 1e-9)) > delta
    assert eps <= zcdp_epsilon(rho, delta, "simple")
    assert zcdp_epsilon(rho, delta, "simple") == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)))
