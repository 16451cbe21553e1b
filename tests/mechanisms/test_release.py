"""Release-grade noise on every mechanism: exact samplers on OS randomness, outputs on a fixed grid.

The OS randomness is unseeded, so statistical checks use many draws and a low false-alarm rate
(p-value > 1e-4, or 5 standard errors), stated in each test.
"""

from __future__ import annotations

import inspect
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpdash.conversions import zcdp_delta
from dpdash.errors import ParameterError
from dpdash.mechanisms import (
    DiscreteGaussian,
    DiscreteStaircaseNoise,
    Gaussian,
    Geometric,
    Laplace,
    NoiseMechanism,
    Staircase,
)
from dpdash.mechanisms.grid import GRID_FINENESS
from tests.mechanisms.cases import CASES, build

REAL_CASES = sorted(name for name, (cls, _, _) in CASES.items() if not cls.integer_valued)


# ---- the interface ---------------------------------------------------------------------------------


def test_release_takes_no_seed_and_no_generator(mechanism: NoiseMechanism) -> None:
    assert list(inspect.signature(mechanism.release).parameters) == ["values"]
    with pytest.raises(TypeError):
        mechanism.release([1, 2], rng=np.random.default_rng(0))  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        mechanism.release([1, 2], 0)  # type: ignore[call-arg]


def test_two_releases_of_the_same_input_differ(mechanism: NoiseMechanism) -> None:
    values = np.arange(50)
    first, second = mechanism.release(values), mechanism.release(values)
    assert first.shape == second.shape == (50,)
    assert not np.array_equal(first, second)


