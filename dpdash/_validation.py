"""One place for parameter checks.

Each check returns the value converted to a plain Python number and raises ``ParameterTypeError`` (a
``TypeError``) for a wrong type or ``ParameterError`` (a ``ValueError``) for a bad range. Messages name
the parameter, the rule and the value: ``epsilon must be a finite number > 0, got epsilon=-1``.
Nothing is clamped.
"""

from __future__ import annotations

import math
import numbers

from dpdash.errors import ParameterError, ParameterTypeError


def _real(value: object, name: str) -> float:
    """``value`` as a float, refusing bools, strings and other non-real types."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(
            f"{name} must be a real number, got {name}={value!r} ({type(value).__name__})"
        )
    return float(value)


def _fail(name: str, rule: str, value: object) -> ParameterError:
    return ParameterError(f"{name} must be {rule}, got {name}={value!r}")


def positive_finite(value: object, name: str) -> float:
    """A finite real number > 0 (ε, a sensitivity, a scale)."""
    x = _real(value, name)
    if not (math.isfinite(x) and x > 0):
        raise _fail(name, "a finite number > 0", value)
    return x


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
