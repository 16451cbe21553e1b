"""The ± a release publishes is the ± its preview promised (dpdash.published): one function, one meaning
(per value, all values at once, the confidence), in the values' units, in the release record, its CSV, its
JSON, the stakeholder report and the reproduction script; and it is honest and tight.

Coverage tests are seeded and use the fast simulation samplers (the release-grade ones are checked in
test_release_record.py and test_postprocess_accuracy.py). With R = 2 000 simulated releases the share of
errors within a 95% ± has standard deviation sd = √(0.95·0.05/R) ≈ 0.0049; each test asks for coverage
≥ 0.95 − 3·sd, and for a ± no looser than 1.5 times the empirical 95th percentile of the error (of the
largest error over the values, for the all-at-once ±).
"""

from __future__ import annotations

import csv
import inspect
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdash import preview, published
from dpdash.accounting import Budget
from dpdash.export import release_csv, release_script, simulate_release
from dpdash.facts import Bins, Facts
from dpdash.ledger import Ledger, fingerprint
from dpdash.mechanisms import ExponentialMechanism, Geometric, Laplace, PermuteAndFlip, ReportNoisyMax
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
    Sum,
    Variance,
)
from dpdash.release import Release, calibrate, release
from dpdash.report import released_values, stakeholder_report
from dpdash.reproduce import Reproduction
from dpdash.rounding import half_width_exponent, published_figures

CONFIDENCE = 0.95
RELEASES = 2_000
SLACK = 3 * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / RELEASES)


@pytest.fixture(scope="module")
def panel() -> pd.DataFrame:
    """545 people × 8 years, log-wages: the outside tester's shape."""
    rng = np.random.default_rng(545)
    people, years = 545, 8
    person = np.repeat(np.arange(people), years)
    year = np.tile(np.arange(2010, 2010 + years), people)
    wage = np.clip(1.68 + 0.4 * rng.standard_normal(people)[person] + 0.15 * rng.standard_normal(person.size),
                   0.0, 4.0)  # fmt: skip
    region = rng.choice(["N", "S", "E"], size=person.size, p=[0.5, 0.3, 0.2])
    return pd.DataFrame({"id": person, "year": year.astype(str), "lwage": wage, "region": region,
                         "visits": rng.integers(0, 10, size=person.size)})  # fmt: skip


FACTS = Facts(rows_per_person=8, id_column="id")
YEARS = tuple(str(y) for y in range(2010, 2018))
KINDS = {
    "count": (Count(facts=FACTS), Geometric),
    "sum": (Sum(column="visits", bounds=(0, 10), facts=FACTS), Laplace),
    "mean": (Mean(column="lwage", bounds=(0, 4), facts=FACTS), Laplace),
    "variance": (Variance(column="lwage", bounds=(0, 4), facts=FACTS), Laplace),
    "histogram": (Histogram(column="region", categories=("N", "S", "E"), facts=FACTS), Geometric),
    "binned histogram": (Histogram(column="lwage", bins=Bins((0, 1, 2, 3, 4)), facts=FACTS), Laplace),
    "group-by count": (GroupByCount(by="year", keys=YEARS, facts=FACTS), Geometric),
    "group-by sum": (
        GroupBySum(by="year", keys=YEARS, column="visits", bounds=(0, 10), facts=FACTS),
        Laplace,
    ),
    "group-by mean": (
        GroupByMean(by="year", keys=YEARS, column="lwage", bounds=(0, 4), facts=FACTS),
        Laplace,
    ),
    "contingency table": (
        ContingencyTable(columns=("region", "year"), categories=(("N", "S", "E"), YEARS), facts=FACTS),
        Geometric,
    ),
    "median": (Quantile.on_grid(column="lwage", bounds=(0, 4), size=401, facts=FACTS), ExponentialMechanism),
    "two quantiles": (
        Quantile.on_grid(column="lwage", bounds=(0, 4), size=401, quantiles=(0.25, 0.75), facts=FACTS),
        PermuteAndFlip,
    ),
    "mode": (Mode(column="region", categories=("N", "S", "E"), facts=FACTS), ReportNoisyMax),
}
EPSILON = 0.3


