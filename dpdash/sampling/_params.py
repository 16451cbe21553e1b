"""Parameter checks for the exact samplers: exact rationals in, readable errors out.

Every parameter of a sampling decision is an exact rational. A ``float`` is accepted because it
*is* an exact dyadic rational: ``Fraction(0.7)`` is the binary number the float holds, not 7/10.
Messages follow the project rule (name, rule, value): ``scale must be a finite number > 0, got
scale=-1``. The errors are ``dpdash.errors.ParameterError`` (a ``ValueError``) and
``ParameterTypeError`` (a ``TypeError``).
"""

from __future__ import annotations

import math
import numbers
from decimal import Decimal
from fractions import Fraction

from dpdash.errors import ParameterError, ParameterTypeError

#: Anything accepted where the samplers want an exact rational.
RationalLike = Fraction | int | float

#: A sample shape: a number of draws or a tuple of dimensions.
Size = int | tuple[int, ...]


def _fail(name: str, rule: str, value: object) -> ParameterError:
    return ParameterError(f"{name} must be {rule}, got {name}={value!r}")


def to_fraction(value: object, name: str, rule: str) -> Fraction:
    """``value`` as an exact ``Fraction``; ``rule`` is quoted when the value is not finite.

    Accepts ``Fraction``, any ``numbers.Rational`` (``int``, numpy integers), ``float`` (numpy
    floats included) and ``Decimal``, each converted without rounding. Refuses ``bool`` and
    non-numbers.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real | Decimal):
        raise ParameterTypeError(
            f"{name} must be a real number, got {name}={value!r} ({type(value).__name__})"
        )
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise _fail(name, rule, value)
        return Fraction(value)
    x = float(value)  # a numpy float or a float subclass; exact for binary64 and narrower
    if not math.isfinite(x):
        raise _fail(name, rule, value)
    return Fraction(x)


def positive_scale(value: object, name: str, maximum: int, maximum_text: str) -> Fraction:
    """A finite rational in (0, maximum] (a noise scale); ``maximum_text`` spells the bound."""
    x = to_fraction(value, name, "a finite number > 0")
    if x <= 0:
        raise _fail(name, "a finite number > 0", value)
    if x > maximum:
        raise _fail(name, f"a finite number > 0 and <= {maximum_text}", value)
    return x


def probability(value: object, name: str) -> Fraction:
    """A rational in [0, 1]."""
    rule = "a number in [0, 1]"
    x = to_fraction(value, name, rule)
    if not 0 <= x <= 1:
        raise _fail(name, rule, value)
    return x


def non_negative(value: object, name: str) -> Fraction:
    """A finite rational >= 0."""
    rule = "a finite number >= 0"
    x = to_fraction(value, name, rule)
    if x < 0:
        raise _fail(name, rule, value)
    return x


def shape(size: object) -> tuple[int, ...]:
    """``size`` as a shape tuple: an integer >= 0, or a tuple of them."""
    rule = "an integer >= 0 or a tuple of integers >= 0"
    dims = size if isinstance(size, tuple) else (size,)
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise ParameterTypeError(f"size must be {rule}, got size={size!r} ({type(size).__name__})")
        if d < 0:
            raise _fail("size", rule, size)
        out.append(int(d))
    return tuple(out)


def integer_in(value: object, name: str, low: int, high: int, high_text: str) -> int:
    """An integer in [low, high] (``high_text`` spells ``high`` in the message)."""
    rule = f"an integer in [{low}, {high_text}]"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterTypeError(f"{name} must be {rule}, got {name}={value!r} ({type(value).__name__})")
    x = int(value)
    if not low <= x <= high:
        raise _fail(name, rule, value)
    return x
