"""Hostile inputs to every mechanism and every public method: each call either returns finite numbers or
raises a DPDashError (ParameterError / ParameterTypeError) that says what is wrong; never an
OverflowError, ZeroDivisionError, MemoryError, numpy's TypeError, a silent wrap-around, or inf/nan
where a number is promised. The supported ranges (``dpdash._validation``) are exercised at both ends."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpdash import _validation as check
from dpdash.errors import DPDashError, ParameterError
from dpdash.mechanisms import (
    DiscreteGaussian,
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Laplace,
    PermuteAndFlip,
    RandomizedResponse,
    ReportNoisyMax,
    Staircase,
    VectorMechanism,
    Wishart,
    analytic_gaussian_sigma,
    optimal_gamma,
)
from dpdash.queries import Count, Mean
from dpdash.release import release


def _gaussian_vector(epsilon: float, sensitivity: float) -> VectorMechanism:
    return VectorMechanism.gaussian(epsilon=epsilon, delta=1e-5, l2_sensitivity=sensitivity, dimension=2)


#: name -> (build(ε, Δ), a valid input, kind)
MECHANISMS: dict[str, tuple[Callable[[float, Any], Any], Any, str]] = {
    "laplace": (lambda e, s: Laplace(epsilon=e, sensitivity=s), 3.0, "noise"),
    "gaussian": (lambda e, s: Gaussian(epsilon=e, delta=1e-5, sensitivity=s), 3.0, "noise"),
    "geometric": (lambda e, s: Geometric(epsilon=e, sensitivity=s), 3, "noise"),
    "discrete-gaussian": (lambda e, s: DiscreteGaussian(epsilon=e, delta=1e-5, sensitivity=s), 3, "noise"),
    "staircase": (lambda e, s: Staircase(epsilon=e, sensitivity=s), 3.0, "noise"),
    "exponential": (lambda e, s: ExponentialMechanism(epsilon=e, sensitivity=s), [1, 5, 3], "selection"),
    "permute-and-flip": (lambda e, s: PermuteAndFlip(epsilon=e, sensitivity=s), [1, 5, 3], "selection"),
    "report-noisy-max": (lambda e, s: ReportNoisyMax(epsilon=e, sensitivity=s), [1, 5, 3], "selection"),
    "randomized-response": (lambda e, s: RandomizedResponse(epsilon=e, categories=3), [0, 2, 1], "rr"),
    "vector-laplace": (
        lambda e, s: VectorMechanism.laplace(epsilon=e, l1_sensitivity=s, dimension=2),
        [1.0, 2.0],
        "vector",
    ),
    "vector-gaussian": (_gaussian_vector, [1.0, 2.0], "vector"),
    "wishart": (
        lambda e, s: Wishart(epsilon=e, rows=3, dimension=2, norm_bound=s),
        np.full((3, 2), 0.5),
        "wishart",
    ),
}

HOSTILE_EPSILONS = [5e-324, 1e-300, 1e300, math.inf, math.nan, -1.0, 0.0, 10**400]
HOSTILE_SENSITIVITIES = [2**70, 1e308, 5e-324, 10**400]  # 2**70 is refused by integer mechanisms only
HOSTILE_VALUES = {
    "ragged": [[1, 2], [3]],
    "huge": [1e308, -1e308],
    "2**63": [2**63],
    "2**64": [2**64],
    "masked": np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False]),
    "object": np.array([1, "a"], dtype=object),
    "string": "abc",
    "none": None,
    "nan": [1.0, math.nan],
}
HOSTILE_SIZES = [10**12, -1, 1.5, "3"]


def _methods(mechanism: Any, kind: str, values: Any, matrix: Any = None) -> dict[str, Callable[[], Any]]:
    """Every public method of the mechanism, called with ``values`` where it takes an input (for Wishart,
    ``matrix`` is what ``simulate`` takes; ``values`` when not given)."""
    if kind == "noise":
        return {
            "scale": lambda: mechanism.scale,
            "std": lambda: mechanism.std,
            "variance": lambda: mechanism.variance,
            "rho": lambda: mechanism.rho,
            "accuracy": lambda: mechanism.accuracy(0.95, 1000),
            "accuracy_union_bound": lambda: mechanism.accuracy_union_bound(0.95, 1000),
            "coverage": lambda: mechanism.coverage(1.0, 3),
            "tail": lambda: mechanism.tail(1.0),
            "privacy_profile": lambda: mechanism.privacy_profile([0.0, 0.5, 3.0]),
            "simulate": lambda: mechanism.simulate(values, 5, rng=1),
            "release": lambda: mechanism.release(values),
            "release_trials": lambda: mechanism.release_trials(values, 3),
            "release_accuracy": lambda: mechanism.release_accuracy(0.95, 10),
        }
    if kind == "selection":
        return {
            "rho": lambda: mechanism.rho,
            "probabilities": lambda: mechanism.probabilities(values),
            "utility_gap": lambda: mechanism.utility_gap(0.95, 3),
            "simulate": lambda: mechanism.simulate(values, 5, rng=1),
            "release": lambda: mechanism.release(values),
            "release_trials": lambda: mechanism.release_trials(values, 3),
        }
    if kind == "rr":
        return {
            "keep_probability": lambda: mechanism.keep_probability,
            "estimator_variance": lambda: mechanism.estimator_variance(share=0.5, n=100),
            "accuracy": lambda: mechanism.accuracy(n=100),
            "privacy_profile": lambda: mechanism.privacy_profile([0.0, 1.0]),
            "estimate": lambda: mechanism.estimate(values),
            "simulate": lambda: mechanism.simulate(values, 5, rng=1),
            "release": lambda: mechanism.release(values),
            "release_trials": lambda: mechanism.release_trials(values, 3),
        }
    if kind == "vector":
        return {
            "scale": lambda: mechanism.scale,
            "accuracy": lambda: mechanism.accuracy(0.95),
            "norm_accuracy": lambda: mechanism.norm_accuracy(0.95),
            "expected_squared_error": lambda: mechanism.expected_squared_error,
            "simulate": lambda: mechanism.simulate(values, 5, rng=1),
            "release": lambda: mechanism.release(values),
            "release_trials": lambda: mechanism.release_trials(values, 3),
            "release_accuracy": lambda: mechanism.release_accuracy(0.95),
        }
    return {
        "scale": lambda: mechanism.scale,
        "delta": lambda: mechanism.delta,
        "privacy_profile": lambda: mechanism.privacy_profile([0.0, 1.0]),
        "noise_mean": lambda: mechanism.noise_mean,
        "simulate": lambda: mechanism.simulate(values if matrix is None else matrix, 5, rng=1),
        "release": lambda: mechanism.release(values),
        "release_trials": lambda: mechanism.release_trials(values, 3),
    }  # fmt: skip


def _finite_or_dpdash_error(call: Callable[[], Any], what: str) -> Any:
    """The call's result, checked finite; ``None`` when it raised a DPDashError (anything else fails)."""
    try:
        result = call()
    except DPDashError as error:
        assert str(error), what
        return None
    numbers = np.asarray(result, dtype=object).ravel()
    for x in numbers:
        if isinstance(x, float | np.floating):
            assert math.isfinite(x), f"{what} returned {result!r}"
    return result


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("epsilon", HOSTILE_EPSILONS, ids=str)
def test_hostile_epsilon_is_refused_at_construction(name: str, epsilon: float) -> None:
    build, _, _ = MECHANISMS[name]
    with pytest.raises(ParameterError, match="epsilon must be"):
        build(epsilon, 1)