def _selectors(query, mechanism, epsilon: float) -> list:  # type: ignore[no-untyped-def]
    """The selection mechanisms ``release`` calibrates: ε split equally over the selections."""
    count = len(query.selections)
    return [mechanism(epsilon=epsilon / count, sensitivity=s, monotone=query.monotone)
            for s in query.utility_sensitivities]  # fmt: skip


def _previewed(query, mechanism, df: pd.DataFrame) -> published.Accuracy:  # type: ignore[no-untyped-def]
    """The ± the owner's preview states for these settings (ui/previews.py calls exactly these)."""
    evaluation = query.evaluate(df)
    if isinstance(query, Quantile | Mode):
        stated, _ = published.selection_accuracy(query, _selectors(query, mechanism, EPSILON),
                                                 evaluation.utilities, CONFIDENCE)  # fmt: skip
        return stated
    pieces = calibrate(query, mechanism, df, epsilon=EPSILON)
    acc = preview.preview_accuracy(query, pieces, evaluation.values, true_pieces=evaluation.pieces,
                                   confidence=CONFIDENCE)  # fmt: skip
    assert acc.stated is not None
    assert np.array_equal(acc.half_widths, acc.stated.half_widths)  # the headline is the stated ±
    assert acc.joint_half_width == acc.stated.joint_half_width
    return acc.stated


def _csv(made: Release) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(release_csv(made))))
    return rows[0], rows[1:]


