"""The rounding rule of shown and exported values (``dpdash.rounding``): closed cases, signs, zeros,
non-finite numbers, extreme ±, the owner's post-processing, and what is published against what the ±
promised."""

from __future__ import annotations

import csv
import io
import json
import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from dpdash.errors import ParameterError
from dpdash.export import release_csv
from dpdash.facts import Bounds
from dpdash.queries import Histogram, Mean
from dpdash.release import Release, release
from dpdash.rounding import (
    EXACT_DIGITS,
    FIXED_DIGITS,
    half_width_exponent,
    published_figures,
    published_figures_of,
    round_half_width,
    round_value,
)


def _one(value: object, half_width: float | None, **kwargs: object):  # type: ignore[no-untyped-def]
    figures = published_figures_of((value,), (half_width,), **kwargs)  # type: ignore[arg-type]
    return figures.values[0], figures.texts[0], figures.half_widths[0], figures.half_width_texts[0]


# ---- closed cases ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("half_width", "shown", "exponent"),
    [
        (3.4, 3.4, -1),  # exactly two digits: as it is (binary 3.4 is not rounded up to 3.5)
        (3.352, 3.4, -1),
        (3.41, 3.5, -1),  # rounded up, never down: the shown ± holds wherever the stated one does
        (147.2, 150.0, 1),
        (150.0, 150.0, 1),
        (0.00412, 0.0042, -4),
        (0.0042, 0.0042, -4),
        (9.96, 10.0, 0),  # up to the next power of ten: two digits "10", the unit is 1
        (99.5, 100.0, 1),
        (0.1 + 0.2, 0.3, -2),  # 0.30000000000000004: binary round-off, not rounded up to 0.31
        (1.0, 1.0, -1),
    ],
)
def test_the_plus_minus_has_two_significant_digits_rounded_up(
    half_width: float, shown: float, exponent: int
) -> None:
    assert round_half_width(half_width) == shown
    assert half_width_exponent(half_width) == exponent
    assert round_half_width(half_width) >= half_width * (1 - 1e-9)


@pytest.mark.parametrize(
    ("value", "half_width", "text"),
    [
        (166.297119140625, 3.4, "166.3"),  # the Laplace count
        (166.297119140625, 150.0, "170"),
        (1.6800000000000002, 0.0042, "1.6800"),  # the issue's float noise, kept to the ±'s digits
        (-23.6, 150.0, "-20"),  # the "(other)" cell
        (-23.6, 3.4, "-23.6"),
        (12.0, 3.4, "12.0"),  # trailing zeros say how precise the value is
        (1234.5, 150.0, "1230"),
        (0.123456, 0.0042, "0.1235"),
    ],
)
def test_values_are_rounded_to_the_second_significant_digit_of_their_plus_minus(
    value: float, half_width: float, text: str
) -> None:
    shown, shown_text, _, _ = _one(value, half_width)
    assert shown_text == text and float(shown_text) == shown


@pytest.mark.parametrize(
    ("value", "exponent", "rounded"),
    [(2.25, -1, 2.2), (2.35, -1, 2.4), (-2.25, -1, -2.2), (-2.35, -1, -2.4), (0.125, -2, 0.12),
     (1250, 2, 1200), (1350, 2, 1400), (2.675, -2, 2.68)],
)  # fmt: skip
def test_ties_go_half_to_even_on_the_shortest_decimal_form(
    value: float, exponent: int, rounded: float
) -> None:
    """Half to even, as dpdash's ``round`` steps; on the decimal the record writes (2.675 is a tie there,
    though the double below it is 2.67499999…)."""
    assert round_value(value, exponent) == rounded


# ---- signs, zeros, integers ----------------------------------------------------------------------------


