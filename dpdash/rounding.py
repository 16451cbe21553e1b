"""Released values as they are shown and exported: rounded to what their ± supports.

The one rule (``published_figures``), which the CSV export, the app's release tables, the stakeholder
report and the reproduction script all apply; the JSON release record and the ledger keep the full values.

- **The ± is shown with two significant digits, rounded up** (3.352 → 3.4, 147.2 → 150, 0.00412 →
  0.0042), so that Pr[|error| ≤ shown ±] ≥ Pr[|error| ≤ ±] still holds. A relative excess of at most
  1e-9 over two digits is taken as binary round-off, not rounded up (0.30000000000000004 → 0.30).
- **A value is rounded to the place of the ±'s second significant digit**: ± 3.4 → values to 0.1,
  ± 150 → to 10, ± 0.0042 → to 0.0001. Ties go **half to even** on the value's shortest decimal form
  (what the JSON record writes: 2.25 at ± 3.4 → 2.2, 2.35 → 2.4), as dpdash's ``round`` steps do. A
  rounded value moves by at most half a unit of its last digit, so the ± shown beside it is the stated
  ± plus that half unit, rounded up as above: with the stated confidence (or better) the shown value is
  within the shown ± of the true value. Integers stay integers (nothing to round when the unit is 1 or
  finer); a value rounded to a unit of 1 or coarser becomes an integer (1234.5 at ± 150 → 1230).
- **The owner's post-processing rules.** When the owner chose the precision (``round``,
  ``round_decimals:N``, ``round_significant:N``) or a structure rounding could break (``project_psd``),
  the values are shown as released (their ± already includes the owner's rounding). A clamp
  (``clamp_nonnegative``, ``clamp_to_bounds``) is applied again after rounding, so a value never leaves
  the owner's range.
- **No usable ±**: a ± of exactly 0 (an exact selection) keeps ``EXACT_DIGITS`` significant digits (only
  binary round-off such as 1.6800000000000002 goes); no ±, or an infinite or NaN one, keeps
  ``FIXED_DIGITS``. Values that are not finite numbers (NaN, ±∞, a category's name) are shown as they are.

Rounding is post-processing of released values: it uses nothing but the release itself, so the privacy
guarantee is unchanged and it costs no budget.

>>> f = published_figures_of((166.297119140625, -23.6, 1.6800000000000002), (3.352, 150.0, 0.00412))
>>> f.values, f.texts
((166.3, -20, 1.68), ('166.3', '-20', '1.6800'))
>>> f.half_width_texts
('3.5', '160', '0.0042')
"""

from __future__ import annotations

import decimal
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dpdash.errors import ParameterError

__all__ = [
    "EXACT_DIGITS",
    "FIXED_DIGITS",
    "OWNER_PRECISION",
    "ROUNDING",
    "ROUNDING_NOTE",
    "PublishedFigures",
    "half_width_exponent",
    "published_figures",
    "published_figures_of",
    "round_half_width",
    "round_value",
]

#: How ties are broken, in words (the rule's docstring says why).
ROUNDING = "half to even"
#: What a shown release says about its rounding (the app's release tables and the report).
ROUNDING_NOTE = (
    "Each value is rounded to what its ± supports (to the ±'s second significant digit, ties to even); the "
    "± is shown to two significant digits, rounded up, and covers the half unit rounding may move a value. "
    "The JSON release record keeps the full values. Rounding is post-processing: it costs no privacy."
)
#: Significant digits of a value whose ± is 0 (an exact selection): binary round-off goes, nothing else.
EXACT_DIGITS = 12
#: Significant digits of a value with no usable ± (none stated, infinite or NaN).
FIXED_DIGITS = 6
#: Post-processing steps after which the values are shown exactly as the owner's steps left them.
OWNER_PRECISION = ("round", "round_decimals", "round_significant", "project_psd")
#: Two significant digits of the ±.
_HALF_WIDTH_DIGITS = 2
#: A relative excess over a two-digit ± that is binary round-off, not a reason to round up.
_ROUND_OFF = 1e-9
#: Digits enough for any double to any place a double's ± can name (≈ 309 + 326).
_PRECISION = 1_000
#: Beyond this a double is not an exact integer everywhere: keep it a float.
_EXACT_INTEGERS = 2.0**53


