"""Numeric histograms and group-bys over public bins from declared bounds, and clipping bias without
floating-point residue."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpdash.errors import ParameterError
from dpdash.facts import Facts
from dpdash.mechanisms import Geometric, Laplace
from dpdash.queries import (
    OTHER,
    GroupByCount,
    GroupByMean,
    GroupBySum,
    Histogram,
    Mean,
    SecondMoment,
    Sum,
    Variance,
    query_from_dict,
)
from dpdash.queries.histogram import numeric_bins
from dpdash.release import release


def test_bins_come_from_the_bounds_by_count_or_width() -> None:
    assert numeric_bins((0, 100), count=4).edges == (0.0, 25.0, 50.0, 75.0, 100.0)
    assert numeric_bins((18, 90), width=10).labels[-2:] == ("[78, 88)", "[88, 90]")  # last bin narrower
    assert numeric_bins((0, 1), width=0.1).edges[3] == 0.3  # not 0.30000000000000004
    assert numeric_bins((0, 1), width=0.1).labels[3] == "[0.3, 0.4)"
    with pytest.raises(ParameterError, match="exactly one of count and width"):
        numeric_bins((0, 1))
    with pytest.raises(ParameterError, match="at most 10000 are allowed"):
        numeric_bins((0, 1e6), width=1)
    with pytest.raises(ParameterError, match="width must be"):
        numeric_bins((0, 1), width=0)
    # Widths so small that U − L over them overflows, and bounds whose width overflows: a message, not
    # an OverflowError (issue 25, item 10).
    for bounds, width in (((0, 100), 5e-324), ((0, 1e308), 1e-300)):
        with pytest.raises(ParameterError, match="more bins than can be counted; at most 10000"):
            numeric_bins(bounds, width=width)
    with pytest.raises(ParameterError, match="wider than a number can hold"):
        numeric_bins((-1e308, 1e308), count=4)


def test_numeric_histogram_counts_and_keeps_outside_values_apart() -> None:
    df = pd.DataFrame({"age": [0, 9.99, 10, 99, 100, 120, -1, None]})
    q = Histogram(column="age", bins=numeric_bins((0, 100), count=10))
    assert q.labels[-1] == OTHER and len(q.labels) == 11
    counts = q.true_answer(df).tolist()
    assert counts[0] == 2 and counts[1] == 1 and counts[9] == 2 and counts[-1] == 2  # 120 and −1 apart
    report = q.evaluate(df).report
    assert (report.missing, report.outside) == (1, 2)
    # Sensitivity as for categories: c under add/remove, 2c under substitute.
    assert (
        q.l1_sensitivity,
        Histogram(column="age", bins=q.bins, facts=Facts(neighbours="substitute")).l1_sensitivity,
    ) == (1, 2)
    assert query_from_dict(q.to_dict()) == q
    r = release(q, Geometric, df, epsilon=1.0)
    assert r.labels == q.labels and all(isinstance(v, int) for v in r.values)


def test_group_by_over_numeric_bins() -> None:
    df = pd.DataFrame({"age": [5, 15, 25, 99, None, 150], "income": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    bins = numeric_bins((0, 100), count=4)
    count = GroupByCount(by="age", bins=bins)
    total = GroupBySum(by="age", bins=bins, column="income", bounds=(0, 10))
    mean = GroupByMean(by="age", bins=bins, column="income", bounds=(0, 10))
    assert count.labels == bins.labels
    assert count.true_answer(df).tolist() == [2, 1, 0, 1]
    assert total.true_answer(df).tolist() == [3.0, 3.0, 0.0, 4.0]
    assert mean.true_answer(df).tolist() == [1.5, 3.0, 5.0, 4.0]  # an empty group: the bounds' centre
    assert count.evaluate(df).report.empty_categories == ("[50, 75)",)
    for q in (count, total, mean):
        assert query_from_dict(q.to_dict()) == q
        release(q, Laplace, df, epsilon=1.0)
    with pytest.raises(ParameterError, match="exactly one of keys"):
        GroupByCount(by="age", keys=["a"], bins=bins)
    with pytest.raises(ParameterError, match="must be numeric"):
        GroupByCount(by="name", bins=bins).evaluate(pd.DataFrame({"name": ["x", "y"]}))


# ---- clipping bias: exactly 0 when nothing was clipped ---------------------------------------------------


def _residue_table() -> pd.DataFrame:
    """442 values inside [0, 100] whose mean, computed as the release computes it (centre + centred
    sum / n), differs from numpy's mean of the raw values in the last bits: the old report showed that
    difference as "clipping bias"."""
    rng = np.random.default_rng(0)
    for _ in range(1000):
        x = np.round(rng.uniform(0, 100, 442), 2)
        via_pieces = 50.0 + float((x - 50.0).sum()) / x.size
        if via_pieces - float(x.mean()) != 0.0:
            return pd.DataFrame({"x": x, "g": np.where(np.arange(442) % 2, "a", "b")})
    raise AssertionError("no table with a floating-point residue found")


def test_nothing_clipped_reports_exactly_zero() -> None:
    df = _residue_table()
    x = df["x"].to_numpy()
    assert 50.0 + float((x - 50.0).sum()) / x.size - float(x.mean()) != 0.0  # the old residue is there
    queries = [
        Sum(column="x", bounds=(0, 100)),
        Mean(column="x", bounds=(0, 100)),
        Variance(column="x", bounds=(0, 100)),
        GroupBySum(by="g", keys=["a", "b"], column="x", bounds=(0, 100)),
        GroupByMean(by="g", keys=["a", "b"], column="x", bounds=(0, 100)),
        SecondMoment(columns=("x",), norm_bound=1000.0),
    ]
    for q in queries:
        report = q.evaluate(df).report
        assert report.clipped_below == report.clipped_above == 0
        assert all(b == 0.0 for b in report.clipping_bias), (q.name, report.clipping_bias)


def test_clipping_bias_sums_only_the_changes_of_clipped_values() -> None:
    values = [0.1] * 441 + [250.3]
    df = pd.DataFrame({"x": values, "g": ["a"] * 442})
    change = 100.0 - 250.3
    assert Sum(column="x", bounds=(0, 100)).evaluate(df).report.clipping_bias == (change,)
    assert Mean(column="x", bounds=(0, 100)).evaluate(df).report.clipping_bias == (change / 442,)
    grouped = GroupByMean(by="g", keys=["a"], column="x", bounds=(0, 100)).evaluate(df).report.clipping_bias
    assert grouped == (change / 442,)
    below = pd.DataFrame({"x": [-0.1, -0.2, 5.0]})
    assert Sum(column="x", bounds=(0, 10)).evaluate(below).report.clipping_bias == (math.fsum([0.1, 0.2]),)
    var = Variance(column="x", bounds=(0, 100)).evaluate(df).report.clipping_bias[0]
    assert var == pytest.approx(np.var(np.minimum(values, 100)) - np.var(values))
