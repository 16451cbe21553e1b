"""``release_trials(values, n)``: n independent release-grade outputs of ``release(values)``, for audits.

Checked for every mechanism family: the interface (shapes, dtypes, n = 0, no seed), that bad input is
refused with ``release``'s own message before any random bit is read, that ``release`` is one draw of
``release_trials`` (so auditing one audits the other), the calibration (the plan for one release of k
answers, never the plan for n·k), and the law of the draws against exact probabilities.

The draws come from the OS CSPRNG and cannot be seeded, so no statistical test here is reproducible:
each goodness-of-fit test fails below p = 1e-6 (``P_MIN``; a correct sampler fails a given test with
probability 10^−6, the twenty-odd tests here together with probability about 2·10^−5), and moment
checks allow 5 standard errors or more (false failure < 10^−6 each).
"""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import stats

from dpdash.errors import DPDashError, ParameterError, ParameterTypeError
from dpdash.mechanisms import (
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Laplace,
    NoiseMechanism,
    PermuteAndFlip,
    RandomizedResponse,
    ReportNoisyMax,
    SelectionMechanism,
    VectorMechanism,
    Wishart,
)
from dpdash.mechanisms import exponential as exponential_module
from dpdash.mechanisms import selection as selection_module
from dpdash.mechanisms import wishart as wishart_module
from tests.mechanisms.cases import reference_pmf
from tests.sampling.checks import P_MIN, chisquare_pmf

SELECTORS: list[type[SelectionMechanism]] = [ExponentialMechanism, PermuteAndFlip, ReportNoisyMax]
# Integer utilities, so that report-noisy-max takes them too; two tie for the top.
UTILITIES = [4, 2, 3, -1, 4, 0]


def selector(cls: type[SelectionMechanism]) -> SelectionMechanism:
    return cls(epsilon=1.3, sensitivity=1, monotone=cls is not ExponentialMechanism)


# One mechanism of each family with a valid input and the shape of one release of it.
FAMILIES: dict[str, tuple[Callable[[], Any], Any, tuple[int, ...], type]] = {
    "laplace": (
        lambda: Laplace(epsilon=1.0, sensitivity=1.0),
        [[1.5, 2.0], [0.0, -3.25]],
        (2, 2),
        np.float64,
    ),
    "geometric": (lambda: Geometric(epsilon=1.0, sensitivity=1), 7, (), np.int64),
    "exponential": (lambda: selector(ExponentialMechanism), UTILITIES, (), np.int64),
    "permute-and-flip": (lambda: selector(PermuteAndFlip), UTILITIES, (), np.int64),
    "report-noisy-max": (lambda: selector(ReportNoisyMax), UTILITIES, (), np.int64),
    "randomized-response": (
        lambda: RandomizedResponse(epsilon=1.0, categories=3),
        [[0, 1, 2]],
        (1, 3),
        np.int64,
    ),
    "vector": (
        lambda: VectorMechanism.gaussian(epsilon=1.0, delta=1e-6, l2_sensitivity=1.0, dimension=3),
        [0.5, 1.0, 2.0],
        (3,),
        np.float64,
    ),
    "wishart": (
        lambda: Wishart(epsilon=1.0, rows=2, dimension=3),
        [[0.1, 0.2, 0.3], [0.0, 0.5, 0.0]],
        (3, 3),
        np.float64,
    ),
}

# Inputs every family must refuse, with the message of its ``release``.
BAD_VALUES: dict[str, list[object]] = {
    "laplace": [[1.0, math.nan], [math.inf], [], ["a", "b"], [1e300]],
    "geometric": [[1.5], [math.nan], [], ["a"]],
    "exponential": [[], [1.0, math.nan], ["a", "b"], "ab"],
    "permute-and-flip": [[], [1.0, math.nan], ["a", "b"], "ab"],
    "report-noisy-max": [[], [1.5, 2.0], ["a", "b"], "ab"],
    "randomized-response": [[0, 3], [0.5], [-1], ["a"]],
    "vector": [[1.0, 2.0], [1.0, 2.0, math.nan], np.zeros(4)],
    "wishart": [np.zeros((3, 3)), np.zeros((2, 2)), [[math.nan, 0.0, 0.0], [0.0, 0.0, 0.0]]],
}


