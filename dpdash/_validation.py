"""One place for parameter checks.

Each check returns the value converted to a plain Python number and raises ``ParameterTypeError`` (a
``TypeError``) for a wrong type or ``ParameterError`` (a ``ValueError``) for a bad range. Messages name
the parameter, the rule and the value: ``epsilon must be a finite number > 0, got epsilon=-1``.
Nothing is clamped.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import numpy.typing as npt

from dpdash.errors import ParameterError, ParameterTypeError

#: The ε every dpdash mechanism (and ``release``, and the app) accepts. Below 1e-6 the noise of an exact
#: release no longer fits the grid's exact range for every query and report-noisy-max's exact
#: probabilities take minutes; above 100 the staircase's and the Gaussians' tails underflow, and
#: e^ε (the odds an attacker gains) passes 10^43: no deployment needs more.
EPSILON_MIN = 1e-6
EPSILON_MAX = 100.0
#: Real-valued sensitivities: noise scales Δ/ε and their squares stay ordinary doubles.
SENSITIVITY_MIN = 1e-100
SENSITIVITY_MAX = 1e100
#: Integer sensitivities: answers are released below 2**51 in magnitude, so no change is larger.
INTEGER_SENSITIVITY_MAX = 2**52
#: Most numbers one ``simulate`` or ``release_trials`` call draws (draws × answers).
MAX_DRAWS = 10**8


def _real(value: object, name: str) -> float:
    """``value`` as a float, refusing bools, strings and other non-real types."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(
            f"{name} must be a real number, got {name}={value!r} ({type(value).__name__})"
        )
    try:
        return float(value)
    except OverflowError:  # an int beyond the largest double
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]


def _fail(name: str, rule: str, value: object) -> ParameterError:
    return ParameterError(f"{name} must be {rule}, got {name}={value!r}")


def positive_finite(value: object, name: str) -> float:
    """A finite real number > 0 (ε, a sensitivity, a scale)."""
    x = _real(value, name)
    if not (math.isfinite(x) and x > 0):
        raise _fail(name, "a finite number > 0", value)
    return x


def _positive_between(
    value: object, name: str, low: float, high: float, *, why: str = "", advice: str = ""
) -> float:
    """A finite real number > 0 in [low, high]; a refusal says ``why`` after the range and ends with
    ``advice``."""
    x = positive_finite(value, name)
    if not low <= x <= high:
        rule = f"between {low:g} and {high:g}{why}"
        raise ParameterError(f"{name} must be {rule}, got {name}={value!r}{advice}")
    return x


def epsilon(value: object, name: str = "epsilon") -> float:
    """A privacy parameter ε in [EPSILON_MIN, EPSILON_MAX] (the range every mechanism computes exactly)."""
    why = " (the range in which every dpdash mechanism computes its noise exactly)"
    return _positive_between(value, name, EPSILON_MIN, EPSILON_MAX, why=why)


def sensitivity(value: object, name: str = "sensitivity") -> float:
    """A real sensitivity Δ in [SENSITIVITY_MIN, SENSITIVITY_MAX]."""
    advice = "; rescale the data (e.g. report in thousands) so the sensitivity falls in that range"
    return _positive_between(value, name, SENSITIVITY_MIN, SENSITIVITY_MAX, advice=advice)


