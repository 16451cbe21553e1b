"""Per-group contribution bounds (issue 24): a person touches at most k cells with at most m rows in each.
The sensitivities in closed form, the refusals, and truncation that enforces the bounds with a uniform
choice of each person's cells and rows, held against its exact expectation with z-scores (pandas and
DuckDB agree row for row: tests/engines/test_differential.py runs these queries on every engine)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.facts import Facts, GroupBounds
from dpdash.queries import GroupByCount, GroupByMean, GroupBySum, Histogram, query_from_dict
from tests.panel import CATEGORIES, panel

PERSON = Facts(rows_per_person=8, id_column="pid")


def test_people_by_industry_with_two_groups_each_cost_a_quarter_of_eight_rows() -> None:
    """k = 2, m = 1: ℓ1 2 (against c = 8: 8), ℓ2 √2, one per cell, at most 2 cells change."""
    people = Histogram(column="industry", categories=CATEGORIES, facts=PERSON, group_bounds=(2, 1))
    rows = Histogram(column="industry", categories=CATEGORIES, facts=PERSON)
    s = people.sensitivities
    assert (s.l1, s.l2, s.coordinate, s.changed_coordinates) == (2, math.sqrt(2), 1, 2)
    assert rows.l1_sensitivity == 8 and people.l1_sensitivity * 4 == rows.l1_sensitivity


@pytest.mark.parametrize(("k", "m"), [(1, 1), (3, 2), (9, 4)])
def test_sensitivities_in_closed_form(k: int, m: int) -> None:
    cells = 5
    keys = CATEGORIES[:4]
    count = GroupByCount(by="industry", keys=keys, outside="other", facts=PERSON, group_bounds=(k, m))
    assert count.sensitivities.l1 == k * m and count.sensitivities.l2 == pytest.approx(math.sqrt(k) * m)
    assert (count.sensitivities.coordinate, count.sensitivities.changed_coordinates) == (m, min(k, cells))
    total = GroupBySum(by="industry", keys=CATEGORIES[:4], outside="other", column="wage", bounds=(-10, 30),
                       facts=PERSON, group_bounds=(k, m))  # fmt: skip
    assert total.sensitivities.l1 == pytest.approx(k * m * 30)
    assert total.sensitivities.l2 == pytest.approx(math.sqrt(k) * m * 30)
    swap = Facts(neighbours="substitute", rows_per_person=8, id_column="pid")
    replaced = GroupBySum(by="industry", keys=keys, outside="other", column="wage", bounds=(-10, 30),
                          facts=swap, group_bounds=(k, m))  # fmt: skip
    # M = 30, R = 40: ℓ1 k·m·max(2M, R), ℓ2 m·max(√(2k)·M, √k·R), per cell m·R.
    s = replaced.sensitivities
    assert s.l1 == pytest.approx(k * m * 60)
    assert s.l2 == pytest.approx(m * max(math.sqrt(2 * k) * 30, math.sqrt(k) * 40))
    assert (s.coordinate, s.changed_coordinates) == (m * 40, min(2 * k, cells))
    mean = GroupByMean(by="industry", keys=CATEGORIES, column="wage", bounds=(0, 100), facts=PERSON,
                       group_bounds=(k, m))  # fmt: skip
    assert all(p.query.group_bounds == GroupBounds(k, m) for p in mean.pieces())


def test_bounds_are_checked_and_need_an_id_column() -> None:
    with pytest.raises(ParameterError, match="enforced by truncation on a person id column"):
        Histogram(column="industry", categories=CATEGORIES, group_bounds=(2, 1))
    with pytest.raises(ParameterError, match="max_rows_per_group must be an integer >= 1, got"):
        Histogram(column="industry", categories=CATEGORIES, facts=PERSON, group_bounds=(2, 0))
    with pytest.raises(ParameterTypeError, match="max_groups must be an integer"):
        GroupBounds("2", 1)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError, match="must be a pair"):
        Histogram(column="industry", categories=CATEGORIES, facts=PERSON, group_bounds=3)
    query = GroupByMean(by="industry", keys=CATEGORIES, column="wage", bounds=(0, 1), facts=PERSON,
                        group_bounds=GroupBounds(2, 3))  # fmt: skip
    assert query_from_dict(query.to_dict()) == query and query.to_dict()["group_bounds"] == [2, 3]


@pytest.mark.parametrize(("k", "m"), [(2, 1), (1, 3)])
@pytest.mark.slow
def test_truncation_keeps_a_uniform_choice_of_cells_and_rows(k: int, m: int) -> None:
    """A person with n_g rows in each of d cells keeps each cell with probability p = min(1, k/d), and
    min(n_g, m) rows of a kept cell: each cell's count has mean Σ p·min(n_g, m) and variance
    Σ p(1 − p)·min(n_g, m)² (one term per person). Every cell within 4 sd on a 2·10⁵-row panel with
    string ids; every person keeps at most k cells and m rows in each; rows without a cell are kept."""
    df = panel(200_000, "string")
    df.loc[df.index[:500], "industry"] = None  # in no cell: never dropped by per-group truncation
    query = Histogram(
        column="industry", categories=CATEGORIES, outside="drop", facts=PERSON, group_bounds=(k, m)
    )
    kept, truncation = query._truncate(df)
    per = kept.dropna(subset=["industry"]).groupby(["pid", "industry"]).size()
    assert per.max() <= m and per.groupby(level=0).size().max() <= k
    assert kept["industry"].isna().sum() == 500
    counts = query.evaluate(df).values
    pairs = df.dropna(subset=["industry"]).groupby(["pid", "industry"]).size().rename("n").reset_index()
    d = pairs.groupby("pid")["n"].transform("size").to_numpy(float)
    p, take = np.minimum(1.0, k / d), np.minimum(pairs["n"].to_numpy(float), m)
    expected = pd.DataFrame({"cell": pairs["industry"], "mean": p * take, "var": p * (1 - p) * take**2})
    totals = expected.groupby("cell")[["mean", "var"]].sum().reindex(list(CATEGORIES))
    z = (counts - totals["mean"].to_numpy()) / np.sqrt(totals["var"].to_numpy())
    assert np.abs(z).max() <= 4.0, dict(zip(CATEGORIES, np.round(z, 2), strict=True))
    assert truncation.rows_kept == len(kept) and truncation.people_truncated > 0
