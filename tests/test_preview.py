"""Preview statistics against the noise distribution and against seeded simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdash import preview
from dpdash.mechanisms import NoiseMechanism
from tests.mechanisms.cases import CASES, build


@pytest.mark.parametrize("case", sorted(CASES))
def test_quantile_dots_are_exact_noise_quantiles(case: str) -> None:
    m: NoiseMechanism = build(case)
    dots = preview.quantile_dots(m, [10, 200])
    assert dots.shape == (2, preview.DOTS)
    levels = (np.arange(preview.DOTS) + 0.5) / preview.DOTS
    noise = dots[1] - 200
    cdf = np.asarray(m.noise.cdf(noise), dtype=float)
    if m.integer_valued:
        assert np.all(noise == np.round(noise))
        assert np.all(cdf >= levels - 1e-12) and np.all(np.asarray(m.noise.cdf(noise - 1)) < levels)
    else:
        np.testing.assert_allclose(cdf, levels, rtol=1e-9)
    np.testing.assert_allclose(noise, -noise[::-1], atol=1e-9)  # symmetric noise, symmetric dots


@pytest.mark.parametrize("case", sorted(CASES))
def test_chances_match_seeded_simulation(case: str) -> None:
    """Pr[release < T] and Pr[crossing T] against 200 000 seeded simulated releases, within 5 SE."""
    m: NoiseMechanism = build(case)
    truth = np.array([3.0, 12.0])
    threshold = 10.0
    draws = m.simulate(truth, 200_000, rng=99)
    below = preview.chance_below(m, truth, threshold)
    crossing = preview.chance_of_crossing(m, truth, threshold)
    for i in range(2):
        observed_below = (draws[:, i] < threshold).mean()
        se = math.sqrt(max(below[i] * (1 - below[i]), 1e-12) / draws.shape[0])
        assert abs(observed_below - below[i]) <= 5 * se + 1e-12
    assert crossing[0] == pytest.approx(1 - below[0]) and crossing[1] == pytest.approx(below[1])


def test_negative_count_chance_for_the_geometric_mechanism_is_exact() -> None:
    m = build("geometric-1")  # r = e^-1
    r = math.exp(-1)
    # Pr[5 + Z < 0] = Pr[Z ≤ −6] = r^6/(1 + r)
    assert preview.chance_below(m, [5], 0.0)[0] == pytest.approx(r**6 / (1 + r), rel=1e-12)


def test_relative_error_and_validation() -> None:
    np.testing.assert_allclose(preview.relative_error(3.0, [30, -6, 0]), [0.1, 0.5, math.inf])
    with pytest.raises(ValueError, match="true_values must be a non-empty list of finite numbers"):
        preview.quantile_dots(build("laplace-1"), [])
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        preview.chance_below(build("laplace-1"), [1], math.nan)