def _decimal(x: float) -> Decimal:
    """The shortest decimal form of a double (what ``repr`` and the JSON record write)."""
    return Decimal(repr(float(x)))


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def round_half_width(half_width: float) -> float:
    """A ± rounded up to two significant digits (module docstring); 0, ∞ and NaN as they are.

    >>> round_half_width(3.352), round_half_width(147.2), round_half_width(0.00412), round_half_width(9.96)
    (3.4, 150.0, 0.0042, 10.0)

    Raises:
        ParameterError: a negative ±.
    """
    a = float(half_width)
    if a < 0:
        raise ParameterError(f"a half-width must be ≥ 0, got {a!r}")
    if a == 0 or not math.isfinite(a):
        return a
    exponent = _decimal(a).adjusted() - _HALF_WIDTH_DIGITS + 1
    unit = Decimal(1).scaleb(exponent)
    with decimal.localcontext(prec=_PRECISION):
        down = _decimal(a).quantize(unit, rounding=decimal.ROUND_FLOOR)
        up = down if _decimal(a) <= down * (1 + Decimal(_ROUND_OFF)) else down + unit
    return float(up)


def half_width_exponent(half_width: float) -> int | None:
    """e such that a value with this ± is rounded to a multiple of 10**e: the place of the second
    significant digit of the ± as shown (``round_half_width``). ``None`` when the ± is 0, ∞ or NaN.

    >>> [half_width_exponent(a) for a in (3.4, 150, 0.0042, 0)]
    [-1, 1, -4, None]
    """
    a = round_half_width(half_width)
    if a == 0 or not math.isfinite(a):
        return None
    return _decimal(a).adjusted() - _HALF_WIDTH_DIGITS + 1


def _quantized(x: float, exponent: int) -> Decimal:
    """The finite double ``x`` rounded to a multiple of 10**``exponent``, half to even on its shortest
    decimal form, never −0."""
    with decimal.localcontext(prec=_PRECISION):
        rounded = _decimal(x).quantize(Decimal(1).scaleb(exponent), rounding=decimal.ROUND_HALF_EVEN)
    return rounded.copy_abs() if rounded.is_zero() else rounded


def _as_number(rounded: Decimal, exponent: int) -> int | float:
    """An int when the unit is 1 or coarser (and the double is an exact integer), else a float."""
    out = float(rounded) + 0.0  # + 0.0: no −0.0
    if exponent >= 0 and abs(out) < _EXACT_INTEGERS:
        return int(out)
    return out


def round_value(value: Any, exponent: int) -> Any:
    """``value`` rounded to a multiple of 10**``exponent``, ties half to even on its shortest decimal
    form; an int (or a double that is an exact integer) when the unit is 1 or coarser, never −0. Integers
    with a unit finer than 1, non-finite numbers and other values are returned as they are.

    >>> round_value(2.25, -1), round_value(2.35, -1), round_value(1234.5, 1), round_value(-0.04, -1)
    (2.2, 2.4, 1230, 0.0)
    """
    if not _is_number(value):
        return value
    if isinstance(value, numbers.Integral) and exponent <= 0:
        return int(value)
    if not math.isfinite(float(value)):
        return value
    return _as_number(_quantized(float(value), exponent), exponent)


def _significant_exponent(x: float, digits: int) -> int:
    """The exponent of the unit of ``x``'s last digit when it is written with ``digits`` digits."""
    return _decimal(x).adjusted() - digits + 1


def _text(rounded: Decimal, exponent: int) -> str:
    """A rounded value with exactly the digits it kept (12.0 at a unit of 0.1 stays "12.0"): plain
    digits for everyday sizes, the shortest form of the double otherwise."""
    if abs(rounded) < Decimal(10) ** 15 and exponent >= -15:
        return format(rounded, "f")
    return repr(float(rounded))


@dataclass(frozen=True, slots=True)
class PublishedFigures:
    """Released values as shown and exported (``published_figures``), with their ±.

    Attributes:
        values: each value rounded (numbers: int or float; other values as they are).
        texts: each value as text, with exactly its kept digits.
        half_widths: each value's ± as shown (``None`` where the release states none).
        half_width_texts: the same as text ("" where there is none).
        joint_half_width: the ± of all values at once as shown (``None`` when not stated).
        joint_text: the same as text ("" when there is none).
        owner_precision: whether the owner's post-processing set the precision (values as released).
    """

    values: tuple[Any, ...]
    texts: tuple[str, ...]
    half_widths: tuple[float | None, ...]
    half_width_texts: tuple[str, ...]
    joint_half_width: float | None
    joint_text: str
    owner_precision: bool