@pytest.mark.parametrize("name", sorted(n for n, (_, _, kind) in MECHANISMS.items() if kind != "rr"))
@pytest.mark.parametrize("sensitivity", HOSTILE_SENSITIVITIES, ids=str)
def test_hostile_sensitivity_is_refused_at_construction(name: str, sensitivity: float) -> None:
    build, _, _ = MECHANISMS[name]
    if sensitivity == 2**70 and name not in ("geometric", "discrete-gaussian", "report-noisy-max"):
        built = build(1.0, sensitivity)
        assert getattr(built, "sensitivity", getattr(built, "norm_bound", None)) == 2.0**70  # a real one
        return
    with pytest.raises(ParameterError, match=r"(sensitivity|norm_bound) must be"):
        build(1.0, sensitivity)


#: The ends of the supported ranges (and a large integer sensitivity): everything works or says why.
LOW, HIGH = check.EPSILON_MIN, check.EPSILON_MAX
EDGES = [(LOW, 1), (HIGH, 1), (1.0, check.SENSITIVITY_MIN), (1.0, check.SENSITIVITY_MAX),
         (LOW, check.SENSITIVITY_MAX), (HIGH, check.SENSITIVITY_MIN),
         (LOW, check.INTEGER_SENSITIVITY_MAX), (1.0, check.INTEGER_SENSITIVITY_MAX)]  # fmt: skip


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize(("epsilon", "sensitivity"), EDGES, ids=str)
def test_every_method_at_the_ends_of_the_ranges(name: str, epsilon: float, sensitivity: Any) -> None:
    build, values, kind = MECHANISMS[name]
    mechanism = _finite_or_dpdash_error(lambda: build(epsilon, sensitivity), f"{name} construction")
    if mechanism is None:
        return
    if kind == "noise" and mechanism.integer_valued:
        values = 3
    elif kind == "noise":
        values = 3.0 * float(sensitivity)
    for method, call in _methods(mechanism, kind, values, np.eye(2)).items():
        _finite_or_dpdash_error(call, f"{name}(ε={epsilon}, Δ={sensitivity}).{method}")


