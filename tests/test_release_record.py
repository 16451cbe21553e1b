"""``dpdash.release``: one call from a query spec to a ``Release`` value; compatibility checks with readable
errors; explicit, recorded post-processing; what a ledger needs; JSON round trips; the dataset
fingerprint; and the stated accuracy's coverage (OS randomness: 5-standard-error tolerances)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpdash.audit import query_target
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.facts import Facts
from dpdash.mechanisms import (
    DiscreteGaussian,
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Laplace,
    PermuteAndFlip,
    RandomizedResponse,
    ReportNoisyMax,
    Staircase,
    VectorMechanism,
    Wishart,
)
from dpdash.queries import (
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
)
from dpdash.release import POSTPROCESSING, Release, calibrate, dataset_fingerprint, release


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 300
    frame = pd.DataFrame(
        {
            "pid": rng.integers(0, 120, n),
            "age": rng.integers(18, 90, n),
            "income": rng.gamma(2.0, 20.0, n),
            "region": rng.choice(["N", "S", "E"], n),
            "diagnosis": rng.choice(["flu", "cold", "covid"], n, p=[0.5, 0.3, 0.2]),
        }
    )
    frame.loc[[1, 2], "income"] = np.nan
    return frame


CASES = [
    (Count(where=[Where("age", ">=", 65)]), Geometric, {}, ["clamp_nonnegative"]),
    (Count(), Laplace, {}, ["clamp_nonnegative", "round"]),
    (Sum(column="income", bounds=(0, 100)), Laplace, {}, []),
    (Sum(column="age", bounds=(0, 100)), Geometric, {}, []),
    (Mean(column="income", bounds=(0, 100)), Laplace, {}, ["clamp_to_bounds"]),
    (Mean(column="income", bounds=(0, 100), split=0.7), Gaussian, {"delta": 1e-6}, []),
    (Variance(column="income", bounds=(0, 100)), Laplace, {}, ["clamp_to_bounds"]),
    (Histogram(column="region", categories=["N", "S"]), Geometric, {}, ["clamp_nonnegative"]),
    (
        Histogram(column="age", bins=[18, 40, 65, 90], facts=Facts(neighbours="substitute")),
        DiscreteGaussian,
        {"delta": 1e-6},
        [],
    ),
    (
        Histogram(column="region", categories=["N", "S", "E"], facts=Facts(neighbours="substitute")),
        RandomizedResponse,
        {},
        ["clamp_nonnegative"],
    ),
    (
        ContingencyTable(columns=("region", "diagnosis"), categories=(("N", "S", "E"), ("flu", "cold"))),
        Staircase,
        {},
        [],
    ),
    (
        GroupByCount(by="region", keys=["N", "S", "E"], facts=Facts(rows_per_person=2, id_column="pid")),
        Geometric,
        {},
        [],
    ),
    (
        GroupBySum(by="region", keys=["N", "S"], column="income", bounds=(0, 100)),
        Gaussian,
        {"delta": 1e-5},
        [],
    ),
    (
        GroupByMean(by="region", keys=["N", "S"], column="income", bounds=(0, 100)),
        Laplace,
        {},
        ["clamp_to_bounds"],
    ),
    (
        Quantile.on_grid(column="income", bounds=(0, 150), size=151, quantiles=(0.25, 0.5)),
        ExponentialMechanism,
        {},
        [],
    ),
    (Quantile.median(column="age", candidates=tuple(float(a) for a in range(100))), PermuteAndFlip, {}, []),
    (Mode(column="diagnosis", categories=["flu", "cold", "covid"]), ReportNoisyMax, {}, []),
    (SecondMoment(columns=("age", "income"), norm_bound=150.0), Gaussian, {"delta": 1e-6}, ["project_psd"]),
]


@pytest.mark.parametrize(
    ("query", "mechanism", "kwargs", "steps"), CASES, ids=lambda x: getattr(x, "kind", None)
)
def test_every_query_releases_and_round_trips_through_json(df, query, mechanism, kwargs, steps) -> None:
    r = release(query, mechanism, df, epsilon=1.0, postprocess=steps, **kwargs)
    assert isinstance(r, Release)
    assert r.postprocessing == tuple(steps)
    assert len(r.values) == len(r.labels) == len(r.accuracy.half_widths)
    assert r.accuracy.scope == "each" and r.accuracy.joint_half_width >= max(r.accuracy.half_widths)
    assert r.epsilon == 1.0 and math.isclose(sum(p.epsilon for p in r.pieces), 1.0)
    assert r.delta == kwargs.get("delta", 0.0) and math.isclose(sum(p.delta for p in r.pieces), r.delta)
    assert r.dataset_fingerprint == dataset_fingerprint(df)
    assert r.spec == query
    text = r.to_json()
    again = Release.from_json(text)
    assert again == r
    assert again.true_values is None and again.report is None
    assert "true_values" not in text and "NOT PRIVATE" not in text
    for piece in r.pieces:  # a ledger can rebuild every mechanism that ran
        mech = piece.build()
        assert mech.epsilon == pytest.approx(piece.parameters["epsilon"])


def test_true_values_and_the_report_are_kept_apart(df: pd.DataFrame) -> None:
    r = release(Sum(column="income", bounds=(0, 100)), Laplace, df, epsilon=1.0)
    assert r.true_values is not None and r.report is not None and r.report.missing == 2
    private = json.loads(r.to_json(include_private=True))["private"]
    assert "NOT PRIVATE" in private["label"] and private["true_values"] == list(r.true_values)
    assert "private" not in json.loads(r.to_json())
    twin = Release.from_dict({**r.to_dict()})
    assert twin == r  # true values take no part in equality


def test_what_a_ledger_entry_needs(df: pd.DataFrame) -> None:
    q = Mean(column="income", bounds=(0, 100), facts=Facts(rows_per_person=2, id_column="pid"))
    r = release(q, Gaussian, df, epsilon=0.8, delta=1e-6)
    data = r.to_dict()
    assert {"query", "mechanism", "pieces", "epsilon", "delta", "dataset_fingerprint", "created_at"} <= set(
        data
    )
    assert data["mechanism"] == "Gaussian"
    assert [(p["name"], p["epsilon"], p["delta"]) for p in data["pieces"]] == [
        ("sum", 0.4, 5e-7),
        ("count", 0.4, 5e-7),
    ]
    assert data["pieces"][0]["sensitivity"] == 100.0  # c·(U − L)/2 with c = 2
    assert data["pieces"][0]["parameters"]["sensitivity"] == 100.0
    assert "enforced by truncation on column 'pid'" in data["unit_of_privacy"]
    assert data["created_at"].endswith("+00:00")
    assert r.combination and "max(noisy count, 1)" in r.combination


def test_coordinate_mechanisms_split_the_budget_over_the_coordinates_one_person_changes(
    df: pd.DataFrame,
) -> None:
    q = Histogram(column="region", categories=["N", "S", "E"], facts=Facts(neighbours="substitute"))
    r = release(q, DiscreteGaussian, df, epsilon=1.0, delta=1e-6)
    (piece,) = r.pieces
    assert piece.parameters["epsilon"] == 0.5 and piece.parameters["delta"] == 5e-7
    assert piece.sensitivity == 1 and "ε/2" in piece.composition


def test_laplace_uses_the_l1_and_gaussian_the_l2_sensitivity(df: pd.DataFrame) -> None:
    q = Histogram(column="region", categories=["N", "S", "E"], facts=Facts(neighbours="substitute"))
    assert release(q, Laplace, df, epsilon=1.0).pieces[0].sensitivity == 2
    assert release(q, Gaussian, df, epsilon=1.0, delta=1e-6).pieces[0].sensitivity == pytest.approx(
        math.sqrt(2)
    )


# ---- post-processing ---------------------------------------------------------------------------------


def test_post_processing_is_applied_in_order_and_recorded(df: pd.DataFrame) -> None:
    tiny = df.head(3)
    q = Count(where=[Where("age", ">", 200)])  # true count 0: noise makes negatives likely
    r = release(q, Laplace, tiny, epsilon=0.1, postprocess=["clamp_nonnegative", "round"])
    assert r.postprocessing == ("clamp_nonnegative", "round")
    assert r.values == (max(0, round(r.noisy_values[0])),)
    assert isinstance(r.values[0], int)
    assert set(POSTPROCESSING) >= set(r.postprocessing)


def test_project_psd_gives_a_positive_semidefinite_matrix(df: pd.DataFrame) -> None:
    q = SecondMoment(columns=("age", "income"), norm_bound=150.0)
    r = release(q, Gaussian, df.head(5), epsilon=0.05, delta=1e-6, postprocess=["project_psd"])
    assert np.linalg.eigvalsh(q.matrix(r.values))[0] >= -1e-6 * np.abs(r.values).max()


def test_clamp_to_bounds(df: pd.DataFrame) -> None:
    r = release(
        Variance(column="income", bounds=(0, 10)),
        Laplace,
        df.head(4),
        epsilon=0.01,
        postprocess=["clamp_to_bounds"],
    )
    assert 0.0 <= r.values[0] <= 25.0


# ---- compatibility and bad arguments ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "mechanism", "kwargs", "error", "message"),
    [
        (
            Mean(column="income", bounds=(0, 100)),
            Geometric,
            {},
            ParameterError,
            r"Geometric adds integer noise and needs integer answers; centred sum of income is not",
        ),
        (
            Sum(column="income", bounds=(0, 100)),
            DiscreteGaussian,
            {"delta": 1e-6},
            ParameterError,
            r"needs integer answers",
        ),
        (
            Quantile.median(column="age", candidates=(1.0, 2.0)),
            Laplace,
            {},
            ParameterError,
            r"selects one of its candidates: use ExponentialMechanism",
        ),
        (Count(), ExponentialMechanism, {}, ParameterError, r"ExponentialMechanism selects among candidates"),
        (Count(), Gaussian, {}, ParameterError, r"delta is required for the Gaussian mechanism"),
        (
            Count(),
            Laplace,
            {"delta": 1e-5},
            ParameterError,
            r"delta must not be given for the Laplace mechanism",
        ),
        (
            Count(facts=Facts(neighbours="substitute")),
            Laplace,
            {},
            ParameterError,
            r"count of rows has sensitivity 0 under substitute",
        ),
        (
            Histogram(column="region", categories=["N"]),
            RandomizedResponse,
            {},
            ParameterError,
            r"RandomizedResponse reveals the number of respondents",
        ),
        (
            Sum(column="income", bounds=(0, 1)),
            RandomizedResponse,
            {},
            ParameterError,
            r"releases a histogram",
        ),
        (
            SecondMoment(columns=("age",)),
            Wishart,
            {},
            ParameterError,
            r"Wishart mechanism is not differentially",
        ),
        (Count(), VectorMechanism, {}, ParameterError, r"pass Laplace or Gaussian"),
        (Count(), Laplace(epsilon=1.0, sensitivity=1.0), {}, ParameterTypeError, r"not an instance"),
        (Count(), "laplacian", {}, ParameterError, r"mechanism must be one of"),
        (Count(), Laplace, {"postprocess": ["smooth"]}, ParameterError, r"postprocess steps must be among"),
        (
            Count(),
            Laplace,
            {"postprocess": ["clamp_to_bounds"]},
            ParameterError,
            r"clamp_to_bounds applies to means",
        ),
        (
            Mode(column="region", categories=["N", "S"]),
            ReportNoisyMax,
            {"postprocess": ["round"]},
            ParameterError,
            r"has no numeric values to post-process",
        ),
        (Count(), Staircase, {"options": {"calibration": "x"}}, ParameterError, r"not allowed for Staircase"),
        (Count(), Laplace, {"epsilon": -1}, ParameterError, r"epsilon must be a finite number > 0"),
    ],
)
def test_incompatible_or_bad_arguments_are_refused(df, query, mechanism, kwargs, error, message) -> None:
    arguments = {"epsilon": 1.0, **kwargs}
    with pytest.raises(error, match=message):
        release(query, mechanism, df, **arguments)


def test_mechanisms_by_name(df: pd.DataFrame) -> None:
    assert release(Count(), "geometric", df, epsilon=1.0).mechanism == "Geometric"
    assert release(
        Mode(column="region", categories=["N", "S"]), "permute-and-flip", df, epsilon=1.0
    ).mechanism == ("PermuteAndFlip")


def test_release_format_is_checked() -> None:
    with pytest.raises(ParameterError, match="unsupported release format"):
        Release.from_dict({"format": 99})
    with pytest.raises(ParameterError, match="lacks the field"):
        Release.from_dict({"format": 1, "values": []})


# ---- selections and randomized response ------------------------------------------------------------------


def test_a_mode_releases_a_category_and_its_count_gap_in_rows(df: pd.DataFrame) -> None:
    q = Mode(column="diagnosis", categories=["flu", "cold", "covid"])
    r = release(q, ReportNoisyMax, df, epsilon=2.0)
    assert r.values[0] in q.categories and r.true_values == ("flu",)
    assert r.pieces[0].parameters["monotone"] is True  # counts under add/remove
    assert r.accuracy.method == "count gap bound" and r.accuracy.half_widths[0] > 0
    assert "rows" in r.accuracy.definition
    substitute = Mode(column="diagnosis", categories=["flu", "cold"], facts=Facts(neighbours="substitute"))
    assert release(substitute, ReportNoisyMax, df, epsilon=2.0).pieces[0].parameters["monotone"] is False


def test_quantiles_split_epsilon_equally(df: pd.DataFrame) -> None:
    q = Quantile.on_grid(column="age", bounds=(0, 100), size=101, quantiles=(0.1, 0.5, 0.9))
    r = release(q, ExponentialMechanism, df, epsilon=0.9)
    assert [p.epsilon for p in r.pieces] == pytest.approx([0.3, 0.3, 0.3])
    assert r.labels == ("q=0.1", "q=0.5", "q=0.9")
    assert all(v in q.candidates for v in r.values)


def test_randomized_response_estimates_the_histogram(df: pd.DataFrame) -> None:
    q = Histogram(
        column="region", categories=["N", "S", "E"], outside="other", facts=Facts(neighbours="substitute")
    )
    r = release(q, RandomizedResponse, df, epsilon=3.0, confidence=1 - 1e-6)  # fails w.p. ≤ 1e-6
    assert sum(r.pieces[0].noisy_values) == len(df)  # every row reported once
    assert r.true_values is not None
    assert all(
        abs(a - b) <= r.accuracy.joint_half_width for a, b in zip(r.noisy_values, r.true_values, strict=True)
    )
    assert "randomized response" in r.guarantee


# ---- the stated accuracy holds -------------------------------------------------------------------------


@pytest.mark.slow
def test_the_stated_accuracy_covers_the_truth_at_the_confidence(df: pd.DataFrame) -> None:
    """OS randomness: 300 releases each; the share within the stated half-widths is at least the
    confidence minus 5 standard errors (exact statements) or at least it (bounds are conservative)."""
    runs, confidence = 300, 0.9
    slack = 5 * math.sqrt(confidence * (1 - confidence) / runs)
    for query, mechanism in [
        (Histogram(column="region", categories=["N", "S", "E"]), Geometric),
        (Mean(column="income", bounds=(0, 100)), Laplace),
        (Quantile.on_grid(column="age", bounds=(0, 100), size=101), PermuteAndFlip),
    ]:
        covered = 0
        for _ in range(runs):
            r = release(query, mechanism, df.head(60), epsilon=0.5, confidence=confidence)
            # The simulated ± of a mean is stated at the released pieces; a quantile's is measured from
            # the best public candidate (its true value); all values at once within the joint ±.
            error = np.abs(np.subtract(r.values, r.true_values))
            covered += bool(np.all(error <= r.accuracy.joint_half_width + 1e-9))
        assert covered / runs >= confidence - slack, (query.name, covered)


# ---- the fingerprint --------------------------------------------------------------------------------------


def test_the_fingerprint_is_a_digest_of_the_values_not_of_the_layout(df: pd.DataFrame) -> None:
    fp = dataset_fingerprint(df)
    assert fp.startswith("sha256:") and len(fp) == len("sha256:") + 64
    assert dataset_fingerprint(df.copy()) == fp
    assert dataset_fingerprint(df[list(reversed(df.columns))]) == fp  # column order: no query reads it
    assert dataset_fingerprint(df.set_index(np.arange(len(df)) + 1000)) == fp  # the index: neither
    changed = df.copy()
    changed.loc[5, "age"] += 1
    assert dataset_fingerprint(changed) != fp
    assert dataset_fingerprint(df.iloc[::-1]) != fp  # the exact table, rows in their order
    assert dataset_fingerprint(df.astype({"age": float})) != fp
    nan_a = pd.DataFrame({"x": [np.nan, 1.0]})
    nan_b = pd.DataFrame({"x": [float("nan") * -1, 1.0]})
    assert dataset_fingerprint(nan_a) == dataset_fingerprint(nan_b)
    assert dataset_fingerprint(pd.DataFrame({"s": ["a", None]})) != dataset_fingerprint(
        pd.DataFrame({"s": ["a", "None"]})
    )


# ---- options cannot change the calibration ------------------------------------------------------------

RR_HISTOGRAM = Histogram(
    column="region", categories=["N", "S", "E"], outside="other", facts=Facts(neighbours="substitute")
)
MODE = Mode(column="diagnosis", categories=["flu", "cold", "covid"])


@pytest.mark.parametrize(
    ("query", "mechanism", "kwargs", "options", "allowed"),
    [
        (Count(), Laplace, {}, {"sensitivity": 1e-9}, "none"),
        (Count(), Geometric, {}, {"epsilon": 50.0}, "none"),
        (Count(), Gaussian, {"delta": 1e-6}, {"delta": 0.5}, "only calibration"),
        (Count(), Gaussian, {"delta": 1e-6}, {"sensitivity": 1e-9, "calibration": "classic"}, "only .*"),
        (Count(), DiscreteGaussian, {"delta": 1e-6}, {"delta": 0.5}, "none"),
        (Count(), Staircase, {}, {"epsilon": 50.0, "gamma": 0.3}, "only gamma"),
        (MODE, ReportNoisyMax, {}, {"sensitivity": 10**-3}, "none"),
        (MODE, PermuteAndFlip, {}, {"monotone": True}, "none"),
        (MODE, ExponentialMechanism, {}, {"epsilon": 50.0}, "none"),
        (RR_HISTOGRAM, RandomizedResponse, {}, {"epsilon": 50.0}, "none"),
    ],
)
def test_options_cannot_override_the_calibration(df, query, mechanism, kwargs, options, allowed) -> None:
    """``options={"sensitivity": 1e-9}`` once released a count almost exactly while recording Δ = 1."""
    with pytest.raises(ParameterError, match=rf"not allowed for {mechanism.__name__}.*: {allowed}$"):
        release(query, mechanism, df, epsilon=1.0, options=options, **kwargs)


def test_calibrate_and_the_audit_refuse_calibration_options_too(df: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match=r"\['sensitivity'\] are not allowed for Laplace"):
        calibrate(Count(), Laplace, df, epsilon=1.0, options={"sensitivity": 1e-9})
    with pytest.raises(ParameterError, match=r"\['sensitivity'\] are not allowed for Laplace"):
        query_target(Count(), Laplace, df, df.iloc[1:], epsilon=1.0, options={"sensitivity": 1e-9})
    with pytest.raises(ParameterError, match=r"\['monotone'\] are not allowed for PermuteAndFlip"):
        query_target(MODE, PermuteAndFlip, df, df.iloc[1:], epsilon=1.0, options={"monotone": True})


def test_allowed_options_are_used_and_recorded(df: pd.DataFrame) -> None:
    classic = release(Count(), Gaussian, df, epsilon=0.5, delta=1e-6, options={"calibration": "classic"})
    assert classic.pieces[0].parameters["calibration"] == "classic"
    assert classic.pieces[0].parameters["sensitivity"] == 1.0
    stair = release(Count(), Staircase, df, epsilon=1.0, options={"gamma": 0.25})
    assert stair.pieces[0].parameters["gamma"] == 0.25 and stair.pieces[0].parameters["epsilon"] == 1.0