def integer_sensitivity(value: object, mechanism: str, name: str = "sensitivity") -> int:
    """An integer sensitivity 1 ≤ Δ ≤ INTEGER_SENSITIVITY_MAX (integer queries); ``mechanism`` names who
    needs it."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        big: int | None = int(value)  # exact, even beyond 2**53
        if big <= 0:
            raise _fail(name, "a finite number > 0", value)
    else:
        x = positive_finite(value, name)
        big = int(x) if x == math.floor(x) else None
    if big is None or big > INTEGER_SENSITIVITY_MAX:
        raise ParameterError(
            f"{name} must be an integer >= 1 and <= 2**52 for the {mechanism} mechanism (integer "
            f"queries), got {name}={value!r}"
        )
    return big


def draws(value: object, name: str, per_draw: int = 1) -> int:
    """A number of draws ≥ 0 with ``value × per_draw`` ≤ MAX_DRAWS (one call's memory stays bounded)."""
    n = non_negative_int(value, name)
    if n * max(per_draw, 1) > MAX_DRAWS:
        raise ParameterError(
            f"{name} × answers must be at most {MAX_DRAWS:,} numbers per call, got {name}={value!r} for "
            f"{per_draw:,} answer(s); draw in several calls"
        )
    return n


def non_negative_array(values: npt.ArrayLike, name: str) -> np.ndarray:
    """An array of finite real numbers ≥ 0 (a grid of ε′ for a privacy profile)."""
    array = numeric_array(values, name)
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ParameterError(f"{name} must be finite numbers >= 0, got {name}={_show(values)}")
    return array


def numeric_array(values: npt.ArrayLike, name: str, kinds: str = "iuf") -> np.ndarray:
    """``values`` as a numpy array of real numbers (float, or the integers given): a rectangular array,
    nothing masked, of a dtype kind in ``kinds`` ("b" admits booleans).

    Refuses strings, ``None``, objects, ragged nested lists, integers of 2**64 or more and masked arrays
    with masked entries (np.asarray would silently use the values under the mask).
    """
    if isinstance(values, np.ma.MaskedArray):
        if np.ma.count_masked(values):
            raise ParameterError(
                f"{name} has {np.ma.count_masked(values)} masked (missing) entries; drop or fill them "
                "first: dpdash never releases the values hidden under a mask"
            )
        values = values.data
    try:
        array = np.asarray(values)
    except (TypeError, ValueError, OverflowError):
        array = None
    if array is None or array.dtype.kind not in kinds:
        raise ParameterError(
            f"{name} must be numbers, got {name}={_show(values)}; give a number or a rectangular array of "
            "ints or floats"
        )
    return array.astype(float, copy=False) if array.dtype.kind == "f" else array


def _show(values: object) -> str:
    text = repr(values)
    return text if len(text) <= 80 else text[:77] + "..."


def non_negative_finite(value: object, name: str) -> float:
    """A finite real number ≥ 0 (an accuracy target for an integer mechanism)."""
    x = _real(value, name)
    if not (math.isfinite(x) and x >= 0):
        raise _fail(name, "a finite number >= 0", value)
    return x


def open_unit(value: object, name: str) -> float:
    """A real number strictly between 0 and 1 (δ, a confidence level)."""
    x = _real(value, name)
    if not (0.0 < x < 1.0):
        raise _fail(name, "a number strictly between 0 and 1", value)
    return x


def finite(value: object, name: str) -> float:
    """Any finite real number (a true answer)."""
    x = _real(value, name)
    if not math.isfinite(x):
        raise _fail(name, "a finite number", value)
    return x


def positive_int(value: object, name: str) -> int:
    """An integer ≥ 1 (a count of answers k, a group size).

    Integral floats such as ``3.0`` are accepted as the integer they equal; ``2.5`` is refused.
    """
    x = _real(value, name)
    if not (math.isfinite(x) and x >= 1 and x == math.floor(x)):
        raise _fail(name, "an integer >= 1", value)
    return int(x)


def non_negative_int(value: object, name: str) -> int:
    """An integer ≥ 0 (a number of draws)."""
    x = _real(value, name)
    if not (math.isfinite(x) and x >= 0 and x == math.floor(x)):
        raise _fail(name, "an integer >= 0", value)
    return int(x)


def one_of(value: object, name: str, choices: tuple[str, ...]) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str):
        raise ParameterTypeError(f"{name} must be one of {choices}, got {name}={value!r}")
    if value not in choices:
        raise _fail(name, f"one of {choices}", value)
    return value
