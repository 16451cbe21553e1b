"""Post-processing steps (rounding with a stated precision, clamping) and the ± of what is published:
exact where a closed form exists, otherwise a seeded simulation whose claims are checked here against
release-grade draws (the samplers ``release`` uses).

Statistical tests are seeded. Coverage tolerances: a coverage estimated from M release-grade trials has
standard error √(c(1 − c)/M); the simulated ±a itself comes from N draws, which moves its true coverage by
about √(c(1 − c)/N). Each test allows 4 times the combined standard error.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpdash import preview, published
from dpdash.errors import ParameterError
from dpdash.mechanisms import Geometric, Laplace
from dpdash.queries import Count, GroupByMean, Histogram, Mean, Variance
from dpdash.release import (
    POSTPROCESSING,
    Release,
    calibrate,
    describe_postprocessing,
    postprocess_values,
    postprocessing_step,
    release,
)

CONFIDENCE = 0.95


@pytest.fixture(scope="module")
def ages() -> pd.DataFrame:
    rng = np.random.default_rng(442)
    return pd.DataFrame({"age": rng.integers(18, 90, size=442), "region": rng.choice(["N", "S"], size=442)})


def _tolerance(trials: int, draws: int, c: float = CONFIDENCE) -> float:
    return 4.0 * math.sqrt(c * (1 - c) / trials + c * (1 - c) / draws)


# ---- the steps --------------------------------------------------------------------------------------


def test_rounding_steps_give_the_stated_precision() -> None:
    q = Count()
    values = [26.75780335979852, 568.5478515625, -0.0449, 0.0]
    assert postprocess_values(["round_decimals:2"], q, values).tolist() == [26.76, 568.55, -0.04, 0.0]
    assert postprocess_values(["round_significant:3"], q, values).tolist() == [26.8, 569.0, -0.0449, 0.0]
    assert postprocess_values(["round_decimals:-1"], q, values).tolist() == [30.0, 570.0, -0.0, 0.0]
    assert postprocess_values(["round"], q, values).tolist() == [27.0, 569.0, -0.0, 0.0]
    # Clamping counts at 0 and to integers, in that order.
    assert postprocess_values(["clamp_nonnegative", "round"], q, [-3.2, 568.5478515625]).tolist() == [
        0.0,
        569.0,
    ]
    # Works on many possible releases at once (the preview's simulation), row by row the same.
    many = np.array([values, [1.23456, 2.5, 3.5, -7.777]])
    for steps in (["round_decimals:1"], ["round_significant:2"], ["clamp_nonnegative", "round"]):
        together = postprocess_values(steps, q, many)
        assert np.array_equal(together, np.vstack([postprocess_values(steps, q, row) for row in many]))


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ("round_decimals", r"needs an integer N from -9 to 12"),
        ("round_decimals:2.5", r"needs an integer N"),
        ("round_decimals:13", r"needs an integer N from -9 to 12"),
        ("round_significant:0", r"needs an integer N from 1 to 15"),
        ("round:2", r"takes no parameter"),
        ("smooth", r"postprocess steps must be among"),
    ],
)
def test_bad_steps_are_refused_with_the_rule(ages: pd.DataFrame, step: str, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        release(Count(), Laplace, ages, epsilon=1.0, postprocess=[step])


def test_every_step_is_described_and_recorded(ages: pd.DataFrame) -> None:
    assert postprocessing_step("round_decimals", 2) == "round_decimals:2"
    assert (
        describe_postprocessing("round_decimals:2")
        == "every value rounded to 2 decimal places (ties to even)"
    )
    assert describe_postprocessing("round_significant:1").startswith(
        "every value rounded to 1 significant digit "
    )
    assert "multiple of 100" in describe_postprocessing("round_decimals:-2")
    assert all(
        describe_postprocessing(s) for s in POSTPROCESSING if s not in ("round_decimals", "round_significant")
    )
    r = release(Mean(column="age", bounds=(0, 100)), Laplace, ages, epsilon=1.0,
                postprocess=["clamp_to_bounds", "round_decimals:2"])  # fmt: skip
    assert r.postprocessing == ("clamp_to_bounds", "round_decimals:2")
    assert r.values[0] == round(min(max(r.noisy_values[0], 0.0), 100.0), 2)
    assert len(repr(r.values[0]).split(".")[-1]) <= 2  # 26.76, not 26.75780335979852
    record = json.loads(r.to_json())
    assert record["postprocessing"] == ["clamp_to_bounds", "round_decimals:2"]
    assert Release.from_json(r.to_json()) == r
    counts = release(Histogram(column="region", categories=["N", "S"]), Laplace, ages, epsilon=0.5,
                     postprocess=["clamp_nonnegative", "round"])  # fmt: skip
    assert all(isinstance(v, int) and v >= 0 for v in counts.values)  # not 568.5478515625


# ---- exact where a closed form exists ------------------------------------------------------------------


def test_one_noisy_answer_without_post_processing_is_exact(ages: pd.DataFrame) -> None:
    q = Histogram(column="region", categories=["N", "S"], outside="drop")
    pieces = calibrate(q, Geometric, ages, epsilon=0.5)
    truth = q.true_answer(ages)
    acc = preview.preview_accuracy(q, pieces, truth, confidence=CONFIDENCE)
    m = pieces[0].mechanism
    assert acc.method == "exact" and acc.label == "exact"
    assert acc.half_widths.tolist() == [m.release_accuracy(CONFIDENCE, 1)] * 2
    assert acc.joint_half_width == m.release_accuracy(CONFIDENCE, 2)
    assert acc.definition.startswith(
        "exact: each released value is within ±a of its true value with probability 0.95"
    )
    # What a release states for these settings, whatever the data: the same numbers, the same words.
    stated = release(q, Geometric, ages, epsilon=0.5).accuracy
    assert stated.half_widths == tuple(acc.half_widths) and stated.joint_half_width == acc.joint_half_width
    assert stated.definition == acc.definition and stated.scope == "each"


def test_a_selection_half_width_is_exact() -> None:
    candidates = [0.0, 10.0, 20.0, 30.0]
    chances = [0.02, 0.9, 0.05, 0.03]
    # |candidate − 12|: 2 (0.9), 8 (0.05), 12 (0.02), 18 (0.03): 95% first reached at 8.
    assert preview.selection_half_width(chances, candidates, 12.0, 0.95) == 8.0
    assert preview.selection_half_width(chances, candidates, 12.0, 0.9) == 2.0
    dots = preview.selection_dots(chances, candidates)
    assert dots.tolist().count(10.0) == round(0.9 * preview.DOTS) and dots[0] == 0.0


# ---- simulated where none exists: the claims hold for release-grade draws -----------------------------


def _release_grade(query, pieces, true_pieces, trials: int, steps=()) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``trials`` possible releases from the release-grade samplers (exact, OS randomness), combined and
    post-processed as ``release`` does."""
    noisy = {p.name: p.mechanism.release_trials(np.atleast_1d(true_pieces[p.name]), trials).astype(float)
             for p in pieces}  # fmt: skip
    values = query.combine(noisy) if len(pieces) > 1 else noisy["answer"]
    return postprocess_values(steps, query, values) if steps else values