def _one(value: Any, half_width: float | None, owner: bool) -> tuple[Any, str, float]:
    """(the shown value, its text, how far rounding may move it)."""
    if owner or not _is_number(value) or not math.isfinite(float(value)):
        return value, str(value), 0.0
    exponent = None if half_width is None else half_width_exponent(half_width)
    if isinstance(value, numbers.Integral) and (exponent is None or exponent <= 0):
        return int(value), str(int(value)), 0.0  # nothing to round
    if exponent is None:  # no usable ±: a fixed number of significant digits, written shortest
        if float(value) == 0:
            return 0.0, "0.0", 0.0
        digits = EXACT_DIGITS if half_width == 0 else FIXED_DIGITS
        exponent = _significant_exponent(float(value), digits)
        shown = _as_number(_quantized(float(value), exponent), exponent)
        return shown, str(shown), 0.5 * 10.0**exponent
    rounded = _quantized(float(value), exponent)
    return _as_number(rounded, exponent), _text(rounded, exponent), 0.5 * 10.0**exponent


def _shown_half_width(half_width: float | None, moved: float) -> float | None:
    if half_width is None:
        return None
    a = float(half_width)
    if math.isnan(a) or math.isinf(a):
        return a
    if a == 0 and moved > 0:  # an exact value kept to EXACT_DIGITS: only round-off moved it
        return 0.0
    return round_half_width(a + moved)


def _half_width_text(a: float | None) -> str:
    if a is None:
        return ""
    if a == 0 or not math.isfinite(a):
        return "0" if a == 0 else str(a)
    exponent = _significant_exponent(a, _HALF_WIDTH_DIGITS)
    if exponent >= 0 and a < 1e15:
        return str(int(a))
    if -15 <= exponent < 0:
        return f"{a:.{-exponent}f}"
    return f"{a:.{_HALF_WIDTH_DIGITS - 1}e}"


def published_figures_of(
    values: Sequence[Any],
    half_widths: Sequence[float | None],
    joint_half_width: float | None = None,
    *,
    postprocessing: Sequence[str] = (),
    query: Any = None,
) -> PublishedFigures:
    """The rule of the module docstring applied to ``values`` with their stated ``half_widths`` (missing
    ones count as none) and the ± of all at once; ``postprocessing`` is the owner's steps and ``query``
    the query spec (needed only to clamp into a mean's or variance's bounds again)."""
    from dpdash.postprocessing import parse_step, postprocess_values

    names = [parse_step(step)[0] for step in postprocessing]
    owner = any(name in OWNER_PRECISION for name in names)
    widths = list(half_widths) + [None] * (len(values) - len(half_widths))
    shown, texts, moves = [], [], []
    for value, width in zip(values, widths, strict=False):
        one, text, moved = _one(value, width, owner)
        shown.append(one)
        texts.append(text)
        moves.append(moved)
    clamps = [step for step, name in zip(postprocessing, names, strict=True) if name.startswith("clamp")]
    if clamps and not owner:
        for i in _outside(shown, clamps, query, postprocess_values):
            shown[i], texts[i] = values[i], str(values[i])  # the released value, on the owner's bound
    half = tuple(_shown_half_width(w, m) for w, m in zip(widths, moves, strict=True))
    joint = None
    if joint_half_width is not None:
        joint = _shown_half_width(joint_half_width, max(moves, default=0.0))
    return PublishedFigures(
        values=tuple(shown),
        texts=tuple(texts),
        half_widths=half,
        half_width_texts=tuple(_half_width_text(a) for a in half),
        joint_half_width=joint,
        joint_text=_half_width_text(joint),
        owner_precision=owner,
    )


def _outside(shown: list[Any], clamps: list[str], query: Any, postprocess_values: Any) -> list[int]:
    """Which rounded values the owner's clamps would move (rounding crossed a bound that is not on the
    rounding grid)."""
    out = []
    for i, value in enumerate(shown):
        number = _is_number(value) and math.isfinite(float(value))
        if number and float(postprocess_values(clamps, query, [float(value)])[0]) != float(value):
            out.append(i)
    return out


def published_figures(release: Any) -> PublishedFigures:
    """A release's values as shown and exported (the module docstring's rule), from its ``values``, its
    ``accuracy`` (``dpdash.published.Accuracy``) and, when it has them, its ``postprocessing`` steps and
    query (``spec``): a ``dpdash.release.Release`` or a ``dpdash.export.SimulatedRelease``."""
    accuracy = release.accuracy
    joint = accuracy.joint_half_width if len(release.values) > 1 else None
    steps = tuple(getattr(release, "postprocessing", ()))
    query = getattr(release, "spec", None) if any(s.startswith("clamp_to_bounds") for s in steps) else None
    return published_figures_of(
        release.values, accuracy.half_widths, joint, postprocessing=steps, query=query
    )