def test_release_keeps_the_shape_and_type(mechanism: NoiseMechanism) -> None:
    assert mechanism.release(7).shape == ()
    assert mechanism.release([[1, 2], [3, 4]]).shape == (2, 2)
    expected = np.int64 if mechanism.integer_valued else np.float64
    assert mechanism.release([1, 2, 3]).dtype == expected


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ([1.0, math.nan], r"values must be finite numbers \(no NaN or infinity\)"),
        ([math.inf], r"values must be finite numbers"),
        ([], r"values must hold at least one answer, got an empty array"),
        (["a", "b"], r"values must be numbers, got values=\['a', 'b'\]"),
        ([1e300], r"values must have magnitude below"),
    ],
)
def test_release_refuses_bad_values(mechanism: NoiseMechanism, values: list, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        mechanism.release(values)


@pytest.mark.parametrize("cls", [Geometric, DiscreteGaussian])
def test_integer_mechanisms_release_integers_only(cls: type[NoiseMechanism]) -> None:
    mechanism = build("geometric-1" if cls is Geometric else "discrete-gaussian-1")
    with pytest.raises(ParameterError, match=r"values must be integers .* got values=\[1.5\]"):
        mechanism.release([1.5])
    assert mechanism.release([2.0, 3.0]).dtype == np.int64  # integral floats are integers


# ---- the floating-point attack (Mironov 2012) -------------------------------------------------------


@pytest.mark.parametrize("case", REAL_CASES)
@pytest.mark.parametrize("pair", [(0.0, 1.0), (0.5, 1.5)])
def test_neighbouring_answers_share_the_same_possible_outputs(case: str, pair: tuple[float, float]) -> None:
    """Every release of either answer lies on the same grid g·ℤ, and the integer noise gives every
    grid point positive probability: no output is possible for one answer and impossible for the other
    (unlike floating-point Laplace, whose attainable doubles depend on the input)."""
    mechanism = build(case)
    plan = mechanism.release_plan(1)
    for value in pair:
        # 200 real one-answer releases, and 20 000 more through the same plan in one call.
        released = np.concatenate(
            [[mechanism.release(value) for _ in range(200)], plan.apply(np.full(20_000, value), "test")]
        )
        units = released / plan.step
        assert np.all(units == np.round(units)), "an output left the grid"
    # Full support: Pr[|Z| > m] falls strictly at every m, so Pr[Z = ±(m + 1)] > 0 for every m.
    tails = [plan.noise.log_abs_tail(m) for m in range(0, 5_000, 37)]
    assert all(math.isfinite(t) for t in tails)
    assert all(b < a for a, b in itertools.pairwise(tails))


# ---- the grid noise is the stated noise ---------------------------------------------------------------


def test_release_noise_fits_its_exact_distribution(mechanism: NoiseMechanism) -> None:
    """|release − rounded truth| in grid units against the exact law of |Z| (20 equiprobable bins of the
    exact tail, 200 000 draws, chi-square p > 1e-4), and the sign is fair (binomial, 5 SE)."""
    n = 200_000
    plan = mechanism.release_plan(1)
    log_abs_tail = plan.noise.log_abs_tail
    noise_units = plan.noise.sample((n,))
    magnitude = np.abs(noise_units).astype(np.int64)
    # Bin edges where the exact tail crosses 1 − i/20; merge equal edges (discrete atoms).
    edges, m = [], 0
    for i in range(1, 20):
        target = math.log(i / 20)
        while log_abs_tail(m) > target:
            m += max(1, m // 64)
        edges.append(m)
    edges = sorted(set(edges))
    # Exact probabilities of |Z| ≤ e_0, (e_0, e_1], ..., > e_last.
    cdf = [1.0 - math.exp(log_abs_tail(e)) for e in edges]
    expected = np.diff([0.0, *cdf, 1.0]) * n
    observed = np.histogram(magnitude, bins=[-0.5, *(e + 0.5 for e in edges), np.inf])[0]
    assert stats.chisquare(observed, expected).pvalue > 1e-4
    nonzero = noise_units[noise_units != 0]
    assert abs((nonzero > 0).mean() - 0.5) <= 5 * math.sqrt(0.25 / nonzero.size)


@pytest.mark.parametrize(("confidence", "k"), [(0.95, 1), (0.9, 20)])
def test_release_accuracy_covers_the_released_answers(
    mechanism: NoiseMechanism, confidence: float, k: int
) -> None:
    """Of 20 000 releases of k answers, at least `confidence` (less 5 SE) have every answer within
    ±release_accuracy of the truth; and the release costs little accuracy against the ideal noise."""
    n = 20_000
    a = mechanism.release_accuracy(confidence, k)
    truth = np.arange(k, dtype=float) * 7 + (0 if mechanism.integer_valued else 0.123)
    released = mechanism.release_plan(k).apply(np.tile(truth, (n, 1)), mechanism.name)  # n releases
    within = np.all(np.abs(released - truth) <= a, axis=1).mean()
    assert within >= confidence - 5 * math.sqrt(confidence * (1 - confidence) / n)
    ideal = mechanism.accuracy(confidence, k)
    if isinstance(mechanism, Gaussian) and k > 1:
        assert a <= 1.15 * ideal  # zCDP accounting across coordinates costs up to ~10% here
    else:
        assert a <= ideal * (1 + 4 / GRID_FINENESS) + 1e-9


# ---- the privacy of the grid plans -------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3, 1000])
def test_laplace_plan_keeps_epsilon_for_the_rounded_sensitivity(k: int) -> None:
    lap = Laplace(epsilon=0.7, sensitivity=2.5)
    plan = lap.release_plan(k)
    g = plan.step
    assert g <= 2.5 / (k * GRID_FINENESS) and math.log2(g).is_integer()
    # Rounded neighbours differ by ≤ Δ/g + 1 per coordinate, ≤ Δ/g + k in ℓ1: D = ⌊Δ/g⌋ + k covers it,
    # and discrete Laplace noise of scale D/ε is ε-DP for integer ℓ1 sensitivity D.
    units_sensitivity = math.floor(2.5 / g) + k
    assert plan.noise.scale == Fraction(units_sensitivity) / Fraction(0.7)
    assert g * float(plan.noise.scale) <= lap.scale * (1 + 2 / GRID_FINENESS)


@pytest.mark.parametrize("k", [1, 2, 50])
def test_gaussian_plan_meets_epsilon_delta(k: int) -> None:
    g = Gaussian(epsilon=0.9, delta=1e-6, sensitivity=3.0)
    plan = g.release_plan(k)
    sigma = plan.noise.sigma
    if k == 1:
        units = math.floor(3.0 / plan.step) + 1
        assert DiscreteGaussian(epsilon=0.9, delta=1e-6, sensitivity=units).scale == sigma
        assert plan.step * sigma == pytest.approx(g.scale, rel=2 / GRID_FINENESS)
    else:
        l2_units = 3.0 / plan.step + math.sqrt(k)
        assert zcdp_delta(l2_units**2 / (2 * sigma**2), 0.9) <= 1e-6
        assert zcdp_delta(l2_units**2 / (2 * (sigma * 0.999) ** 2), 0.9) > 1e-6  # not wasteful


@pytest.mark.parametrize(
    ("epsilon", "width", "threshold"), [(1.0, 5, 2), (0.3, 4, 0), (2.0, 3, 3), (1.5, 1, 1)]
)
def test_discrete_staircase_is_epsilon_dp_and_its_tails_are_exact(
    epsilon: float, width: int, threshold: int
) -> None:
    """Brute force over z: the pmf ratio for every integer shift |v| ≤ W is at most e^ε (and reached),
    and the closed-form tails match direct sums."""
    z = np.arange(-400, 401)
    stair = np.abs(z) // width + (np.abs(z) % width >= threshold)
    weight = np.exp(-epsilon * stair)
    pmf = weight / weight.sum()
    worst = 0.0
    for v in range(1, width + 1):
        worst = max(worst, float(np.max(np.abs(np.log(pmf[v:]) - np.log(pmf[:-v])))))
    assert worst == pytest.approx(epsilon, rel=1e-12)
    noise = DiscreteStaircaseNoise(epsilon, width, threshold)
    for m in [0, 1, width, 3 * width + 1, 20]:
        assert math.exp(noise.log_abs_tail(m)) == pytest.approx(pmf[np.abs(z) > m].sum(), rel=1e-9)


def test_staircase_plan_uses_the_stated_epsilon_and_gamma() -> None:
    s = Staircase(epsilon=1.3, sensitivity=2.0, gamma=0.25)
    plan = s.release_plan(5)
    assert plan.noise.epsilon == 1.3
    assert plan.noise.width == math.floor(2.0 / plan.step) + 1
    assert plan.noise.threshold == math.ceil(0.25 * plan.noise.width)
