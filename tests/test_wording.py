"""The guarantee in words (``dpdash.wording``): exact for each neighbour relation and unit of privacy, for
pure (δ = 0) and approximate (δ > 0) DP, with the technical form beside it."""

from __future__ import annotations

import math

import pytest

from dpdash.facts import Facts
from dpdash.wording import accuracy_words, delta_words, factor, guarantee, percent, protected_unit

ROW = Facts()
REPLACE_ROW = Facts(neighbours="substitute")
TRUSTED = Facts(rows_per_person=3)
ENFORCED = Facts(rows_per_person=3, id_column="patient")
ENFORCED_ONE = Facts(id_column="patient")
REPLACE_PERSON = Facts(neighbours="substitute", rows_per_person=4, id_column="pid")


def test_one_row_add_remove_pure() -> None:
    words = guarantee(ROW, 0.5)
    assert words.plain == (
        "Protects each row: the chance of any result of this release changes by at most a factor of "
        "e^0.5 ≈ 1.65 whether or not any one row is in the table. Each row is one person only if, as "
        "declared, no one has more than one row: nothing checks this (no person id column)."
    )
    assert "x′ is x with one row added or removed" in words.technical
    assert "(0.5, 0)-differential privacy" in words.technical and "pure ε-DP, δ = 0" in words.technical
    # No "person's rows" beside "one row": the contradiction the sidebar used to show.
    assert "person's rows" not in words.plain + words.technical


def test_replace_one_row_says_the_row_count_is_public() -> None:
    words = guarantee(REPLACE_ROW, 1.0)
    assert "whatever values any one row holds (how many rows there are is not protected)" in words.plain
    assert "whether or not" not in words.plain
    assert "replaced by as many rows with other values" in words.technical


def test_per_person_trusted_says_nothing_checks_it() -> None:
    words = guarantee(TRUSTED, 1.0)
    assert words.plain.startswith("Protects each person (up to 3 rows each): ")
    assert "whether or not any one person's rows are in the table" in words.plain
    assert "only if, as declared, no one has more than 3 rows: nothing checks this" in words.plain
    assert "at most 3 rows) added or removed" in words.technical
    assert "trusted as declared" in words.technical and "truncation" not in words.technical


def test_per_person_enforced_says_what_truncation_leaves_out() -> None:
    words = guarantee(ENFORCED, 1.0)
    assert words.plain.startswith("Protects each person (up to 3 rows each, identified by “patient”): ")
    assert (
        "Each person counts with at most 3 of their rows, picked by a fixed rule (not by row order); their "
        "other rows and rows without an id are left out of every answer." in words.plain
    )
    assert "as declared" not in words.plain
    assert "on column 'patient': each id keeps 3 rows, picked by a hash" in words.technical
    one = guarantee(ENFORCED_ONE, 1.0)
    assert "one row each, identified by “patient”" in one.plain
    assert "counts with one of their rows, picked" in one.plain
    assert "keeps 1 row, picked by a hash of the id and each row, a uniform choice" in one.technical


def test_replace_per_person() -> None:
    words = guarantee(REPLACE_PERSON, 2.0)
    assert "whatever values any one person's rows hold" in words.plain
    assert "how many each person has, are not protected" in words.plain


@pytest.mark.parametrize("facts", [ROW, REPLACE_ROW, TRUSTED, ENFORCED, REPLACE_PERSON])
def test_delta_is_an_added_chance_never_a_failure_probability(facts: Facts) -> None:
    pure, approximate = guarantee(facts, 1.0), guarantee(facts, 1.0, 1e-5, accountant="tightest")
    assert "0.00001" not in pure.plain and "δ is added" not in pure.technical
    assert "by at most a factor of e^1 ≈ 2.72, plus at most an extra 0.00001 (1 in 100,000)," in (
        approximate.plain
    )
    assert "(1, 1e-05)-differential privacy" in approximate.technical
    assert "it is not a chance that the e^ε bound fails" in approximate.technical
    for text in (approximate.plain, approximate.technical):
        assert "except with probability" not in text
    assert "'tightest' accountant" in approximate.technical and "accountant" not in pure.technical


def test_without_epsilon_only_who_is_protected() -> None:
    words = guarantee(ENFORCED)
    assert words.plain.startswith("Protects each person (up to 3 rows each, identified by “patient”): ")
    assert "e^" not in words.plain and "differential privacy" not in words.technical
    assert "the values of any one row" in guarantee(REPLACE_ROW).plain


def test_the_caveat_can_be_left_out() -> None:
    assert guarantee(TRUSTED, 1.0, caveat=False).plain.endswith("are in the table.")


def test_numbers() -> None:
    assert factor(0.1) == "e^0.1 ≈ 1.11" and factor(10) == "e^10 ≈ 22,026"
    assert factor(2000.0) == "e^2000 ≈ 3.9 × 10^868" and factor(math.inf).startswith("e^ε = ∞")
    assert factor(math.log(1e6)) == "e^13.82 ≈ 1.0 × 10^6" and factor(0.699845) == "e^0.6998 ≈ 2.01"
    assert delta_words(1e-6) == "0.000001 (1 in 1,000,000)"
    assert delta_words(2e-9) == "2e-09 (1 in 500,000,000)"
    assert percent(0.95) == "95%" and percent(0.999) == "99.9%"
    assert protected_unit(ROW) == "each row"


def test_accuracy_words() -> None:
    assert accuracy_words(0.95, "exact", 1) == (
        "With probability at least 95%, the released value is within ± of the true value."
    )
    assert "all 4 released values are within their ±" in accuracy_words(0.99, "bound", 4)
    assert "best candidate's score" in accuracy_words(0.9, "utility bound", 1)
