"""Keys that are not public (MATH.md, "Keys that are not public"): the thresholded geometric mechanism's τ
against an independent sum of its noise law, its chances of publishing a key against release-grade draws
(z-scores), the (ε, δ) it records in the ledger, and what the owner alone sees."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pandas as pd
import pytest

from dpdash.accounting import Budget
from dpdash.accounting.event_factory import events_for_release
from dpdash.accounting.events import ApproxDPEvent
from dpdash.errors import ParameterError
from dpdash.facts import Facts
from dpdash.key_release import key_preview
from dpdash.ledger import Ledger, fingerprint
from dpdash.mechanisms import KeyThreshold
from dpdash.mechanisms.key_threshold import threshold_for
from dpdash.queries import KeyCounts, query_from_dict
from dpdash.release import Release, release
from tests.panel import CATEGORIES, panel

#: |z| allowed for a frequency against its exact probability (seeded or release-grade draws, 10⁵–10⁶ each).
Z = 4.5


def _tail(epsilon: float, k: int, m: int, t: int) -> float:
    """Pr[Z ≥ t] for discrete Laplace noise with r = e^(−ε/(k·m)), summed term by term from its pmf."""
    r = math.exp(-epsilon / (k * m))
    norm = (1 - r) / (1 + r)
    return math.fsum(norm * r ** abs(z) for z in range(t, t + 20_000))


@pytest.mark.parametrize(
    ("epsilon", "delta", "k", "m"),
    [(1.0, 1e-6, 1, 1), (0.1, 1e-9, 1, 1), (1.0, 1e-6, 2, 1), (0.5, 1e-5, 3, 2), (2.0, 1e-3, 4, 3)],
)
def test_the_threshold_is_the_smallest_that_keeps_a_lone_persons_key_below_delta_over_k(
    epsilon: float, delta: float, k: int, m: int
) -> None:
    tau = threshold_for(epsilon, delta, k, m)
    # A key that one person alone has holds at most m of their rows: Pr[m + Z ≥ τ] ≤ δ/k, and τ − 1 fails.
    assert _tail(epsilon, k, m, tau - m) <= delta / k
    assert tau - m == 1 or _tail(epsilon, k, m, tau - m - 1) > delta / k
    mech = KeyThreshold(epsilon=epsilon, delta=delta, max_groups=k, max_rows_per_group=m)
    assert mech.keep_chance([m])[0] == pytest.approx(_tail(epsilon, k, m, tau - m), rel=1e-9)
    # The continuous rule of MATH.md (Laplace, τ = m + b·ln(k/(2δ))) is within one step of the discrete one.
    b = k * m / epsilon
    assert abs(tau - (m + b * math.log(k / (2 * delta)))) <= 1 + b * math.log(2)


def test_chances_of_publishing_match_release_grade_draws() -> None:
    mech = KeyThreshold(epsilon=1.0, delta=0.05, max_groups=2, max_rows_per_group=1)  # τ small enough to see
    counts = np.arange(1, mech.threshold + 6)
    n = 100_000
    noisy, kept = mech.release(np.repeat(counts, n))  # exact sampler, OS randomness
    frequency = kept.reshape(counts.size, n).mean(axis=1)
    chance = mech.keep_chance(counts)
    z = (frequency - chance) / np.sqrt(chance * (1 - chance) / n)
    assert np.all(np.abs(z) < Z), (chance, frequency, z)
    assert np.all(noisy[kept] >= mech.threshold) and np.all(noisy[~kept] < mech.threshold)
    # A lone person's key: published with chance ≤ δ/k, here measured.
    assert frequency[0] <= 0.05 / 2 + Z * math.sqrt(0.025 / n)


def test_the_simulated_preview_draws_the_same_law() -> None:
    mech = KeyThreshold(epsilon=0.5, delta=0.01, max_groups=1, max_rows_per_group=2)
    counts = np.array([1, 2, mech.threshold - 1, mech.threshold, mech.threshold + 3])
    _, kept = mech.simulate(counts, 200_000, rng=7)
    chance = mech.keep_chance(counts)
    z = (kept.mean(axis=0) - chance) / np.sqrt(chance * (1 - chance) / 200_000)
    assert np.all(np.abs(z) < Z), z


def test_delta_must_leave_the_argument_whole() -> None:
    with pytest.raises(ParameterError, match="delta ≤ 1 − e"):
        KeyThreshold(epsilon=0.01, delta=0.05, max_groups=1, max_rows_per_group=1)
    with pytest.raises(ParameterError, match="needs delta > 0"):
        release(KeyCounts(column="town"), "geometric", pd.DataFrame({"town": ["a"]}), epsilon=1.0)


def test_what_a_key_count_needs_is_asked_for() -> None:
    with pytest.raises(ParameterError, match="add/remove"):
        KeyCounts(column="town", facts=Facts(neighbours="substitute"))
    with pytest.raises(ParameterError, match="group_bounds=\\(k, m\\)"):
        KeyCounts(column="town", facts=Facts(id_column="pid", rows_per_person=3))
    with pytest.raises(ParameterError, match="id column"):
        KeyCounts(column="town", group_bounds=(1, 1))
    df = pd.DataFrame({"town": ["a", "b"]})
    with pytest.raises(ParameterError, match="geometric noise and a threshold"):
        release(KeyCounts(column="town"), "laplace", df, epsilon=1.0)
    with pytest.raises(ParameterError, match="no post-processing"):
        release(KeyCounts(column="town"), "geometric", df, epsilon=1.0, delta=1e-6, postprocess=["round"])


def _people_by_industry(rows: int) -> tuple[pd.DataFrame, KeyCounts]:
    df = panel(rows, "string")
    # A few industries that one or two people alone have: they must not appear.
    lone = pd.DataFrame({"pid": ["lone-1", "lone-2", "lone-2"], "industry": ["mining", "fishing", "fishing"],
                         "wage": [50.0, 60.0, 70.0]})  # fmt: skip
    df = pd.concat([df, lone], ignore_index=True)
    facts = Facts(id_column="pid", rows_per_person=10)
    return df, KeyCounts(column="industry", group_bounds=(2, 1), facts=facts)


def test_a_release_publishes_the_common_keys_and_the_owner_sees_the_rest(tmp_path) -> None:
    df, query = _people_by_industry(50_000)
    made = release(query, "geometric", df, epsilon=1.0, delta=1e-6)
    tau = KeyThreshold(epsilon=1.0, delta=1e-6, max_groups=2, max_rows_per_group=1).threshold
    assert set(made.labels) == set(CATEGORIES)  # thousands of people each; the lone people's keys never
    assert list(made.labels) == sorted(made.labels)
    assert all(v >= tau for v in made.values)
    assert set(made.report.dropped_keys) == {"mining", "fishing"}
    # The true counts are distinct people per industry (at most 2 industries each), for the owner only.
    truth = query.evaluate(df)
    assert dict(zip(truth.keys, truth.values.tolist(), strict=True))["mining"] == 1
    assert "dropped_keys" not in made.to_json() and "mining" not in made.to_json()
    assert "mining" in made.to_json(include_private=True)
    # ± of the geometric noise at scale k/ε, per value and for all at once; the record reads back.
    noise = KeyThreshold(epsilon=1.0, delta=1e-6, max_groups=2, max_rows_per_group=1).noise_mechanism
    assert made.accuracy.half_widths == (noise.accuracy(0.95),) * 8
    assert made.accuracy.joint_half_width == noise.release_accuracy(0.95, 8)
    assert Release.from_json(made.to_json()) == made
    assert query_from_dict(made.query) == query
    # The ledger records one (ε, δ) event and spends it.
    assert events_for_release(made) == [
        ApproxDPEvent(query=made.query_name, epsilon=1.0, delta=1e-6, mechanism=KeyThreshold.name)
    ]
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="panel", fingerprint=fingerprint(df), budget=Budget(2.0, 1e-5))
        ledger.spend_release(ds, made)
        basic = ledger.totals(ds)["basic"]
        assert basic is not None and basic.epsilon == pytest.approx(1.0)  # stated at the budget's δ
        assert ledger.totals(ds)["zcdp"] is None  # an (ε, δ) guarantee has no zCDP bound: refused


def test_the_owner_preview_states_each_keys_exact_chance() -> None:
    df, query = _people_by_industry(20_000)
    preview = key_preview(query, query.evaluate(df), epsilon=1.0, delta=1e-6, rng=3)
    table = preview.table.set_index("key")
    mech = preview.mechanism
    assert table.loc["mining", "chance published"] == pytest.approx(mech.keep_chance([1])[0])
    assert table.loc["mining", "chance published"] <= 1e-6 / 2
    assert preview.expected_published == pytest.approx(table["chance published"].sum())
    assert table.loc["manufacturing", "true count"] == query.evaluate(df).values[
        list(query.evaluate(df).keys).index("manufacturing")
    ]


def test_one_row_per_person_needs_no_id() -> None:
    df = pd.DataFrame({"town": ["a"] * 40 + ["b"] * 3 + [None]})
    query = KeyCounts(column="town")
    assert query.key_bounds.to_list() == [1, 1]
    made = release(query, "geometric", df, epsilon=2.0, delta=1e-4)
    assert made.labels in ((), ("a",))  # "b" (3 people) is far below τ, "a" (40) far above
    evaluation = query.evaluate(df)
    assert evaluation.keys == ("a", "b") and evaluation.values.tolist() == [40, 3]
    assert evaluation.report.missing == 1


def test_the_published_plus_minus_is_the_previewed_one_in_every_export(tmp_path) -> None:
    """The ± of a key-count release: the preview's per-value ±, the CSV's, the record's, the report's."""
    import csv
    import io

    from dpdash.export import release_csv, release_script, simulate_release
    from dpdash.report import released_values, stakeholder_report
    from dpdash.reproduce import Reproduction
    from dpdash.rounding import published_figures

    df, query = _people_by_industry(20_000)
    made = release(query, "geometric", df, epsilon=0.5, delta=1e-6, identity=fingerprint(df))
    previewed = key_preview(query, query.evaluate(df), epsilon=0.5, delta=1e-6).accuracy
    k = len(made.values)
    assert k == 8 and made.accuracy.half_widths == (previewed.half_widths[0],) * k
    assert made.accuracy.method == previewed.method == "exact" and made.accuracy.scope == "each"
    rows = list(csv.reader(io.StringIO(release_csv(made))))
    assert rows[0][2] == made.accuracy.column_label
    assert rows[0][3] == f"± all {k} values at once (95% confidence)"
    assert [r[0] for r in rows[1:]] == list(made.labels)
    assert {r[2] for r in rows[1:]} == {published_figures(made).half_width_texts[0]}
    assert float(rows[1][2]) >= made.accuracy.half_widths[0]  # the shown ± covers the stated one
    assert Release.from_json(made.to_json()).accuracy == made.accuracy
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="panel", fingerprint=fingerprint(df), budget=Budget(1.0, 1e-5))
        ledger.spend_release(ds, made)
        released = released_values(ledger.published(ds))
        entries, totals = ledger.entries(ds), ledger.totals(ds)
        page = stakeholder_report(ds, entries, totals, facts=query.facts, released=released)
    page = " ".join(page.split())
    assert f" ± {published_figures(made).half_width_texts[0]}</b>" in page and "mining" not in page
    assert "REPRODUCTION.spend(" in release_script(made)  # which prints the release's own ±, as shown
    assert "published_figures(result)" in inspect.getsource(Reproduction.spend)
    simulated = simulate_release(query, "geometric", df, epsilon=0.5, delta=1e-6, rng=1)
    assert simulated.accuracy.half_widths == made.accuracy.half_widths[: len(simulated.values)]


def test_the_plus_minus_covers_counts_well_above_the_threshold() -> None:
    """Seeded, 20 000 simulated releases of keys at 2τ and more: each count within its ± at least
    95% − 3 sd of the time, and all of them within the joint ± likewise (well above τ the threshold
    hardly ever binds, so the noise's coverage is the published value's)."""
    mech = KeyThreshold(epsilon=0.5, delta=1e-6, max_groups=2, max_rows_per_group=1)
    counts = np.array([2, 3, 5, 8]) * mech.threshold
    noisy, kept = mech.simulate(counts, 20_000, rng=11)
    assert kept.all()
    from dpdash.key_release import key_accuracy

    accuracy = key_accuracy(mech, counts.size, 0.95)
    errors = np.abs(noisy - counts)
    slack = 3 * math.sqrt(0.95 * 0.05 / 20_000)
    assert np.all(np.mean(errors <= accuracy.half_widths[0], axis=0) >= 0.95 - slack)
    assert np.mean(errors.max(axis=1) <= accuracy.joint_half_width) >= 0.95 - slack


def test_a_group_by_over_the_published_keys_composes_with_the_selection(tmp_path) -> None:
    """Keys published by a key-count release are public: a group-by mean over them is a second release,
    and the ledger adds the two (basic: ε₁ + ε₂)."""
    from dpdash.queries import GroupByMean

    df, query = _people_by_industry(20_000)
    keys = release(query, "geometric", df, epsilon=0.5, delta=1e-6)
    mean = GroupByMean(by="industry", keys=keys.labels, column="wage", bounds=(0, 200), facts=query.facts)
    wages = release(mean, "laplace", df, epsilon=0.5)
    assert wages.labels[: len(keys.labels)] == keys.labels and "mining" not in wages.labels
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="panel", fingerprint=fingerprint(df), budget=Budget(2.0, 1e-5),
                                accountant="basic")  # fmt: skip
        ledger.spend_release(ds, keys)
        ledger.spend_release(ds, wages)
        assert ledger.totals(ds)["basic"].epsilon == pytest.approx(1.0)
