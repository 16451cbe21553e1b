"""Queries audited as ``dpdash.release`` releases them, on worst-case neighbouring tables.

Release-grade draws cannot be seeded: each soundness audit runs at the confidence of the mechanism
suite (family-wise 99% over its audits, see test_mechanisms.py), so a false failure is negligible.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpdash.audit import audit, query_target
from dpdash.audit.neighbours import worst_case_neighbour
from dpdash.errors import ParameterError
from dpdash.facts import Bounds, Facts
from dpdash.queries import Count, Histogram, Mean, Mode, Quantile, Sum
from tests.audit.test_mechanisms import CONFIDENCE


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 400
    return pd.DataFrame(
        {
            "person": np.arange(n) // 2,  # two rows per person
            "age": rng.integers(0, 90, n),
            "income": rng.gamma(2.0, 20_000.0, n),
            "region": rng.choice(["North", "South", "East"], n),
        }
    )


FACTS = Facts(rows_per_person=2, id_column="person")
SUBSTITUTE = Facts(neighbours="substitute", rows_per_person=1)

QUERIES = {
    "count_laplace": (Count(facts=FACTS), "laplace", 0.0),
    "count_geometric": (Count(facts=FACTS), "geometric", 0.0),
    "sum_laplace": (Sum(column="income", bounds=Bounds(lower=0, upper=100_000), facts=FACTS), "laplace", 0.0),
    "sum_gaussian": (
        Sum(column="income", bounds=Bounds(lower=0, upper=100_000), facts=FACTS),
        "gaussian",
        1e-5,
    ),
    "mean_laplace": (Mean(column="age", bounds=Bounds(lower=0, upper=100), facts=FACTS), "laplace", 0.0),
    "histogram_geometric": (
        Histogram(column="region", categories=["North", "South", "East"], facts=SUBSTITUTE),
        "geometric",
        0.0,
    ),
    "median_exponential": (
        Quantile.on_grid(column="age", bounds=(0, 100), size=21, facts=FACTS),
        "exponential",
        0.0,
    ),
    "mode_noisy_max": (
        Mode(column="region", categories=["North", "South", "East"], facts=FACTS),
        "report_noisy_max",
        0.0,
    ),
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_released_queries_keep_their_epsilon_on_worst_case_neighbours(
    name: str, table: pd.DataFrame, trials: int
) -> None:
    query, mechanism, delta = QUERIES[name]
    neighbour = worst_case_neighbour(query, mechanism, table, epsilon=1.0, delta=delta)
    assert neighbour.change == pytest.approx(1.0)  # the full sensitivity (per piece, on average)
    target = query_target(query, mechanism, table, neighbour.table, epsilon=1.0, delta=delta)
    result = audit(target, trials=trials // 2, confidence=CONFIDENCE)
    assert not result.refutes_claim, result.verdict


def test_a_count_audit_has_power(table: pd.DataFrame, trials: int, strong: bool) -> None:
    # A person of 2 rows: Δ = 2, so the noise is Lap(2/ε) and the neighbours differ by 2: ratio e^ε.
    query = Count(facts=FACTS)
    neighbour = worst_case_neighbour(query, "laplace", table, epsilon=1.0)
    assert len(neighbour.table) == len(table) + 2
    result = audit(query_target(query, "laplace", table, neighbour.table, epsilon=1.0), trials=trials)
    assert result.epsilon_lower >= (0.97 if strong else 0.90)


def test_understated_rows_per_person_are_caught(table: pd.DataFrame, trials: int) -> None:
    # The facts say one row per person (trusted, not enforced), but the person added has two rows:
    # the tables are not neighbours under the stated facts, which query_target refuses outright...
    query = Count(facts=Facts(rows_per_person=1))
    two_rows = pd.concat([table, table.iloc[:2]], ignore_index=True)
    with pytest.raises(ParameterError, match="not neighbours"):
        query_target(query, "laplace", table, two_rows, epsilon=1.0)


def test_tables_that_give_the_same_answer_are_refused(table: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="nothing to tell apart"):
        query_target(Count(facts=FACTS), "laplace", table, table.copy(), epsilon=1.0)


def test_unsuitable_mechanisms_are_refused_with_the_release_message(table: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="selects among candidates"):
        query_target(Count(facts=FACTS), "exponential", table, table, epsilon=1.0)


def test_a_substitute_neighbour_keeps_the_number_of_rows(table: pd.DataFrame) -> None:
    query = Histogram(column="region", categories=["North", "South", "East"], facts=SUBSTITUTE)
    neighbour = worst_case_neighbour(query, "geometric", table)
    assert len(neighbour.table) == len(table)
    assert "replaced" in neighbour.description
    changed = query.true_answer(neighbour.table) - query.true_answer(table)
    assert np.abs(changed).sum() == 2  # one row moved from one cell to another: ℓ1 sensitivity 2


def test_an_empty_table_has_no_neighbour() -> None:
    with pytest.raises(ParameterError, match="empty"):
        worst_case_neighbour(Count(), "laplace", pd.DataFrame({"a": []}))
