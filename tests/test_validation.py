"""Bad input to any constructor: a TypeError or ValueError that names the parameter, the rule and the
value, and is a DPDashError so the app can show it. Nothing is clamped."""

from __future__ import annotations

import math

import pytest

from dpdash import DPDashError, ParameterError, ParameterTypeError
from dpdash.mechanisms import DiscreteGaussian, Gaussian, Geometric, Laplace, Staircase

GOOD = {
    Laplace: {"epsilon": 1.0, "sensitivity": 1.0},
    Gaussian: {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0},
    Geometric: {"epsilon": 1.0, "sensitivity": 1},
    DiscreteGaussian: {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1},
    Staircase: {"epsilon": 1.0, "sensitivity": 1.0},
}

BAD_VALUES = [
    ("epsilon", -1, ParameterError, "epsilon must be a finite number > 0, got epsilon=-1"),
    ("epsilon", 0, ParameterError, "epsilon must be a finite number > 0, got epsilon=0"),
    ("epsilon", math.inf, ParameterError, "epsilon must be a finite number > 0, got epsilon=inf"),
    ("epsilon", math.nan, ParameterError, "epsilon must be a finite number > 0, got epsilon=nan"),
    ("epsilon", "abc", ParameterTypeError, "epsilon must be a real number, got epsilon='abc' (str)"),
    ("epsilon", True, ParameterTypeError, "epsilon must be a real number, got epsilon=True (bool)"),
    ("epsilon", None, ParameterTypeError, "epsilon must be a real number, got epsilon=None (NoneType)"),
    ("sensitivity", 0, ParameterError, "sensitivity must be a finite number > 0, got sensitivity=0"),
    ("sensitivity", -2.0, ParameterError, "sensitivity must be a finite number > 0, got sensitivity=-2.0"),
    ("sensitivity", math.inf, ParameterError, "sensitivity must be a finite number > 0, got sensitivity=inf"),
]

DELTA_VALUES = [
    (0, "delta must be a number strictly between 0 and 1, got delta=0"),
    (1, "delta must be a number strictly between 0 and 1, got delta=1"),
    (1.5, "delta must be a number strictly between 0 and 1, got delta=1.5"),
    (-1e-5, "delta must be a number strictly between 0 and 1, got delta=-1e-05"),
]


@pytest.mark.parametrize("cls", list(GOOD), ids=lambda c: c.__name__)
@pytest.mark.parametrize(("name", "value", "error", "message"), BAD_VALUES)
def test_bad_values_are_refused_with_a_message(cls, name, value, error, message) -> None:
    kwargs = {**GOOD[cls], name: value}
    with pytest.raises(error) as info:
        cls(**kwargs)
    assert str(info.value) == message
    assert isinstance(info.value, DPDashError)
    assert isinstance(info.value, ValueError if error is ParameterError else TypeError)


@pytest.mark.parametrize("cls", [Gaussian, DiscreteGaussian], ids=lambda c: c.__name__)
@pytest.mark.parametrize(("value", "message"), DELTA_VALUES)
def test_delta_outside_the_open_unit_interval_is_refused(cls, value, message) -> None:
    with pytest.raises(ParameterError) as info:
        cls(**{**GOOD[cls], "delta": value})
    assert str(info.value) == message


@pytest.mark.parametrize("cls", [Geometric, DiscreteGaussian], ids=lambda c: c.__name__)
def test_integer_mechanisms_refuse_non_integer_sensitivity(cls) -> None:
    with pytest.raises(ParameterError, match=r"sensitivity must be an integer >= 1 .* got sensitivity=0.5"):
        cls(**{**GOOD[cls], "sensitivity": 0.5})


def test_for_accuracy_validates_alpha() -> None:
    with pytest.raises(ParameterError, match=r"alpha must be a finite number > 0, got alpha=0"):
        Laplace.for_accuracy(alpha=0, sensitivity=1.0)
    with pytest.raises(ParameterError, match=r"alpha must be a finite number >= 0, got alpha=-1"):
        Geometric.for_accuracy(alpha=-1, sensitivity=1)
    assert Geometric.for_accuracy(alpha=0, sensitivity=1).accuracy() == 0  # exact answers need a large ε


def test_calibration_must_be_known() -> None:
    with pytest.raises(ParameterError, match=r"calibration must be one of \('analytic', 'classic'\)"):
        Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0, calibration="optimal")


def test_missing_parameters_are_a_type_error() -> None:
    with pytest.raises(TypeError, match="delta"):
        Gaussian(epsilon=1.0, sensitivity=1.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="sensitivity"):
        Laplace(epsilon=1.0)  # type: ignore[call-arg]


def test_extreme_but_valid_parameters_work() -> None:
    assert Laplace(epsilon=1e-6, sensitivity=1.0).accuracy() == pytest.approx(1e6 * math.log(20))
    assert Gaussian(epsilon=50.0, delta=1e-12, sensitivity=1.0).scale < 1.0
    assert Gaussian(epsilon=1.0, delta=0.999, sensitivity=1.0).scale > 0
    assert DiscreteGaussian(epsilon=30.0, delta=1e-9, sensitivity=1).accuracy() == 0
    assert Geometric(epsilon=1e-4, sensitivity=1).accuracy() > 29_000