def test_negative_values_and_zeros_never_show_minus_zero() -> None:
    for value in (-0.04, -0.0, 0.0, 0.04):
        shown, text, _, _ = _one(value, 3.4)
        assert shown == 0.0 and text == "0.0" and math.copysign(1.0, shown) == 1.0
    assert _one(-0.04, 150.0)[:2] == (0, "0")
    assert _one(-1234.5, 150.0)[:2] == (-1230, "-1230")


def test_integers_stay_integers_and_are_rounded_only_to_a_unit_above_one() -> None:
    assert _one(12, 3.4)[:3] == (12, "12", 3.4)  # nothing to round: the ± is shown as stated
    shown, text, width, _ = _one(1234, 150.0)
    assert (shown, text) == (1230, "1230") and isinstance(shown, int)
    assert width == 160.0  # 150 + half the unit of 10 the value may have moved, two digits up
    assert isinstance(_one(np.int64(7), 3.4)[0], int)


def test_a_plus_minus_of_zero_keeps_an_exact_value_and_drops_only_round_off() -> None:
    assert _one(1.6800000000000002, 0.0) == (1.68, "1.68", 0.0, "0")
    assert _one(1234567.5, 0.0)[:2] == (1234567.5, "1234567.5")  # exact: no digit that means anything goes
    assert _one(41, 0.0) == (41, "41", 0.0, "0")
    assert EXACT_DIGITS > FIXED_DIGITS


def test_no_plus_minus_infinite_or_nan_keeps_a_fixed_precision() -> None:
    for width, text in ((None, ""), (math.inf, "inf"), (math.nan, "nan")):
        shown, value_text, _, width_text = _one(166.297119140625, width)
        assert shown == 166.297 and value_text == "166.297" and width_text == text  # FIXED_DIGITS = 6
    figures = published_figures_of((1.5, 2.5), (3.4,))  # fewer ± than values: the last has none
    assert figures.texts == ("1.5", "2.5") and figures.half_width_texts == ("3.5", "")


def test_values_that_are_not_finite_numbers_are_shown_as_they_are() -> None:
    assert _one(math.inf, 3.4)[:2] == (math.inf, "inf")
    assert math.isnan(_one(math.nan, 3.4)[0])
    assert _one("smoker", 3.4)[:2] == ("smoker", "smoker")  # a mode's category; its ± is in rows
    assert _one(True, 3.4)[0] is True


def test_a_negative_plus_minus_is_refused_with_its_value() -> None:
    with pytest.raises(ParameterError, match=r"half-width must be ≥ 0, got -1\.0"):
        round_half_width(-1.0)


# ---- extreme ± -----------------------------------------------------------------------------------------


def test_a_very_small_plus_minus() -> None:
    shown, text, _, width_text = _one(0.1234567890123456, 1.234e-12)
    assert text == "0.1234567890123" and shown == 0.1234567890123
    assert width_text == "0.0000000000013"
    shown, text, _, width_text = _one(1e300, 1e-300)  # 600 digits below the value's first: as it is
    assert shown == 1e300 and text == "1e+300" and width_text == "1.1e-300"


def test_a_very_large_plus_minus() -> None:
    assert _one(12345.6, 1e20)[:2] == (0, "0")
    shown, text, _, width_text = _one(3.2149e21, 1e20)  # ± 1.0e20: to a unit of 1e19
    assert shown == 3.21e21 and text == "3.21e+21" and width_text == "1.1e+20"


# ---- the owner's post-processing rules ------------------------------------------------------------------


def test_the_owners_rounding_is_published_as_released() -> None:
    """Values the owner rounded (integers, decimals, significant digits) are shown as released: the
    owner chose the precision, and the ± already includes that rounding."""
    for step, value in (("round", 1234), ("round_decimals:3", 4.966), ("round_significant:2", 170.0)):
        figures = published_figures_of((value,), (150.0,), postprocessing=(step,))
        assert figures.owner_precision and figures.values == (value,) and figures.half_widths == (150.0,)
    assert published_figures_of((1234,), (150.0,), postprocessing=("round",)).texts == ("1234",)