def _covers(shown: float, stated: float) -> None:
    """A shown ± holds wherever the stated one does, and is at most 1.5 units of its last digit larger."""
    exponent = half_width_exponent(stated)
    unit = 0.0 if exponent is None else 10.0**exponent
    assert stated <= shown <= stated + 1.5 * unit


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_published_plus_minus_is_the_previewed_one_everywhere(kind: str, panel: pd.DataFrame,
                                                                  tmp_path: Path) -> None:  # fmt: skip
    query, mechanism = KINDS[kind]
    made = release(
        query, mechanism, panel, epsilon=EPSILON, confidence=CONFIDENCE, identity=fingerprint(panel)
    )
    stated, previewed = made.accuracy, _previewed(query, mechanism, panel)
    k = len(made.values)
    # The meaning: per value, with the all-at-once ± beside it, at the confidence.
    assert (
        stated.scope == previewed.scope == "each" and stated.confidence == previewed.confidence == CONFIDENCE
    )
    assert stated.method == previewed.method and len(stated.half_widths) == k
    assert stated.joint_half_width is not None and stated.joint_half_width >= max(stated.half_widths)
    assert "utility" not in stated.definition  # in the values' units (a mode's: rows of the count)
    if stated.method == "simulated":
        # The same function, at the released pieces (public) instead of the true ones: equal to it
        # exactly there, and within the count's noise of the preview's numbers.
        pieces = calibrate(query, mechanism, panel, epsilon=EPSILON)
        noisy = {p.name: list(p.noisy_values) for p in made.pieces}
        again, _, _ = published.numeric_accuracy(query, pieces, noisy, confidence=CONFIDENCE)
        assert again == stated
        # How far it is from the preview's: the ± of a ratio is about the noise of its numerator over
        # the count, so a release states the preview's ± times (true count / released count), up to
        # the Monte Carlo error and the plug-in mean. Checked on a seeded possible release (the record
        # above drew OS randomness): a group of 545 rows has a count noise of about 14% here (the
        # outside tester's panel), which the preview shows as the range of the ± a release may state.
        evaluation = query.evaluate(panel)
        rng = np.random.default_rng(5)
        seeded = {
            p.name: np.asarray(p.mechanism.simulate(np.atleast_1d(evaluation.pieces[p.name]), 1, rng=rng))[0]
            for p in pieces
        }
        at_seeded, _, _ = published.numeric_accuracy(query, pieces, seeded, confidence=CONFIDENCE)
        released_count = np.maximum(np.asarray(seeded["count"], dtype=float), 1.0)
        true_count = np.asarray(evaluation.pieces["count"], dtype=float)
        scaled = np.asarray(at_seeded.half_widths) * released_count
        assert np.allclose(scaled, np.asarray(previewed.half_widths) * true_count, rtol=0.15)
    else:  # exact, from public facts and the noise law (or, for quantiles, the exact chances)
        assert stated == previewed
    # JSON record: the same accuracy, read back.
    assert Release.from_json(made.to_json()).accuracy == stated
    assert json.loads(made.to_json())["accuracy"]["scope"] == "each"
    # CSV: the per-value ± under a header that says so, and the all-at-once ± beside it.
    # Shown as dpdash.rounding rounds it: two significant digits, rounded up, covering the half unit the
    # value's rounding may move it: never less than the stated ±, at most 1.5 units of its last digit more.
    header, rows = _csv(made)
    shown = published_figures(made)
    assert header[2] == "± each value (95% confidence)" == stated.column_label
    assert [r[2] for r in rows] == list(shown.half_width_texts)
    for text, width in zip(shown.half_width_texts, stated.half_widths, strict=True):
        _covers(float(text), width)
    if k > 1:
        assert header[3] == f"± all {k} values at once (95% confidence)"
        assert [r[3] for r in rows] == [shown.joint_text] * k
        _covers(float(shown.joint_text), stated.joint_half_width)
    # The stakeholder report: each value with its ±, and what it means.
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="panel", fingerprint=fingerprint(panel), budget=Budget(10.0, 0.0),
                                accountant="basic")  # fmt: skip
        ledger.spend_release(ds, made)
        page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=FACTS,
                                  released=released_values(ledger.published(ds)))  # fmt: skip
    flat = " ".join(page.split())
    for width in shown.half_width_texts[:12]:
        assert f" ± {width}</b>" in flat
    assert "± each value (95% confidence)." in flat
    if k > 1 and not stated.method.endswith("gap bound"):
        assert f"all {k} at once" in flat
    # The reproduction script prints the release's own accuracy; its --preview states what a release of
    # its simulated values would (the same function): for exact kinds, the same numbers.
    assert "REPRODUCTION.spend(" in release_script(made)  # which prints the release's own ±, as shown:
    spend = inspect.getsource(Reproduction.spend)
    assert "published_figures(result)" in spend and "result.accuracy.column_label" in spend
    simulated = simulate_release(query, mechanism, panel, epsilon=EPSILON, confidence=CONFIDENCE, rng=1)
    assert simulated.accuracy.method == stated.method and simulated.accuracy.scope == "each"
    if stated.method != "simulated":
        assert simulated.accuracy == stated


# ---- honest and tight ------------------------------------------------------------------------------------


def _coverage_and_tightness(errors: np.ndarray, each: np.ndarray, joint: float) -> None:
    """errors: (releases, k) |released − true|."""
    for i in range(errors.shape[1]):
        assert np.mean(errors[:, i] <= each[i] * (1 + 1e-12)) >= CONFIDENCE - SLACK, i
        assert each[i] <= 1.5 * np.quantile(errors[:, i], CONFIDENCE), i
    largest = errors.max(axis=1)
    assert np.mean(largest <= joint * (1 + 1e-12)) >= CONFIDENCE - SLACK
    assert joint <= 1.5 * np.quantile(largest, CONFIDENCE)


@pytest.mark.parametrize("kind", ["count", "sum", "histogram", "group-by count"])
def test_an_exact_plus_minus_covers_and_is_tight(kind: str, panel: pd.DataFrame) -> None:
    query, mechanism = KINDS[kind]
    made = release(query, mechanism, panel, epsilon=EPSILON, confidence=CONFIDENCE)
    truth = np.asarray(query.evaluate(panel).values, dtype=float)
    pieces = calibrate(query, mechanism, panel, epsilon=EPSILON)
    draws = pieces[0].mechanism.simulate(truth, RELEASES, rng=11)
    errors = np.abs(np.asarray(draws, dtype=float).reshape(RELEASES, -1) - truth)
    _coverage_and_tightness(errors, np.asarray(made.accuracy.half_widths), made.accuracy.joint_half_width)


