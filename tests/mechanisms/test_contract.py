"""The contract every noise mechanism must keep, checked on every case of ``cases.CASES``.

Exact checks compare against closed forms or brute-force computations (``cases.reference_delta``).
Statistical checks are seeded; each states its tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpdash.mechanisms import NoiseMechanism
from tests.mechanisms.cases import CASES, build, reference_delta, reference_pmf

CONFIDENCES_AND_K = [(0.95, 1), (0.5, 1), (0.99, 7), (0.95, 10_000)]


# ---- accuracy ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("confidence", "k"), CONFIDENCES_AND_K)
def test_accuracy_is_the_smallest_half_width_with_the_coverage(
    mechanism: NoiseMechanism, confidence: float, k: int
) -> None:
    a = mechanism.accuracy(confidence, k)
    assert mechanism.coverage(a, k) >= confidence * (1 - 1e-12)
    if mechanism.integer_valued:
        assert isinstance(a, int)
        assert a == 0 or mechanism.coverage(a - 1, k) < confidence
    else:
        # Continuous noise: the coverage at a is exactly the confidence.
        assert mechanism.coverage(a, k) == pytest.approx(confidence, rel=1e-9)


@pytest.mark.parametrize(("confidence", "k"), CONFIDENCES_AND_K)
def test_union_bound_is_never_tighter_and_equal_for_one_answer(
    mechanism: NoiseMechanism, confidence: float, k: int
) -> None:
    assert mechanism.accuracy_union_bound(confidence, k) >= mechanism.accuracy(confidence, k)
    if k == 1:
        assert mechanism.accuracy_union_bound(confidence, 1) == pytest.approx(
            mechanism.accuracy(confidence, 1), rel=1e-12
        )


def test_accuracy_grows_with_confidence_and_k(mechanism: NoiseMechanism) -> None:
    assert mechanism.accuracy(0.5) <= mechanism.accuracy(0.9) <= mechanism.accuracy(0.999)
    assert mechanism.accuracy(0.95, 1) <= mechanism.accuracy(0.95, 10) <= mechanism.accuracy(0.95, 1000)


def test_tail_matches_the_noise_distribution(mechanism: NoiseMechanism) -> None:
    for a in [0.0, 0.5, 1.0, 2.7, 3 * mechanism.std]:
        if mechanism.integer_valued:
            support = np.arange(-math.floor(a), math.floor(a) + 1)
            expected = 1.0 - reference_pmf(mechanism, support).sum()
        else:
            expected = 2.0 * float(mechanism.noise.sf(a))
        assert mechanism.tail(a) == pytest.approx(expected, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(("confidence", "k"), [(0.95, 1), (0.9, 20)])
def test_for_accuracy_round_trip(case: str, confidence: float, k: int) -> None:
    """ε → accuracy → ε: the ε found is the smallest one whose accuracy is ≤ α."""
    original = build(case)
    alpha = original.accuracy(confidence, k)
    cls, params, _ = CASES[case]
    found = cls.for_accuracy(alpha=alpha, confidence=confidence, k=k, **params)
    assert found.accuracy(confidence, k) <= alpha
    slightly_less = build(case, epsilon=found.epsilon * (1 - 1e-9))
    assert slightly_less.accuracy(confidence, k) > alpha
    if original.integer_valued:
        assert found.epsilon <= original.epsilon * (1 + 1e-12)
    else:
        assert found.epsilon == pytest.approx(original.epsilon, rel=1e-9)


# ---- privacy ------------------------------------------------------------------------------------


def test_privacy_profile_matches_brute_force_hockey_stick(mechanism: NoiseMechanism) -> None:
    for fraction in [0.0, 0.3, 0.8, 1.0, 1.5]:
        eps = fraction * mechanism.epsilon
        expected = reference_delta(mechanism, eps)
        got = float(mechanism.privacy_profile(eps))
        assert got == pytest.approx(expected, rel=1e-6, abs=1e-13), f"ε′={eps}"


def test_privacy_profile_meets_the_stated_guarantee(mechanism: NoiseMechanism) -> None:
    delta_at_epsilon = float(mechanism.privacy_profile(mechanism.epsilon))
    assert delta_at_epsilon <= mechanism.delta
    if mechanism.delta == 0.0:
        assert delta_at_epsilon == 0.0
    elif getattr(mechanism, "calibration", "analytic") == "analytic":
        # Calibrated to the exact profile: the guarantee is tight.
        assert delta_at_epsilon == pytest.approx(mechanism.delta, rel=1e-6)
    else:
        assert delta_at_epsilon < mechanism.delta  # the classic calibration is conservative
    grid = np.linspace(0, 3 * mechanism.epsilon, 31)
    profile = mechanism.privacy_profile(grid)
    assert np.all(np.diff(profile) <= 1e-15)  # non-increasing in ε′
    assert np.all((profile >= 0) & (profile <= 1))


PURE_CASES = sorted(name for name, (cls, params, _) in CASES.items() if "delta" not in params)


@pytest.mark.parametrize("pure_case", PURE_CASES)
def test_pure_mechanisms_bound_the_density_ratio_by_e_to_the_epsilon(pure_case: str) -> None:
    """max_x |ln p(x)/p(x − Δ)| = ε for pure ε-DP noise, and it is reached (at x < 0)."""
    mechanism = build(pure_case)
    assert mechanism.delta == 0.0
    if mechanism.integer_valued:
        x = np.arange(-200, 201)
        log_ratio = np.log(reference_pmf(mechanism, x)) - np.log(
            reference_pmf(mechanism, x - int(mechanism.sensitivity))
        )
    else:
        # Off the stair edges: at an exact edge, rounding of x/Δ may put x and x − Δ on different steps.
        x = (np.linspace(-20, 20, 40_001) + 1e-6 * math.pi) * mechanism.sensitivity
        log_ratio = np.log(mechanism.noise.pdf(x)) - np.log(mechanism.noise.pdf(x - mechanism.sensitivity))
    assert np.max(np.abs(log_ratio)) == pytest.approx(mechanism.epsilon, rel=1e-9)


def test_rho_is_the_zcdp_parameter(mechanism: NoiseMechanism) -> None:
    if mechanism.delta == 0.0:
        assert mechanism.rho == pytest.approx(mechanism.epsilon**2 / 2)
    else:
        assert mechanism.rho == pytest.approx(mechanism.sensitivity**2 / (2 * mechanism.scale**2))


# ---- the noise object and simulation --------------------------------------------------------------


def test_noise_object_agrees_with_the_mechanism(mechanism: NoiseMechanism) -> None:
    noise = mechanism.noise
    assert float(noise.var()) == pytest.approx(mechanism.variance, rel=1e-12)
    assert mechanism.std == pytest.approx(math.sqrt(mechanism.variance), rel=1e-12)
    assert float(noise.mean()) == pytest.approx(0.0, abs=1e-12)
    q = np.array([0.01, 0.3, 0.5, 0.77, 0.999])
    x = noise.ppf(q)
    if mechanism.integer_valued:
        assert np.all(noise.cdf(x) >= q) and np.all(noise.cdf(x - 1) < q)
        assert np.all(noise.isf(q) == -noise.ppf(q))  # symmetric pmf
    else:
        np.testing.assert_allclose(noise.cdf(x), q, rtol=1e-9)
        np.testing.assert_allclose(noise.isf(q), -x, rtol=1e-9, atol=1e-12)


def test_variance_matches_brute_force(mechanism: NoiseMechanism) -> None:
    if mechanism.integer_valued:
        reach = int(60 * mechanism.std) + 60
        support = np.arange(-reach, reach + 1)
        expected = float((support.astype(float) ** 2 * reference_pmf(mechanism, support)).sum())
    else:
        from scipy import integrate

        expected = 2 * integrate.quad(
            lambda v: v * v * float(mechanism.noise.pdf(v)),
            0,
            np.inf,
            limit=500,
            points=None,
        )[0]
    assert mechanism.variance == pytest.approx(expected, rel=1e-6)


def test_simulate_shapes_types_and_seeding(mechanism: NoiseMechanism) -> None:
    values = np.array([10, 20, 30])
    draws = mechanism.simulate(values, 5, rng=7)
    assert draws.shape == (5, 3)
    assert draws.dtype == (np.int64 if mechanism.integer_valued else np.float64)
    np.testing.assert_array_equal(draws, mechanism.simulate(values, 5, rng=7))
    assert mechanism.simulate(3, 4, rng=np.random.default_rng(1)).shape == (4,)
    assert mechanism.simulate(3, 0, rng=1).shape == (0,)


def test_simulate_fits_the_noise_distribution(mechanism: NoiseMechanism) -> None:
    """Goodness of fit of 200 000 seeded draws: KS (continuous) or chi-square with tails pooled so that
    every cell expects ≥ 50 (discrete). Tolerance: p-value > 1e-3."""
    n = 200_000
    noise = mechanism.simulate(0, n, rng=20261122)
    if mechanism.integer_valued:
        lo, hi = int(mechanism.noise.ppf(1e-4)), int(mechanism.noise.isf(1e-4))
        cells = np.arange(lo, hi + 1)
        expected = reference_pmf(mechanism, cells) * n
        expected[0] += float(mechanism.noise.cdf(lo - 1)) * n
        expected[-1] += float(mechanism.noise.sf(hi)) * n
        observed = np.array([(np.clip(noise, lo, hi) == c).sum() for c in cells])
        keep = expected >= 50
        assert keep.sum() >= 2
        pooled_obs = np.append(observed[keep], observed[~keep].sum())
        pooled_exp = np.append(expected[keep], expected[~keep].sum())
        if pooled_exp[-1] == 0:
            pooled_obs, pooled_exp = pooled_obs[:-1], pooled_exp[:-1]
        p_value = stats.chisquare(pooled_obs, pooled_exp * pooled_obs.sum() / pooled_exp.sum()).pvalue
    else:
        p_value = stats.kstest(noise, mechanism.noise.cdf).pvalue
    assert p_value > 1e-3


@pytest.mark.parametrize(("confidence", "k"), [(0.95, 1), (0.9, 50)])
def test_empirical_coverage_of_the_accuracy_claim(
    mechanism: NoiseMechanism, confidence: float, k: int
) -> None:
    """Of 100 000 seeded simulated releases of k answers, the share with every answer within ±a must
    match the exact coverage at a (≥ confidence; = confidence for continuous noise) within 5 binomial
    standard errors."""
    n = 100_000
    a = mechanism.accuracy(confidence, k)
    truth = np.arange(k) * 10
    draws = mechanism.simulate(truth, n, rng=12345)
    within = np.all(np.abs(draws - truth) <= a, axis=1).mean()
    exact = mechanism.coverage(a, k)
    assert exact >= confidence - 1e-12
    standard_error = math.sqrt(exact * (1 - exact) / n)
    assert abs(within - exact) <= 5 * standard_error


# ---- shared validation -----------------------------------------------------------------------------


def test_integer_mechanisms_refuse_non_integer_answers(mechanism: NoiseMechanism) -> None:
    if not mechanism.integer_valued:
        assert mechanism.simulate(0.5, 2, rng=0).shape == (2,)
        return
    with pytest.raises(ValueError, match=r"true_value must be integers"):
        mechanism.simulate(0.5, 2, rng=0)


def test_simulate_refuses_non_finite_answers(mechanism: NoiseMechanism) -> None:
    with pytest.raises(ValueError, match=r"true_value must be finite numbers"):
        mechanism.simulate([1.0, math.nan], 2)
    with pytest.raises(ValueError, match=r"size must be an integer >= 0, got size=-1"):
        mechanism.simulate(1, -1)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"confidence": 1.0}, ValueError, r"confidence must be .* between 0 and 1, got confidence=1.0"),
        ({"confidence": 0}, ValueError, r"confidence must be .* between 0 and 1, got confidence=0"),
        ({"confidence": "95%"}, TypeError, r"confidence must be a real number, got confidence='95%'"),
        ({"k": 0}, ValueError, r"k must be an integer >= 1, got k=0"),
        ({"k": 2.5}, ValueError, r"k must be an integer >= 1, got k=2.5"),
    ],
)
def test_accuracy_validation(mechanism: NoiseMechanism, kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        mechanism.accuracy(**kwargs)


def test_mechanisms_are_frozen_values(case: str) -> None:
    mechanism = build(case)
    assert mechanism == build(case)
    assert hash(mechanism) == hash(build(case))
    with pytest.raises(AttributeError):
        mechanism.epsilon = 2.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        type(mechanism)(1.0, 1.0)  # positional ε, Δ could be swapped: refused