@pytest.fixture
def no_randomness(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any read of OS randomness fails the test: the samplers read every bit through ``os.urandom``."""

    def refuse(n: int) -> bytes:
        raise AssertionError(f"{n} random bytes were read")

    monkeypatch.setattr(os, "urandom", refuse)


# ---- the interface ---------------------------------------------------------------------------------


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_shapes_and_dtypes(family: str) -> None:
    build, values, shape, dtype = FAMILIES[family]
    mechanism = build()
    for n in (0, 1, 5):
        out = mechanism.release_trials(values, n)
        assert isinstance(out, np.ndarray)
        assert out.shape == (n, *shape) and out.dtype == dtype
    assert np.shape(mechanism.release(values)) == shape


def test_noise_mechanisms_keep_the_shape_of_the_values(mechanism: NoiseMechanism) -> None:
    dtype = np.int64 if mechanism.integer_valued else np.float64
    for values, n in [(7, 4), ([[1], [2]], 3), ([1, 2], 0), (np.arange(2).reshape(1, 2, 1), 2)]:
        out = mechanism.release_trials(values, n)
        assert out.shape == (n, *np.shape(values)) and out.dtype == dtype


@pytest.mark.parametrize("cls", SELECTORS)
def test_one_candidate_is_always_selected(cls: type[SelectionMechanism]) -> None:
    assert cls(epsilon=1.0).release_trials([3], 4).tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_release_trials_takes_no_seed(family: str) -> None:
    build, values, _, _ = FAMILIES[family]
    mechanism = build()
    assert list(inspect.signature(mechanism.release_trials).parameters) == ["values", "n"]
    with pytest.raises(TypeError):
        mechanism.release_trials(values, 3, rng=np.random.default_rng(0))
    with pytest.raises(TypeError):
        mechanism.release_trials(values, 3, 0)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize(
    ("n", "error", "message"),
    [
        (-1, ParameterError, r"n must be an integer >= 0, got n=-1"),
        (2.5, ParameterError, r"n must be an integer >= 0, got n=2.5"),
        (math.inf, ParameterError, r"n must be an integer >= 0"),
        ("3", ParameterTypeError, r"n must be a real number"),
        (True, ParameterTypeError, r"n must be a real number"),
    ],
)
def test_bad_n_is_refused_before_any_draw(
    family: str, n: object, error: type[Exception], message: str, no_randomness: None
) -> None:
    build, values, _, _ = FAMILIES[family]
    with pytest.raises(error, match=message):
        build().release_trials(values, n)


@pytest.mark.parametrize(
    ("family", "values"), [(family, values) for family, bad in sorted(BAD_VALUES.items()) for values in bad]
)
@pytest.mark.parametrize("n", [0, 10])
def test_bad_values_get_the_message_of_release_and_draw_nothing(
    family: str, values: object, n: int, no_randomness: None
) -> None:
    mechanism = FAMILIES[family][0]()
    with pytest.raises(DPDashError) as expected:
        mechanism.release(values)
    with pytest.raises(type(expected.value)) as got:
        mechanism.release_trials(values, n)
    assert str(got.value) == str(expected.value)


def test_the_noise_mechanisms_refuse_what_release_refuses(mechanism: NoiseMechanism) -> None:
    for values in BAD_VALUES["laplace"] + ([[1.5]] if mechanism.integer_valued else []):
        with pytest.raises(ParameterError) as expected:
            mechanism.release(values)
        with pytest.raises(ParameterError) as got:
            mechanism.release_trials(values, 3)
        assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_release_is_one_draw_of_release_trials(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``release`` goes through ``release_trials``: replace the latter and the former follows."""
    build, values, shape, dtype = FAMILIES[family]
    mechanism = build()
    owner = type(mechanism.base) if isinstance(mechanism, VectorMechanism) else type(mechanism)
    calls: list[int] = []

    def fake(self: object, values: object, n: int) -> np.ndarray:
        calls.append(n)
        return np.full((n, *shape), 1, dtype=dtype)

    monkeypatch.setattr(owner, "release_trials", fake)
    out = mechanism.release(values)
    assert calls == [1]
    assert np.shape(out) == shape and np.all(np.asarray(out) == 1)


# ---- calibration: the plan of one release --------------------------------------------------------------


def test_each_trial_is_one_release_of_k_answers_on_its_grid() -> None:
    """Laplace with 3 answers: every draw lies on the grid of release_plan(3), a finer grid than that of
    one answer (some draws are odd multiples of its step), and not on the finer grid of 3n answers' plan
    (whose noise would be scaled to it: all draws would not then be multiples of release_plan(3).step)."""
    lap = Laplace(epsilon=1.0, sensitivity=1.0)
    step = lap.release_plan(3).step
    assert step < lap.release_plan(1).step
    draws = lap.release_trials(np.array([0.0, 0.3, -1.7]), 20_000)
    units = draws / step
    assert np.all(units == np.round(units))
    assert np.any(units % 2 == 1)
    # Each copy is centred on its own answer (median within 7 standard errors of 0.007).
    assert np.all(np.abs(np.median(draws, axis=0) - [0.0, 0.3, -1.7]) < 0.05)


def test_the_noise_scale_is_that_of_one_release_of_k_answers() -> None:
    """Gaussian with 50 answers: release_plan(50) spends zCDP across the coordinates (σ about 8% above the
    one-answer plan's); the draws' standard deviation matches the 50-answer plan within 1% (the standard
    error of 10^6 draws is 0.07%), and not the one-answer plan."""
    g = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    plan, single = g.release_plan(50), g.release_plan(1)
    sigma, sigma_single = plan.step * plan.noise.sigma, single.step * single.noise.sigma
    assert abs(sigma / sigma_single - 1) > 0.05  # the test can tell them apart
    draws = g.release_trials(np.zeros(50), 20_000)
    assert draws.shape == (20_000, 50)
    assert np.all(draws / plan.step == np.round(draws / plan.step))
    assert float(draws.std()) == pytest.approx(sigma, rel=0.01)


def test_vector_trials_use_the_base_plan_for_d_answers() -> None:
    v = VectorMechanism.laplace(epsilon=1.0, l1_sensitivity=1.0, dimension=4)
    step = v.base.release_plan(4).step
    draws = v.release_trials(np.array([1.0, 2.0, 3.0, 4.0]), 5_000)
    assert draws.shape == (5_000, 4)
    assert np.all(draws / step == np.round(draws / step))


# ---- the law of the draws ----------------------------------------------------------------------------


@pytest.mark.parametrize("cls", SELECTORS)
def test_selections_follow_the_exact_probabilities(cls: type[SelectionMechanism]) -> None:
    """10^5 selections against ``probabilities`` (chi-square, p > 1e-6); and consecutive selections are
    independent (chi-square test of the table of pairs, p > 1e-6)."""
    mechanism = selector(cls)
    draws = mechanism.release_trials(UTILITIES, 100_000)
    probs = mechanism.probabilities(UTILITIES)
    pvalue, _ = chisquare_pmf(draws, np.arange(len(UTILITIES)), probs)
    assert pvalue > P_MIN
    # Candidates below 5% share one class, so that every cell of the table expects > 100 pairs.
    classes = np.cumsum(probs >= 0.05) * (probs >= 0.05)
    labels = classes[draws]
    size = int(classes.max()) + 1
    pairs = np.zeros((size, size))
    np.add.at(pairs, (labels[0::2], labels[1::2]), 1)
    assert stats.chi2_contingency(pairs).pvalue > P_MIN


@pytest.mark.parametrize("cls", SELECTORS)
def test_selections_follow_the_exact_probabilities_in_small_blocks(
    cls: type[SelectionMechanism], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same law when the draws are split into many blocks (tiny block and batch sizes)."""
    monkeypatch.setattr(selection_module, "_CHUNK", 6 * 997)
    monkeypatch.setattr(exponential_module, "_MAX_BATCH", 1000)
    mechanism = selector(cls)
    draws = mechanism.release_trials(UTILITIES, 30_000)
    pvalue, _ = chisquare_pmf(draws, np.arange(len(UTILITIES)), mechanism.probabilities(UTILITIES))
    assert pvalue > P_MIN


def test_permute_and_flip_with_coins_that_always_land_heads() -> None:
    """Equal utilities: every coin lands heads, the pick is uniform among all m candidates."""
    pf = PermuteAndFlip(epsilon=1.0)
    draws = pf.release_trials([5.0] * 7, 70_000)
    assert stats.chisquare(np.bincount(draws, minlength=7)).pvalue > P_MIN


@pytest.mark.parametrize(("epsilon", "k"), [(1.0, 2), (0.4, 4)])
def test_randomized_response_reports_follow_the_transition_matrix(epsilon: float, k: int) -> None:
    """10^5 trials of two respondents: each column against its row of the transition matrix (chi-square,
    p > 1e-6), and the two reports of a trial are independent (contingency test, p > 1e-6)."""
    rr = RandomizedResponse(epsilon=epsilon, categories=k)
    truth = np.array([0, k - 1])
    reports = rr.release_trials(truth, 100_000)
    assert reports.shape == (100_000, 2)
    for column, value in enumerate(truth):
        observed = np.bincount(reports[:, column], minlength=k)
        assert stats.chisquare(observed, rr.transition_matrix()[value] * reports.shape[0]).pvalue > P_MIN
    table = np.zeros((k, k))
    np.add.at(table, (reports[:, 0], reports[:, 1]), 1)
    assert stats.chi2_contingency(table).pvalue > P_MIN


@pytest.mark.parametrize("sensitivity", [1, 3])
def test_geometric_draws_follow_the_exact_pmf(sensitivity: int) -> None:
    """2·10^5 draws of release_trials(3) − 3 against the discrete Laplace pmf (brute force, pooled
    chi-square, p > 1e-6)."""
    geo = Geometric(epsilon=1.0, sensitivity=sensitivity)
    noise = geo.release_trials(3, 200_000) - 3
    support = np.arange(-60 * sensitivity, 60 * sensitivity + 1)
    pvalue, _ = chisquare_pmf(noise, support, reference_pmf(geo, support))
    assert pvalue > P_MIN


def test_laplace_draws_lie_on_the_grid_and_follow_the_continuous_laplace() -> None:
    """2·10^5 draws of release_trials(3.0): on the grid of release_plan(1), and within the
    Dvoretzky–Kiefer–Wolfowitz band of the continuous Lap(b) around 3 (false failure 10^−6) widened by
    what the grid changes: sup |F_grid − F_Lap(b)| ≤ one atom (≤ g/b) plus the effect of the noise scale
    g·D/ε ≤ b(1 + 2/4096) (≤ (2/4096)/e). Mean and variance within 5 standard errors of 3 and 2b²."""
    lap = Laplace(epsilon=0.8, sensitivity=1.5)
    b, n = lap.scale, 200_000
    step = lap.release_plan(1).step
    draws = lap.release_trials(3.0, n)
    assert draws.shape == (n,)
    assert np.all(draws / step == np.round(draws / step))
    band = math.sqrt(math.log(2 / P_MIN) / (2 * n)) + step / b + 2 / 4096
    assert stats.kstest(draws, stats.laplace(loc=3.0, scale=b).cdf).statistic <= band
    assert abs(draws.mean() - 3.0) <= 5 * math.sqrt(2 * b**2 / n)
    # Var of the sample variance of Laplace noise: (μ4 − σ⁴)/n = (24 − 4)b⁴/n; the grid adds ≤ 0.1%.
    assert abs(draws.var() - 2 * b**2) <= 5 * math.sqrt(20 * b**4 / n) + 0.002 * 2 * b**2


def test_wishart_trials_are_on_the_lattice_psd_with_the_wishart_mean() -> None:
    """20 000 trials: symmetric, positive semidefinite, on the lattice g·ℤ with g = h²/n; the mean trace
    of the noise is d(d + 1)c (the discrete Gaussian's variance is σ² to within e^(−2π²σ²)) within
    5 standard errors."""
    w = Wishart(epsilon=1.0, rows=10, dimension=2)
    n = 20_000
    out = w.release_trials(np.zeros((10, 2)), n)
    assert out.shape == (n, 2, 2)
    assert np.array_equal(out, np.swapaxes(out, 1, 2))
    assert np.all(np.linalg.eigvalsh(out)[:, 0] >= -1e-12 * np.abs(out).max(axis=(1, 2)))
    units = out / (w.grid**2 / w.rows)  # g·(integer) in floating point: units within 1e-6 of integers
    np.testing.assert_allclose(units, np.rint(units), rtol=0, atol=1e-6)
    traces = np.trace(out, axis1=1, axis2=2)
    expected = w.dimension * w.degrees_of_freedom * w.scale
    # tr(noise) = g·Σ ζ², a sum of d(d + 1) independent σ²χ²₁-like terms: Var ≈ 2·d(d + 1)·c².
    standard_error = math.sqrt(2 * w.dimension * w.degrees_of_freedom / n) * w.scale
    assert abs(traces.mean() - expected) <= 5 * standard_error


def test_wishart_trials_in_small_blocks_are_all_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 7 outputs (d = 3: 12 coordinates each): all 50 outputs filled, no two alike."""
    monkeypatch.setattr(wishart_module, "_BLOCK", 12 * 7)
    w = Wishart(epsilon=1.0, rows=2, dimension=3)
    out = w.release_trials(np.zeros((2, 3)), 50)
    assert out.shape == (50, 3, 3)
    assert np.unique(out.reshape(50, 9), axis=0).shape[0] == 50
    assert np.all(np.linalg.eigvalsh(out)[:, 0] >= -1e-12 * np.abs(out).max(axis=(1, 2)))