EXACT = {
    kind: {"2**64"} if kind == "selection" else set()
    for kind in ("noise", "selection", "rr", "vector", "wishart")
}
USES_VALUES = ("simulate", "release", "release_trials", "estimate", "probabilities")


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("hostile", sorted(HOSTILE_VALUES))
def test_hostile_values_never_crash_and_are_never_silently_used(name: str, hostile: str) -> None:
    build, _, kind = MECHANISMS[name]
    mechanism = build(1.0, 1)
    values = HOSTILE_VALUES[hostile]
    for method, call in _methods(mechanism, kind, values).items():
        result = _finite_or_dpdash_error(call, f"{name}.{method}({hostile})")
        if result is None or method not in USES_VALUES:
            continue
        # Values that cannot be used must have been refused, not released. (Selection utilities are exact
        # rationals: 2**64 is a valid utility there.)
        unusable = {"ragged", "masked", "object", "string", "none", "nan"} | ({"2**64"} - EXACT[kind])
        assert hostile not in unusable, f"{name}.{method} used {hostile} values: {result!r}"
        if hostile == "2**63" and kind != "selection":
            assert np.all(np.abs(np.asarray(result, dtype=float)) >= 2**62), f"{name}.{method} wrapped 2**63"


@pytest.mark.parametrize("name", sorted(MECHANISMS))
@pytest.mark.parametrize("size", HOSTILE_SIZES, ids=str)
def test_hostile_sizes_are_refused(name: str, size: object) -> None:
    build, values, kind = MECHANISMS[name]
    mechanism = build(1.0, 1)
    sim = np.eye(2) if kind == "wishart" else values
    with pytest.raises(DPDashError, match="size"):
        mechanism.simulate(sim, size, rng=1)
    with pytest.raises(DPDashError, match="n"):
        mechanism.release_trials(values, size)


