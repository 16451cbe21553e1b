"""Words and numbers the pages show a person: budget totals rounded the safe way, data reports in words."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dpdash.facts import Truncation
from dpdash.queries import DataReport, Mode, Quantile
from dpdash.wording import mechanism_name
from ui.numbers import left_text, spent_text
from ui.possible_releases import typical_first
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


def test_the_first_possible_release_shown_is_a_typical_one_and_none_is_lost() -> None:
    rng = np.random.default_rng(7)
    truth = np.array([100.0, 50.0])
    draws = truth + rng.laplace(scale=10.0, size=(30, 2))
    draws[0] = truth + np.array([400.0, -3.0])  # an outlier that would have been shown first
    ordered = typical_first(draws, truth)
    distance = np.abs(ordered - truth).max(axis=1)
    assert distance[0] < 400.0
    assert abs(distance[0] - np.median(distance)) == np.abs(distance - np.median(distance)).min()
    first = int(np.flatnonzero((draws == ordered[0]).all(axis=1))[0])
    np.testing.assert_array_equal(ordered[1:], np.delete(draws, first, axis=0))  # the rest kept, in order
    blind = typical_first(draws)  # no true values: the centre is each answer's median draw
    spread = np.abs(blind - np.median(draws, axis=0)).max(axis=1)
    assert abs(spread[0] - np.median(spread)) == np.abs(spread - np.median(spread)).min()


def test_mechanisms_are_named_as_people_read_them_and_a_selection_gap_in_rows() -> None:
    assert [mechanism_name(n) for n in ("ExponentialMechanism", "PermuteAndFlip", "ReportNoisyMax")] == [
        "Exponential mechanism", "Permute-and-flip", "Report noisy max",
    ]  # fmt: skip
    assert mechanism_name("something else") == "something else"
    quartiles = Quantile(column="x", candidates=(0.0, 1.0, 2.0), quantiles=(0.25, 0.5))
    assert quartiles.utility_per_row == (4, 2)  # u counts 1/b row for q = a/b
    assert Mode(column="x", categories=("a", "b")).utility_per_row == (1,)
