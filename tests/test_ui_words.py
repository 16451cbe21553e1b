"""Words and numbers the pages show a person: budget totals rounded the safe way, data reports in words."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from dpdash.facts import Truncation
from dpdash.queries import DataReport
from ui.numbers import left_text, spent_text
from ui.previews import outside_words


@given(st.floats(min_value=1e-6, max_value=1e6))
def test_spent_is_never_shown_below_what_was_spent_nor_remaining_above_what_remains(x: float) -> None:
    assert float(spent_text(x)) >= x * (1 - 1e-9)
    assert float(left_text(x)) <= x * (1 + 1e-9)
    # at 3 significant digits: within one unit of the third digit of the exact value
    unit = 10.0 ** (math.floor(math.log10(x)) - 2)
    assert float(spent_text(x)) - x <= unit * (1 + 1e-9) and x - float(left_text(x)) <= unit * (1 + 1e-9)


def test_a_total_just_under_a_round_number_reads_as_that_number() -> None:
    assert spent_text(0.09998) == "0.1" and left_text(0.09998) == "0.0999"
    assert spent_text(0.1 + 0.2) == "0.3" and left_text(0.1 + 0.2) == "0.3"  # float dust is not rounded


def _report(outside: int, policy: str | None) -> DataReport:
    return DataReport(rows=100, rows_used=55, truncation=Truncation(100, 100, 0, 0, None, None),
                      outside=outside, outside_policy=policy)  # fmt: skip


def test_values_outside_the_declared_cells_are_said_in_words_never_none() -> None:
    assert outside_words(_report(45, "drop")) == (
        "45 values outside the declared categories or bins (left out of the answer)"
    )
    assert outside_words(_report(1, "other")) == (
        "1 value outside the declared categories or bins (counted in the extra “(other)” cell)"
    )
    quantile = outside_words(_report(45, None))
    assert quantile == "45 values outside the declared range of candidates" and "None" not in quantile