@pytest.mark.parametrize("cls", [Laplace, Gaussian, Geometric, DiscreteGaussian, Staircase])
@pytest.mark.parametrize("profile", ["x", None, [[0.0, 1.0], [2.0]], [-1.0], [math.nan]], ids=str)
def test_privacy_profile_refuses_what_is_not_a_grid_of_epsilons(cls: type, profile: object) -> None:
    build = {c.__name__: b for b, _, _ in MECHANISMS.values() for c in [type(b(1.0, 1))]}[cls.__name__]
    with pytest.raises(ParameterError, match="epsilons must be"):
        build(1.0, 1).privacy_profile(profile)


@pytest.mark.parametrize("cls", [Laplace, Gaussian, Geometric, DiscreteGaussian, Staircase])
@pytest.mark.parametrize("alpha", [1e-300, 1e300, 5e-324])
@pytest.mark.parametrize("sensitivity", [1, 2**70, 1e308])
def test_for_accuracy_finds_a_supported_epsilon_or_refuses(cls: type, alpha: float, sensitivity: Any) -> None:
    params = {"delta": 1e-5} if cls in (Gaussian, DiscreteGaussian) else {}
    found = _finite_or_dpdash_error(
        lambda: cls.for_accuracy(alpha=alpha, sensitivity=sensitivity, **params), f"{cls.__name__}.for_acc"
    )
    if found is not None:
        assert check.EPSILON_MIN <= found.epsilon <= check.EPSILON_MAX
        assert found.accuracy() <= alpha


def test_helpers_refuse_hostile_epsilons() -> None:
    with pytest.raises(ParameterError, match="between 1e-06 and 100"):
        analytic_gaussian_sigma(1e300, 1e-5, 1.0)
    with pytest.raises(ParameterError, match="between 1e-06 and 100"):
        optimal_gamma(1e300)


def test_geometric_profile_is_closed_form_for_huge_sensitivities() -> None:
    """It summed Δ − 1 terms: sensitivity = 2**40 asked for terabytes."""
    m = Geometric(epsilon=1.0, sensitivity=2**40)
    profile = m.privacy_profile([0.0, 0.5, 1.0])
    assert np.all(np.isfinite(profile)) and profile[0] > profile[1] > profile[2] == 0.0
    small = Geometric(epsilon=0.3, sensitivity=3)  # agrees with the term-by-term sum
    r = math.exp(-0.1)
    c = (1 - r) / (1 + r)
    for eps in (0.0, 0.1, 0.25):
        expected = (1 - math.exp(eps - 0.3)) / (1 + r) + sum(
            max(c * r**z - c * math.exp(eps) * r ** (3 - z), 0.0) for z in (1, 2)
        )
        assert float(small.privacy_profile(eps)) == pytest.approx(expected, rel=1e-12)


def test_simulate_of_integers_beyond_int64_no_longer_wraps() -> None:
    with pytest.raises(ParameterError, match="magnitude below"):
        Geometric(epsilon=1.0, sensitivity=1).simulate([2**63], 3, rng=1)


def test_masked_values_are_refused_not_released() -> None:
    masked = np.ma.masked_array([10.0, 1e6], mask=[False, True])
    with pytest.raises(ParameterError, match="masked"):
        Laplace(epsilon=1.0, sensitivity=1.0).release(masked)


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return pd.DataFrame({"age": [34, 71, 68, 25], "income": [1.0, 2.0, 3.0, 4.0]})


@pytest.mark.parametrize("epsilon", [1e300, 5e-324, 1e-300, math.inf, math.nan, 1000.0])
def test_release_refuses_epsilons_outside_the_supported_range(df: pd.DataFrame, epsilon: float) -> None:
    with pytest.raises(ParameterError, match="epsilon must be"):
        release(Count(), Laplace, df, epsilon=epsilon)


def test_a_piece_below_the_supported_epsilon_says_why(df: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match=r"the (sum|count) piece of .* gets epsilon=.* below the"):
        release(Mean(column="income", bounds=(0, 10)), Laplace, df, epsilon=1.5e-6)