@pytest.mark.parametrize(
    ("query", "epsilon"),
    [
        (Mean(column="age", bounds=(0, 100)), 0.5),
        (Variance(column="age", bounds=(0, 100)), 1.0),
        (GroupByMean(by="region", keys=["N", "S"], column="age", bounds=(0, 100)), 0.5),
    ],
    ids=["mean", "variance", "group-by mean"],
)
def test_simulated_half_width_covers_release_grade_draws(ages: pd.DataFrame, query, epsilon: float) -> None:  # type: ignore[no-untyped-def]
    evaluation = query.evaluate(ages)
    pieces = calibrate(query, Laplace, ages, epsilon=epsilon)
    acc = preview.preview_accuracy(query, pieces, evaluation.values, true_pieces=evaluation.pieces,
                                   confidence=CONFIDENCE)  # fmt: skip
    assert acc.method == "simulated" and acc.draws == preview.SIMULATION_DRAWS
    assert f"{preview.SIMULATION_DRAWS:,} possible releases" in acc.definition
    assert "Monte Carlo standard error" in acc.definition
    trials = 20_000
    released = _release_grade(query, pieces, evaluation.pieces, trials)
    errors = np.abs(released - evaluation.values)
    tolerance = _tolerance(trials, acc.draws)
    for i in range(errors.shape[1]):
        assert abs(np.mean(errors[:, i] <= acc.half_widths[i]) - CONFIDENCE) <= tolerance
    joint = np.mean(np.max(errors, axis=1) <= acc.joint_half_width)
    assert abs(joint - CONFIDENCE) <= tolerance
    # A release states the same function at its released pieces (public): within the count's noise of
    # the preview's, and exactly the function's value there.
    r = release(query, Laplace, ages, epsilon=epsilon)
    noisy = {p.name: np.asarray(p.noisy_values, dtype=float) for p in r.pieces}
    again, _, _ = published.numeric_accuracy(query, pieces, noisy, confidence=CONFIDENCE)
    assert again == r.accuracy and r.accuracy.method == "simulated"
    assert np.allclose(r.accuracy.half_widths, acc.half_widths, rtol=0.25)


