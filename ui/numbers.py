"""Numbers and counts as people read them: plurals, percentages with enough digits, δ without "0e+0".

One helper per rule, used by every page and chart that shows such a number.
"""

from __future__ import annotations

import math

__all__ = ["all_of", "delta_text", "left_text", "percent", "plural", "significant", "spent_text", "thousands"]


def plural(n: int, noun: str, plural_form: str | None = None) -> str:
    """``n`` and the noun in the right number, with thin-space thousands.

    >>> plural(1, "answer"), plural(3, "answer"), plural(10_000, "release"), plural(2, "query", "queries")
    ('1 answer', '3 answers', '10 000 releases', '2 queries')
    """
    word = noun if n == 1 else (plural_form or noun + "s")
    return f"{thousands(n)} {word}"


def all_of(n: int, noun: str, plural_form: str | None = None) -> str:
    """"one answer" for 1, "all 3 answers" for more (never "all 1 answers").

    >>> all_of(1, "answer"), all_of(3, "answer")
    ('one answer', 'all 3 answers')
    """
    return f"one {noun}" if n == 1 else f"all {plural(n, noun, plural_form)}"


def thousands(n: int) -> str:
    """A whole number with spaces between thousands, as the app writes them: ``thousands(100000)`` is
    "100 000"."""
    return f"{n:,}".replace(",", " ")


def significant(x: float, digits: int = 2) -> str:
    """``x`` with ``digits`` significant digits, never in exponent form for everyday sizes and never
    rounded to a bare 0 (only 0 is shown as 0).

    >>> significant(0.00015), significant(12.345), significant(0.0), significant(123456.0)
    ('0.00015', '12', '0', '120000')
    """
    if not math.isfinite(x):
        return "∞" if x > 0 else "−∞" if x < 0 else "n/a"
    if x == 0:
        return "0"
    exponent = math.floor(math.log10(abs(x)))
    if exponent < -8 or exponent > 15:
        return f"{x:.{digits - 1}e}"
    decimals = digits - 1 - exponent
    rounded = round(x, decimals)
    if math.floor(math.log10(abs(rounded))) > exponent:  # 0.0996 → 0.10 at 2 digits: one digit fewer
        decimals -= 1
        rounded = round(x, decimals)
    return f"{rounded:.{max(decimals, 0)}f}"


def percent(share: float, digits: int = 2) -> str:
    """A share as a percentage with ``digits`` significant digits (0.00015 → "0.015 %"): small errors are
    not rounded away to "0.0 %".

    >>> percent(0.00015), percent(0.25), percent(0.0), percent(float("inf"))
    ('0.015 %', '25 %', '0 %', '∞')
    """
    if math.isinf(share):
        return "∞"
    return f"{significant(100 * share, digits)} %"


def delta_text(delta: float) -> str:
    """δ as people write it: "0" for pure DP, "1e-5" rather than "1e-05", plain decimals from 0.001 up,
    and "n/a" for NaN (no δ applies).

    >>> delta_text(0.0), delta_text(1e-5), delta_text(3.4e-7), delta_text(0.05), delta_text(float("nan"))
    ('0', '1e-5', '3.4e-7', '0.05', 'n/a')
    """
    if math.isnan(delta):
        return "n/a"
    if delta == 0:
        return "0"
    if abs(delta) >= 1e-3:
        return f"{delta:g}"
    mantissa, exponent = f"{delta:.2g}".split("e") if "e" in f"{delta:.2g}" else (f"{delta:.2g}", "0")
    return f"{mantissa}e{int(exponent)}"


def spent_text(x: float, digits: int = 3) -> str:
    """A privacy-loss total (ε or δ spent) for reading: ``digits`` significant digits, rounded UP, so the
    number shown never understates what was spent. Floating-point dust within 1e-9 of a shown value is not
    rounded up (0.30000000000000004 reads 0.3); the exact value belongs in a tooltip or an export.

    >>> spent_text(0.09998), spent_text(0.1 + 0.2), spent_text(0.12301), spent_text(2.0), spent_text(1234.5)
    ('0.1', '0.3', '0.124', '2', '1240')
    """
    return _directed(x, digits, up=True)


def left_text(x: float, digits: int = 3) -> str:
    """What remains of a budget for reading: like :func:`spent_text`, rounded DOWN, never overstating it.

    >>> left_text(0.09998), left_text(0.9), left_text(0.12399), left_text(0.0)
    ('0.0999', '0.9', '0.123', '0')
    """
    return _directed(x, digits, up=False)


def _directed(x: float, digits: int, *, up: bool) -> str:
    if not math.isfinite(x) or x == 0:
        return significant(x, digits)
    decimals = digits - 1 - math.floor(math.log10(abs(x)))
    scaled = x * 10.0**decimals
    nearest = round(scaled)
    if abs(scaled - nearest) <= 1e-9 * max(1.0, abs(scaled)):
        whole = nearest
    else:
        whole = math.ceil(scaled) if up else math.floor(scaled)
    if decimals <= 0:
        return str(whole * 10 ** (-decimals))
    text = f"{whole / 10**decimals:.{decimals}f}"
    return text.rstrip("0").rstrip(".")
