"""Weighted bounding (``Facts(bounding="weight")``): every row of a person with n rows counts min(1, c/n).

It answers the expectation of a uniform choice of c rows per person (held exactly on the 10⁶-row panel in
tests/panel.py, on all four engines); here: its sensitivity never exceeds the sampled query's (a search
over random neighbours, every norm), the refusals where it does not apply, and a release through it.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from dpdash import release
from dpdash.errors import ParameterError
from dpdash.facts import WEIGHT, Facts
from dpdash.queries import (
    Count,
    GroupByCount,
    GroupByMean,
    GroupBySum,
    Histogram,
    KeyCounts,
    Mean,
    Quantile,
    Sum,
    Variance,
)
from dpdash.queries.base import NumericQuery
from dpdash.queries.count import Where

CATS = ("a", "b", "c")


def _person(rng: np.random.Generator, pid: int, n: int, extreme: bool) -> pd.DataFrame:
    """n rows of one person: extreme ones put every row in one cell at the largest value."""
    if extreme:
        cats, x = np.full(n, "a", dtype=object), np.full(n, 150.0)
    else:
        cats, x = rng.choice(np.array([*CATS, "z"], dtype=object), n), rng.uniform(-30.0, 150.0, n)
    return pd.DataFrame({"pid": pid, "g": cats, "x": x})


def _queries(facts: Facts) -> list[NumericQuery]:
    means = GroupByMean(by="g", keys=CATS, column="x", bounds=(0, 100), facts=facts)
    return [
        Count(where=[Where("g", "==", "a")], facts=facts),
        Sum(column="x", bounds=(-10, 100), facts=facts),
        Histogram(column="g", categories=CATS, facts=facts),
        GroupByCount(by="g", keys=CATS, facts=facts),
        GroupBySum(by="g", keys=CATS, column="x", bounds=(0, 100), facts=facts),
        *(piece.query for piece in Mean(column="x", bounds=(0, 100), facts=facts).pieces()),
        *(piece.query for piece in means.pieces()),
    ]


@pytest.mark.parametrize("neighbours", ["add_remove", "substitute"])
@pytest.mark.slow
def test_a_person_moves_a_weighted_answer_no_more_than_the_sensitivity(neighbours: str) -> None:
    """250 random tables of 2–6 people (1–9 rows each, some with every row in one cell at the top of the
    bounds), and their neighbours: one person removed, or their rows replaced by as many other rows.
    Every query's change stays within its ℓ1, ℓ2 and one-coordinate sensitivity (exact, plus 1e-9 for
    the rounding of float sums), and the largest change reaches at least half of the ℓ1 bound, so the
    search does probe the worst case."""
    rng = np.random.default_rng(2026)
    weighted = Facts(rows_per_person=3, id_column="pid", neighbours=neighbours, bounding="weight")
    sampled = Facts(rows_per_person=3, id_column="pid", neighbours=neighbours)
    queries = _queries(weighted)
    for q, s in zip(queries, _queries(sampled), strict=True):
        assert q.sensitivities == s.sensitivities  # the same declared sensitivity as sampling
    largest = np.zeros(len(queries))
    for _ in range(250):
        people = [
            _person(rng, pid, int(rng.integers(1, 10)), bool(rng.random() < 0.3))
            for pid in range(int(rng.integers(2, 7)))
        ]
        table = pd.concat(people, ignore_index=True)
        moved = int(rng.integers(len(people)))
        if neighbours == "add_remove":
            other = pd.concat([p for i, p in enumerate(people) if i != moved], ignore_index=True)
        else:
            n = len(people[moved])
            swap = _person(rng, moved, n, bool(rng.random() < 0.5))
            far = rng.random()  # the far end of the bounds, or every value missing
            swap["x"] = -30.0 if far < 0.4 else np.nan if far < 0.6 else swap["x"]
            other = pd.concat([*people[:moved], swap, *people[moved + 1 :]], ignore_index=True)
        for i, q in enumerate(queries):
            change = np.asarray(q.evaluate(table).values, float) - np.asarray(q.evaluate(other).values, float)
            s = q.sensitivities
            assert np.abs(change).sum() <= s.l1 + 1e-9, (q.name, change, s)
            assert np.sqrt((change**2).sum()) <= s.l2 + 1e-9, (q.name, change, s)
            assert np.abs(change).max() <= s.coordinate + 1e-9, (q.name, change, s)
            largest[i] = max(largest[i], np.abs(change).sum() / s.l1)
    assert largest.min() >= 0.5, dict(zip([q.name for q in queries], largest.round(3), strict=True))


def test_weights_are_min_one_c_over_n_and_the_report_counts_rows() -> None:
    df = pd.DataFrame({"pid": [1, 1, 1, 2, None], "g": ["a", "a", "b", "b", "a"]})
    facts = Facts(rows_per_person=2, id_column="pid", bounding="weight")
    kept, truncation = facts.apply(df)
    assert kept[WEIGHT].tolist() == pytest.approx([2 / 3, 2 / 3, 2 / 3, 1.0])
    assert (truncation.rows_kept, truncation.rows_truncated, truncation.rows_missing_id) == (3, 1, 1)
    e = Histogram(column="g", categories=("a", "b"), facts=facts).evaluate(df)
    assert e.values[:2].tolist() == pytest.approx([4 / 3, 2 / 3 + 1])
    assert e.report.rows_used == 4  # rows read, unweighted
    assert Count(facts=facts).evaluate(df).values.tolist() == [3]  # Σ min(n, c): a whole number


def test_weighted_bounding_is_declared_and_round_trips() -> None:
    facts = Facts(rows_per_person=2, id_column="pid", bounding="weight")
    assert Facts.from_dict(facts.to_dict()) == facts
    assert "bounding" not in Facts(rows_per_person=2, id_column="pid").to_dict()  # old records unchanged
    assert "min(1, 2/n)" in facts.describe()
    with pytest.raises(ParameterError, match="needs the column that identifies a person"):
        Facts(rows_per_person=2, bounding="weight")
    with pytest.raises(ParameterError, match="bounding must be one of"):
        Facts(rows_per_person=2, id_column="pid", bounding="clip")


def test_queries_that_are_not_sums_over_rows_refuse_weights() -> None:
    df = pd.DataFrame({"pid": [1, 1, 2], "x": [1.0, 2.0, 3.0], "g": ["a", "b", "a"]})
    facts = Facts(rows_per_person=1, id_column="pid", bounding="weight")
    for q in (
        Variance(column="x", bounds=(0, 5), facts=facts),
        Quantile.on_grid(column="x", bounds=(0, 5), size=6, facts=facts),
        KeyCounts(column="g", group_bounds=(1, 1), facts=facts),
    ):
        with pytest.raises(ParameterError, match="declare bounding='sample'"):
            q.evaluate(df)
    grouped = Histogram(column="g", categories=("a", "b"), group_bounds=(1, 1), facts=facts)
    with pytest.raises(ParameterError, match="per-group bounds"):
        grouped.evaluate(df)


def test_a_weighted_release_takes_continuous_noise_and_states_its_unit() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"pid": rng.integers(0, 300, 2000), "g": rng.choice(list(CATS), 2000)})
    facts = Facts(rows_per_person=2, id_column="pid", bounding="weight")
    q = Histogram(column="g", categories=CATS, facts=facts)
    r = release(q, "laplace", df, epsilon=1.0)
    assert len(r.values) == 4 and not all(float(v).is_integer() for v in r.values)
    assert "min(1, 2/n)" in str(r.to_dict())  # the record says how the unit of privacy was enforced
    with pytest.raises(ParameterError, match=r"under weighted bounding .* is fractional"):
        release(q, "geometric", df, epsilon=1.0)
    counted = release(Count(facts=facts), "geometric", df, epsilon=1.0)  # Σ min(n, c) stays whole
    assert float(counted.values[0]).is_integer()


def test_weighted_answers_are_the_average_of_every_sampled_choice() -> None:
    """Linearity, checked by brute force: for a table small enough to list every choice of c rows per
    person, the weighted histogram and sum are the average of the sampled answers over all choices."""
    df = pd.DataFrame(
        {"pid": [1, 1, 1, 1, 2, 2, 3], "g": ["a", "a", "b", "c", "b", "b", "c"], "x": [5.0, 9, 1, 7, 3, 4, 8]}
    )
    c = 2
    rows = {pid: list(group.index) for pid, group in df.groupby("pid")}
    choices = [list(itertools.combinations(r, min(c, len(r)))) for r in rows.values()]
    hist, total, count = np.zeros(3), 0.0, 0
    for pick in itertools.product(*choices):
        kept = df.loc[[i for part in pick for i in part]]
        hist += kept["g"].value_counts().reindex(list(CATS), fill_value=0).to_numpy()
        total += kept["x"].clip(0, 8).sum()
        count += 1
    facts = Facts(rows_per_person=c, id_column="pid", bounding="weight")
    weighted = Histogram(column="g", categories=CATS, facts=facts).evaluate(df).values[:3]
    np.testing.assert_allclose(weighted, hist / count, rtol=1e-12)
    np.testing.assert_allclose(Sum(column="x", bounds=(0, 8), facts=facts).true_answer(df)[0], total / count)
