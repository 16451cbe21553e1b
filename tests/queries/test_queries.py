"""Query specs: true answers against pandas, the data owner's report, the unit of privacy, bad input, and
JSON round trips of the specs."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.facts import MAX_GROUPS, Bins, Bounds, Facts
from dpdash.queries import (
    NOT_PRIVATE,
    ContingencyTable,
    Count,
    GroupByCount,
    GroupByMean,
    GroupBySum,
    Histogram,
    Mean,
    Mode,
    Quantile,
    SecondMoment,
    Sum,
    Variance,
    Where,
    query_from_dict,
)
from tests.queries.test_truncation_bias import key


@pytest.fixture
def people() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 400
    df = pd.DataFrame(
        {
            "pid": rng.integers(0, 150, n),
            "age": rng.integers(0, 100, n),
            "income": rng.normal(50.0, 30.0, n),
            "region": rng.choice(["N", "S", "E", "W", "X"], n),
            "smoker": rng.choice([True, False], n),
        }
    )
    df.loc[[3, 10, 11], "income"] = np.nan
    df.loc[[5], "region"] = None
    return df


# ---- true answers ------------------------------------------------------------------------------------


def test_counts_sums_means_and_variances_match_pandas(people: pd.DataFrame) -> None:
    clamped = people["income"].dropna().clip(0, 100)
    assert Count().true_answer(people).tolist() == [len(people)]
    assert Count(where=[Where("age", ">=", 65), Where("smoker", "==", True)]).true_answer(people)[0] == (
        ((people["age"] >= 65) & people["smoker"]).sum()
    )
    assert Sum(column="income", bounds=(0, 100)).true_answer(people)[0] == pytest.approx(clamped.sum())
    assert Mean(column="income", bounds=(0, 100)).true_answer(people)[0] == pytest.approx(clamped.mean())
    assert Variance(column="income", bounds=(0, 100)).true_answer(people)[0] == pytest.approx(
        clamped.var(ddof=0)
    )


def test_group_by_and_histograms_match_pandas(people: pd.DataFrame) -> None:
    keys = ["N", "S", "E", "W"]
    inside = people[people["region"].isin(keys)]
    expected_counts = inside["region"].value_counts().reindex(keys).tolist()
    assert GroupByCount(by="region", keys=keys).true_answer(people).tolist() == expected_counts
    valid = inside.dropna(subset=["income"])
    clamped = valid.assign(income=valid["income"].clip(0, 100)).groupby("region")["income"]
    sums = GroupBySum(by="region", keys=keys, column="income", bounds=(0, 100)).true_answer(people)
    np.testing.assert_allclose(sums, clamped.sum().reindex(keys).to_numpy())
    means = GroupByMean(by="region", keys=keys, column="income", bounds=(0, 100)).true_answer(people)
    np.testing.assert_allclose(means, clamped.mean().reindex(keys).to_numpy())
    histogram = Histogram(column="region", categories=keys).true_answer(people)
    assert histogram.tolist() == [*expected_counts, int((people["region"] == "X").sum())]
    ages = Histogram(column="age", bins=[0, 50, 99]).true_answer(people)
    assert ages.tolist() == [int((people["age"] < 50).sum()), int((people["age"] >= 50).sum()), 0][:3]


def test_contingency_table_matches_crosstab(people: pd.DataFrame) -> None:
    q = ContingencyTable(columns=("region", "smoker"), categories=(("N", "S"), (True, False)), outside="drop")
    table = pd.crosstab(people["region"], people["smoker"]).reindex(index=["N", "S"], columns=[True, False])
    assert q.true_answer(people).tolist() == table.to_numpy().ravel().tolist()
    assert q.shape == (2, 2)


def test_quantile_selects_the_empirical_quantile_on_a_fine_grid(people: pd.DataFrame) -> None:
    q = Quantile(column="age", candidates=tuple(float(a) for a in range(100)), quantiles=(0.25, 0.5, 0.9))
    expected = np.quantile(people["age"], [0.25, 0.5, 0.9], method="inverted_cdf")
    chosen = q.true_answer(people)
    for u, best, exact in zip(q.utilities(people), chosen, expected, strict=True):
        # the true answer is the best-scoring candidate: the empirical quantile or, with ties in the
        # data, a neighbour of it whose rank balance |(1 − q)·L − q·G| is as good or better
        assert u[int(best)] == u.max() >= u[int(exact)]
        assert abs(best - exact) <= 1
    assert Quantile.median(column="age", candidates=(10.0, 20.0)).quantiles == (0.5,)


def test_quantile_utilities_are_exact_integers_in_units_of_one_over_b() -> None:
    df = pd.DataFrame({"x": [1.0, 2.0, 2.0, 9.0]})
    q = Quantile(column="x", candidates=(0.0, 2.0, 5.0), quantiles=(0.3,))  # q = 3/10
    below = np.array([0, 1, 3])
    above = np.array([4, 1, 1])
    assert q.utilities(df)[0].tolist() == (-np.abs(7 * below - 3 * above)).tolist()
    assert q.utility_sensitivities == (7,)  # c·max(3, 7) under add/remove
    assert Quantile(
        column="x", candidates=(0.0, 1.0), quantiles=(0.3,), facts=Facts(neighbours="substitute")
    ).utility_sensitivities == (10,)


def test_second_moment_clips_rows_to_the_norm_ball() -> None:
    df = pd.DataFrame({"x": [3.0, 0.1, np.nan], "y": [4.0, 0.2, 1.0]})
    q = SecondMoment(columns=("x", "y"), norm_bound=1.0)
    rows = np.array([[0.6, 0.8], [0.1, 0.2]])
    np.testing.assert_allclose(q.matrix(q.true_answer(df)), rows.T @ rows)
    report = q.evaluate(df).report
    assert (report.missing, report.clipped_above) == (1, 1)


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_second_moment_takes_an_infinite_row_to_the_limit_of_its_scaling(engine: str) -> None:
    """A row with m infinite entries is scaled onto the ball as x·B/‖x‖ tends to: B·sign/√m on those entries,
    0 on the rest (before: ∞·0 = NaN in the answer). Closed form below, the same in DuckDB."""
    from dpdash.engines import evaluate

    inf = math.inf
    df = pd.DataFrame({"x": [0.6, inf, -inf, inf, 2.0], "y": [0.8, 2.0, 5.0, -inf, np.nan]})
    q = SecondMoment(columns=("x", "y"), norm_bound=2.0)
    h = 2.0 / math.sqrt(2.0)
    rows = np.array([[0.6, 0.8], [2.0, 0.0], [-2.0, 0.0], [h, -h]])
    got = evaluate(q, df, engine=engine)
    assert np.isfinite(got.values).all()
    np.testing.assert_allclose(q.matrix(got.values), rows.T @ rows, rtol=1e-12)
    assert (got.report.missing, got.report.clipped_above) == (1, 3)


# ---- the data owner's report ---------------------------------------------------------------------------


def test_the_report_counts_missing_clipped_and_outside_values_and_the_bias() -> None:
    df = pd.DataFrame({"income": [-5.0, 10.0, 500.0, np.nan, None], "blood": ["A", "Q", None, "A", "A"]})
    report = Sum(column="income", bounds=(0, 100)).evaluate(df).report
    assert (report.missing, report.clipped_below, report.clipped_above) == (2, 1, 1)
    assert report.clipping_bias == (5.0 - 400.0,)
    assert report.label == NOT_PRIVATE
    hist = Histogram(column="blood", categories=["A", "B"], outside="drop").evaluate(df)
    assert hist.values.tolist() == [3, 0]
    assert (hist.report.missing, hist.report.outside, hist.report.empty_categories) == (1, 1, ("B",))
    other = Histogram(column="blood", categories=["A", "B"]).evaluate(df)
    assert other.values.tolist() == [3, 0, 1]
    json.dumps(report.to_dict())  # plain data, non-finite biases become None


def test_mean_bias_and_missing_values() -> None:
    df = pd.DataFrame({"x": [1.0, 2.0, 300.0, np.nan]})
    evaluation = Mean(column="x", bounds=(0, 10)).evaluate(df)
    assert evaluation.values[0] == pytest.approx(13 / 3)
    assert evaluation.report.clipping_bias[0] == pytest.approx(13 / 3 - 101)
    assert evaluation.pieces is not None and evaluation.pieces["count"].tolist() == [3]


# ---- the unit of privacy ------------------------------------------------------------------------------


def test_an_id_column_enforces_c_rows_per_person_by_truncation() -> None:
    df = pd.DataFrame({"pid": [1, 1, 1, 2, None, 2, 1], "x": [1, 2, 3, 4, 5, 6, 7]})
    facts = Facts(rows_per_person=2, id_column="pid")
    kept, truncation = facts.apply(df)
    # Id 1 keeps the two of x = 1, 2, 3, 7 with the smallest keys (the rule written out again in
    # tests/queries/test_truncation_bias.py); id 2 keeps both of its rows; the kept rows stay in table order.
    ones = sorted([1, 2, 3, 7], key=lambda x: key(1.0, [x], 0))[:2]  # pid is float (it has a None)
    expected = sorted([*ones, 4, 6], key=[1, 2, 3, 4, 5, 6, 7].index)
    assert kept["x"].tolist() == expected
    assert (truncation.rows_truncated, truncation.rows_missing_id, truncation.people) == (2, 1, 2)
    assert truncation.people_truncated == 1
    assert Sum(column="x", bounds=(0, 10), facts=facts).true_answer(df)[0] == sum(expected)
    assert "enforced by truncation" in facts.describe()
    assert "trusted as declared" in Facts(rows_per_person=2).describe()


def test_truncation_does_not_depend_on_the_order_of_the_rows() -> None:
    rng = np.random.default_rng(7)
    df = pd.DataFrame(
        {
            "pid": rng.integers(0, 30, 600),
            "x": rng.normal(50, 20, 600).round(2),
            "s": rng.choice(["a", "b", "é", None], 600),
        }
    )
    facts = Facts(rows_per_person=3, id_column="pid")
    shuffled = df.sample(frac=1, random_state=3)
    for columns in (["x"], ["s"], ["s", "x"], None):
        kept, truncation = facts.apply(df, columns)
        again, truncation_again = facts.apply(shuffled, columns)
        assert truncation == truncation_again
        read = ["pid", *(columns or ["x", "s"])]  # rows equal on these are interchangeable
        assert sorted(map(repr, kept[read].to_numpy().tolist())) == sorted(
            map(repr, again[read].to_numpy().tolist())
        )


@pytest.mark.parametrize("c", [2.5, 0, -1, math.nan])
def test_non_integer_c_is_refused(c: float) -> None:
    with pytest.raises(
        ParameterError, match=r"rows_per_person must be an integer >= 1 \(at most c rows per person\)"
    ):
        Facts(rows_per_person=c)


def test_facts_types_are_checked() -> None:
    with pytest.raises(ParameterTypeError, match="rows_per_person"):
        Facts(rows_per_person="2")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="neighbours must be one of"):
        Facts(neighbours="swap")
    assert Facts(rows_per_person=3.0).rows_per_person == 3


# ---- bad input ----------------------------------------------------------------------------------------


BAD_INPUT = [
    (Sum(column="region", bounds=(0, 1)), r"column 'region' must be numeric for sum of region, got dtype"),
    (Mean(column="nope", bounds=(0, 1)), r"column 'nope' is not in the table, needed by mean of nope"),
    (GroupBySum(by="zone", keys=["a"], column="x", bounds=(0, 1)), r"column 'zone' is not in the table"),
    (Histogram(column="x", bins=[0, 1]), None),
    (Count(facts=Facts(id_column="person")), r"id_column 'person' is not a column of the table"),
    (Quantile(column="region", candidates=(0.0, 1.0)), r"column 'region' must be numeric"),
]


@pytest.mark.parametrize(("query", "message"), BAD_INPUT)
def test_bad_tables_are_refused_with_the_column_and_the_rule(query, message) -> None:
    df = pd.DataFrame({"region": ["N", "S"], "x": [1.0, 2.0]})
    if message is None:
        query.evaluate(df)
        return
    with pytest.raises(ParameterError, match=message):
        query.evaluate(df)


def test_an_empty_table_is_refused() -> None:
    with pytest.raises(ParameterError, match=r"the table is empty \(0 rows\)"):
        Count().evaluate(pd.DataFrame({"x": []}))
    with pytest.raises(ParameterTypeError, match="df must be a pandas DataFrame"):
        Count().evaluate([1, 2, 3])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (
            lambda: Sum(column="x", bounds=(5, 5)),
            ParameterError,
            r"bounds for column 'x': bounds must have lower < upper",
        ),
        (lambda: Sum(column="x", bounds=(9, 1)), ParameterError, r"lower < upper, got bounds=\(9, 1\)"),
        (
            lambda: Sum(column="x", bounds=(0, math.inf)),
            ParameterError,
            r"upper bound must be a finite number",
        ),
        (lambda: Sum(column="x", bounds=5), ParameterTypeError, r"bounds for column 'x' must be a pair"),
        (
            lambda: Histogram(column="k", categories=["a", "a"]),
            ParameterError,
            r"must be distinct, got duplicates \['a'\]",
        ),
        (lambda: Histogram(column="k", categories=[]), ParameterError, r"at least one category"),
        (lambda: Histogram(column="k", categories=["a", None]), ParameterError, r"no missing values"),
        (lambda: Histogram(column="k"), ParameterError, r"give exactly one of categories and bins"),
        (lambda: Histogram(column="k", bins=[0, 2, 1]), ParameterError, r"bins must be strictly increasing"),
        (lambda: Histogram(column="k", categories=list(range(MAX_GROUPS))), ParameterError, r"at most 10000"),
        (lambda: GroupByCount(by="k", keys=list(range(MAX_GROUPS + 1))), ParameterError, r"at most 10000"),
        (
            lambda: Histogram(column="k", categories=["a"], outside="keep"),
            ParameterError,
            r"outside must be one of",
        ),
        (
            lambda: ContingencyTable(columns=("a", "b"), categories=(range(101), range(100))),
            ParameterError,
            "at most 10000",
        ),
        (lambda: Quantile(column="x", candidates=(1.0, 0.0)), ParameterError, r"strictly increasing"),
        (
            lambda: Quantile(column="x", candidates=(0.0, 1.0), quantiles=1.0),
            ParameterError,
            r"strictly between 0 and 1",
        ),
        (
            lambda: Quantile(column="x", candidates=(0.0, 1.0), quantiles=1 / 3),
            ParameterError,
            r"at most 6 decimals",
        ),
        (lambda: Count(where=[Where("x", "~", 1)]), ParameterError, r"where op must be one of"),
        (
            lambda: Mean(column="x", bounds=(0, 1), split=1.2),
            ParameterError,
            r"split must be 2 shares in \(0, 1\)",
        ),
        (
            lambda: Variance(column="x", bounds=(0, 1), split=(0.5, 0.5, 0.5)),
            ParameterError,
            r"adding up to 1",
        ),
        (lambda: Mode(column="k", categories=["only"]), ParameterError, r"at least 2 candidates"),
        (lambda: SecondMoment(columns=("x", "x")), ParameterError, r"columns must be distinct"),
        (lambda: Sum(column="", bounds=(0, 1)), ParameterTypeError, r"column must be a column name"),
    ],
)
def test_bad_specs_are_refused(build, error, message) -> None:
    with pytest.raises(error, match=message):
        build()


def test_a_filter_that_cannot_compare_is_refused() -> None:
    df = pd.DataFrame({"k": ["a", "b"]})
    with pytest.raises(ParameterError, match=r"cannot compare column 'k'"):
        Count(where=[Where("k", "<", 3)]).evaluate(df)


def test_missing_values_never_match_a_filter() -> None:
    df = pd.DataFrame({"k": ["a", None, "b"]})
    evaluation = Count(where=[Where("k", "!=", "a")]).evaluate(df)
    assert evaluation.values.tolist() == [1]
    assert evaluation.report.missing == 1


# ---- specs are values ---------------------------------------------------------------------------------


SPECS = [
    Count(),
    Count(
        where=[Where("age", "in", [1, 2]), Where("region", "==", "N")], facts=Facts(neighbours="substitute")
    ),
    Sum(column="income", bounds=(0, 100), facts=Facts(rows_per_person=3, id_column="pid")),
    Mean(column="income", bounds=Bounds(0, 100), split=0.3),
    Variance(column="income", bounds=(0, 100), split=(0.2, 0.3, 0.5)),
    Histogram(column="region", categories=["N", "S"], outside="drop"),
    Histogram(column="age", bins=Bins((0, 18, 65, 120))),
    ContingencyTable(columns=("region", "smoker"), categories=(("N", "S"), (True, False))),
    GroupByCount(by="region", keys=["N", "S"]),
    GroupBySum(by="region", keys=["N"], column="income", bounds=(-10, 10), outside="other"),
    GroupByMean(by="region", keys=["N", "S"], column="income", bounds=(0, 100), split=0.6),
    Quantile(column="age", candidates=(0.0, 50.0, 100.0), quantiles=(0.1, 0.5)),
    Mode(column="region", categories=["N", "S", "E"]),
    SecondMoment(columns=("age", "income"), norm_bound=2.0),
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda q: q.kind)
def test_specs_round_trip_through_json(spec) -> None:
    text = json.dumps(spec.to_dict())
    again = query_from_dict(json.loads(text))
    assert again == spec
    assert hash(again) == hash(spec)


@pytest.mark.parametrize("spec", SPECS, ids=lambda q: q.kind)
def test_specs_are_frozen(spec) -> None:
    with pytest.raises(AttributeError):
        spec.facts = Facts()


def test_unknown_query_types_are_refused() -> None:
    with pytest.raises(ParameterError, match="unknown query type 'median_of_medians'"):
        query_from_dict({"type": "median_of_medians"})