def test_post_processed_half_width_covers_release_grade_draws() -> None:
    """A count near 0, clamped at 0 and rounded: ± of the published value, not of the noisy one."""
    df = pd.DataFrame({"x": range(3)})
    q = Count()
    pieces = calibrate(q, Laplace, df, epsilon=0.2)
    steps = ["clamp_nonnegative", "round"]
    acc = preview.preview_accuracy(q, pieces, [3], confidence=CONFIDENCE, postprocess=steps)
    # Data-free, as published: the exact noise's ± plus half a rounding step (clamping a count at 0
    # never moves it away from its true value, so adds nothing).
    assert acc.method == "exact + rounding" and "plus 0.5 for the rounding" in acc.definition
    exact_noisy = preview.preview_accuracy(q, pieces, [3], confidence=CONFIDENCE)
    assert acc.half_widths[0] == exact_noisy.half_widths[0] + 0.5
    trials = 20_000
    released = _release_grade(q, pieces, {"answer": [3]}, trials, steps)
    assert np.all(released >= 0) and np.all(released == np.round(released))
    coverage = np.mean(np.abs(released[:, 0] - 3) <= acc.half_widths[0])
    # Conservative (clamping halves the lower tail of a count of 3), and not looser than 1.5 times the
    # 95th percentile of the error.
    assert coverage >= CONFIDENCE
    assert acc.half_widths[0] <= 1.5 * np.quantile(np.abs(released[:, 0] - 3), CONFIDENCE)
    assert acc.chance_any_below(0.0) == 0.0


def test_stated_monte_carlo_error_matches_the_spread_over_seeds(ages: pd.DataFrame) -> None:
    q = Mean(column="age", bounds=(0, 100))
    evaluation = q.evaluate(ages)
    pieces = calibrate(q, Laplace, ages, epsilon=0.5)
    estimates, stated = [], []
    for seed in range(40):
        acc = preview.preview_accuracy(q, pieces, evaluation.values, true_pieces=evaluation.pieces, seed=seed)
        estimates.append(acc.joint_half_width)
        stated.append(acc.mc_error)
    spread = float(np.std(estimates, ddof=1))
    # 40 seeds estimate the SD within about ±25% (χ² with 39 d.f.); allow a factor 1.6 either way.
    assert spread / 1.6 <= float(np.median(stated)) <= spread * 1.6


def test_the_same_seed_gives_the_same_preview(ages: pd.DataFrame) -> None:
    q = Mean(column="age", bounds=(0, 100))
    e = q.evaluate(ages)
    pieces = calibrate(q, Laplace, ages, epsilon=1.0)
    first = preview.preview_accuracy(q, pieces, e.values, true_pieces=e.pieces)
    second = preview.preview_accuracy(q, pieces, e.values, true_pieces=e.pieces)
    assert np.array_equal(first.samples, second.samples) and first.definition == second.definition