@pytest.mark.parametrize("kind", ["mean", "group-by mean", "variance"])
def test_a_ratio_plus_minus_stated_at_the_released_pieces_covers_and_is_tight(
    kind: str, panel: pd.DataFrame
) -> None:
    """Each of 2 000 simulated releases states its own ± (the same function at its own noisy pieces,
    400 draws each for speed): at least 95% − 3 sd of the errors fall within the ± that release states,
    and the median stated ± is no looser than 1.5 times the 95th percentile of the error."""
    query, mechanism = KINDS[kind]
    evaluation = query.evaluate(panel)
    truth = np.asarray(evaluation.values, dtype=float)
    pieces = calibrate(query, mechanism, panel, epsilon=EPSILON)
    rng = np.random.default_rng(12)
    noisy = {}
    for p in pieces:
        true = np.atleast_1d(evaluation.pieces[p.name])
        noisy[p.name] = np.asarray(p.mechanism.simulate(true, RELEASES, rng=rng), dtype=float)
    released = np.asarray(query.combine(noisy), dtype=float).reshape(RELEASES, -1)
    errors = np.abs(released - truth)
    each, joint = [], []
    for r in range(RELEASES):
        stated, _, _ = published.numeric_accuracy(query, pieces, {n: v[r] for n, v in noisy.items()},
                                                  confidence=CONFIDENCE, draws=400, seed=r)  # fmt: skip
        each.append(stated.half_widths)
        joint.append(stated.joint_half_width)
    each_a, joint_a = np.asarray(each), np.asarray(joint)
    for i in range(errors.shape[1]):
        assert np.mean(errors[:, i] <= each_a[:, i]) >= CONFIDENCE - SLACK, i
        assert np.median(each_a[:, i]) <= 1.5 * np.quantile(errors[:, i], CONFIDENCE), i
    largest = errors.max(axis=1)
    assert np.mean(largest <= joint_a) >= CONFIDENCE - SLACK
    assert np.median(joint_a) <= 1.5 * np.quantile(largest, CONFIDENCE)


@pytest.mark.parametrize("kind", ["median", "two quantiles"])
def test_a_quantile_plus_minus_covers_and_is_tight_in_the_column_units(
    kind: str, panel: pd.DataFrame
) -> None:
    query, mechanism = KINDS[kind]
    made = release(query, mechanism, panel, epsilon=EPSILON, confidence=CONFIDENCE)
    evaluation = query.evaluate(panel)
    best = np.asarray(evaluation.values, dtype=float)  # the best public candidates
    grid = np.asarray(query.candidates)
    selectors = _selectors(query, mechanism, EPSILON)
    picks = np.stack([grid[s.simulate(u, RELEASES, rng=13 + i)]
                      for i, (s, u) in enumerate(zip(selectors, evaluation.utilities, strict=True))],
                     axis=1)  # fmt: skip
    errors = np.abs(picks - best)
    _coverage_and_tightness(errors, np.asarray(made.accuracy.half_widths), made.accuracy.joint_half_width)
    # In the column's units: a distance between public candidates, of the order of the grid spacing
    # times a handful of candidates, not a utility score of thousands.
    gaps = np.abs(grid - grid[0])
    assert all(np.isclose(gaps, w, rtol=1e-9, atol=1e-12).any() for w in made.accuracy.half_widths)
    assert max(made.accuracy.half_widths) < 1.0


def test_an_older_record_reads_back_as_all_at_once() -> None:
    record = {"confidence": 0.95, "half_widths": [3.0, 3.0], "method": "exact", "definition": "old"}
    old = published.Accuracy.from_dict(record)
    assert old.scope == "all" and old.joint_half_width is None
    assert old.column_label == "± all values at once (95% confidence)"