def test_a_clamp_is_kept_after_rounding() -> None:
    """A mean clamped into [0, 9.97] whose value sits on the upper bound: rounding to 0.1 would give 10.0,
    outside the owner's range, so the bound itself is shown."""
    query = Mean(column="v", bounds=Bounds(0.0, 9.97))
    steps = ("clamp_to_bounds",)
    figures = published_figures_of((9.97, 5.04), (3.4, 3.4), postprocessing=steps, query=query)
    assert figures.values == (9.97, 5.0) and figures.texts == ("9.97", "5.0")
    figures = published_figures_of((0.0, 0.03), (3.4, 3.4), postprocessing=("clamp_nonnegative",))
    assert figures.values == (0.0, 0.0) and not figures.owner_precision


# ---- what is published against what was promised -------------------------------------------------------


def test_published_values_stay_within_half_a_unit_and_the_shown_plus_minus_covers_them() -> None:
    """Seeded, 20 000 values and ± over 24 orders of magnitude, either sign. Stated: the shown value is
    within half a unit of its last digit of the released value (exactly, in decimal; 0 when nothing was
    rounded), so wherever the released value is within ±a of the truth, the shown value is within the
    shown ± (≥ a + that half unit), which is at most a + 1.5 units."""
    rng = np.random.default_rng(27)
    values = rng.choice([-1, 1], 20_000) * 10.0 ** rng.uniform(-12, 12, 20_000)
    widths = 10.0 ** rng.uniform(-12, 12, 20_000)
    values, widths = values.tolist(), widths.tolist()
    figures = published_figures_of(values, widths)
    for value, width, shown, text, shown_width in zip(
        values, widths, figures.values, figures.texts, figures.half_widths, strict=True
    ):
        unit = Decimal(10) ** half_width_exponent(width)
        moved = abs(Decimal(text) - Decimal(repr(value)))
        assert moved <= unit / 2
        assert float(text) == shown
        assert shown_width is not None
        assert Decimal(repr(width)) + moved <= Decimal(repr(shown_width)) * (1 + Decimal("1e-9"))
        assert shown_width <= width + 1.5 * float(unit)


def test_the_csv_rounds_and_the_json_record_keeps_the_full_values() -> None:
    """The issue's example: Laplace counts (a fine grid, 166.297119140625) are exported to the place of
    their ±'s second digit; the JSON record keeps every digit."""
    df = pd.DataFrame({"x": ["a"] * 166 + ["b"] * 40})
    made = release(Histogram(column="x", categories=["a", "b"]), "laplace", df, epsilon=1.0)
    rows = list(csv.reader(io.StringIO(release_csv(made))))
    figures = published_figures(made)
    assert [r[1] for r in rows[1:]] == list(figures.texts)
    assert all(len(r[1].partition(".")[2]) == 1 for r in rows[1:])  # ± ≈ 3.0: values to 0.1
    assert [r[2] for r in rows[1:]] == list(figures.half_width_texts) == ["3.1"] * 3
    assert rows[1][3] == figures.joint_text == "4.2"
    record = json.loads(made.to_json())
    assert record["values"] == list(made.values) and record["accuracy"]["half_widths"][0] == pytest.approx(
        2.9963, abs=1e-4
    )
    assert Release.from_json(made.to_json()).values == made.values  # nothing lost on the way back


def test_the_owners_integers_are_what_the_csv_publishes() -> None:
    df = pd.DataFrame({"x": ["a"] * 166 + ["b"] * 40})
    query = Histogram(column="x", categories=["a", "b"])
    made = release(query, "laplace", df, epsilon=0.005, postprocess=["round"])  # ± ≈ 600: alone, to tens
    assert published_figures(made).owner_precision
    rows = list(csv.reader(io.StringIO(release_csv(made))))
    assert [r[1] for r in rows[1:]] == [str(v) for v in made.values]
    assert all(isinstance(v, int) for v in made.values)
