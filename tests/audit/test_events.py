"""Binning, the event search and the audit run's bookkeeping (seeded numpy samples: this tests the
search, not a mechanism)."""

from __future__ import annotations

import numpy as np
import pytest

from dpdash.audit import AuditRun, Binning, audit, best_event, mechanism_target
from dpdash.audit.events import MAX_EXACT_VALUES
from dpdash.audit.targets import AuditTarget
from dpdash.errors import ParameterError
from dpdash.mechanisms import Geometric, Laplace


def test_few_values_get_one_bin_each_and_unseen_values_fall_in_no_bin() -> None:
    binning = Binning.fit(np.array([0.0, 1.0, 1.0]), np.array([2.0, 2.0]))
    assert binning.values is not None and binning.values.tolist() == [0.0, 1.0, 2.0]
    assert binning.index(np.array([1.0, 5.0, 0.0])).tolist() == [1, -1, 0]
    assert binning.counts(np.array([1.0, 1.0, 5.0])).tolist() == [0, 2, 0]


def test_many_values_get_quantile_bins_covering_the_line() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 50_000), rng.normal(1, 1, 50_000)
    binning = Binning.fit(a, b)
    assert binning.values is None and 16 <= binning.size <= 1024
    assert binning.counts(a).sum() == a.size  # every sample lands in a bin
    assert np.unique(np.concatenate([a, b])).size > MAX_EXACT_VALUES


def test_thresholds_find_the_neyman_pearson_event_of_a_shift() -> None:
    # Laplace(0, 1) against Laplace(1, 1): every {y ≤ t} with t ≤ 0 has ratio e; the best event is a
    # threshold near 0 (most mass), favouring the first sample.
    rng = np.random.default_rng(2)
    a, b = rng.laplace(0, 1, 200_000), rng.laplace(1, 1, 200_000)
    event = best_event(a, b, delta=0.0, confidence=0.999)
    lo, hi = event.binning.intervals(event.selected)[0]
    assert len(event.binning.intervals(event.selected)) == 1
    if event.forward:
        assert lo == -np.inf and -0.5 < hi < 0.5
        assert event.describe().startswith("output ≤")
    else:
        assert hi == np.inf and 0.5 < lo < 1.5
    assert 0.9 < event.search_bound < 1.0


def test_sets_find_the_likely_values_of_categorical_outputs() -> None:
    rng = np.random.default_rng(3)
    a = rng.choice(4, 100_000, p=[0.1, 0.6, 0.1, 0.2]).astype(float)
    b = rng.choice(4, 100_000, p=[0.1, 0.2, 0.1, 0.6]).astype(float)
    event = best_event(a, b, delta=0.0, confidence=0.99, family="sets")
    chosen = event.binning.values[event.selected].tolist()  # type: ignore[index]
    assert chosen in ([1.0], [3.0])
    assert event.contains(np.array([1.0, 3.0, 7.0])).tolist() == [chosen == [1.0], chosen == [3.0], False]
    with pytest.raises(ValueError, match="family"):
        best_event(a, b, delta=0.0, confidence=0.99, family="classifier")


def test_a_run_accumulates_trials_and_reports_progress() -> None:
    target = mechanism_target(Geometric(epsilon=1.0, sensitivity=1), 0, 1)
    run = AuditRun(target, confidence=0.95)
    steps: list[tuple[int, int]] = []
    run.add(30_000, batch=10_000, progress=lambda done, total: steps.append((done, total)))
    assert steps == [(10_000, 30_000), (20_000, 30_000), (30_000, 30_000)]
    first = run.result()
    run.add(30_000)
    second = run.result()
    assert (first.trials, second.trials) == (30_000, 60_000)
    assert second.evaluation_first == second.evaluation_second == 30_000
    assert second.first.size == second.second.size == 60_000
    assert second.summary()["trials_per_side"] == 60_000
    assert "Consistent" in second.verdict or "VIOLATION" in second.verdict


def test_a_run_needs_trials_and_a_target() -> None:
    run = AuditRun(mechanism_target(Laplace(epsilon=1.0, sensitivity=1.0), 0.0, 1.0))
    with pytest.raises(ValueError, match="at least 2 trials"):
        run.result()
    with pytest.raises(TypeError, match="AuditTarget"):
        AuditRun("laplace")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="confidence"):
        AuditRun(run.target, confidence=1.5)
    with pytest.raises(ParameterError, match="trials"):
        audit(run.target, trials=0)


def test_mechanism_targets_refuse_what_cannot_be_audited() -> None:
    laplace = Laplace(epsilon=1.0, sensitivity=1.0)
    with pytest.raises(ParameterError, match="nothing to tell apart"):
        mechanism_target(laplace, 1.0, 1.0)
    with pytest.raises(ParameterError, match="same shape"):
        mechanism_target(laplace, [0.0, 1.0], 1.0)
    with pytest.raises(ParameterError, match="delta"):
        mechanism_target(laplace, 0.0, 1.0, delta=1.0)
    with pytest.raises(TypeError, match="dpdash mechanism"):
        mechanism_target(object(), 0.0, 1.0)


def test_the_claim_and_the_statistic_are_stated() -> None:
    target = mechanism_target(Laplace(epsilon=0.5, sensitivity=2.0), [0.0, 0.0], [1.0, 1.0])
    assert isinstance(target, AuditTarget)
    assert (target.epsilon, target.delta, target.events) == (0.5, 0.0, "thresholds")
    assert "projection" in target.statistic
    assert target.draw_first(10).shape == (10,)


def test_ordered_few_values_get_intervals_so_thresholds_hold_for_unseen_outputs() -> None:
    binning = Binning.fit(np.array([0.0, 1.0, 1.0]), np.array([2.0, 2.0]), ordered=True)
    assert binning.values is None and binning.edges is not None and binning.edges.tolist() == [0.0, 1.0]
    # −5 (never seen) is in the first bin (y ≤ 0), 7 in the last (y > 1), 0.5 in (0, 1]
    assert binning.index(np.array([-5.0, 0.0, 0.5, 1.0, 7.0])).tolist() == [0, 0, 1, 1, 2]
    assert binning.describe(np.array([True, False, False])) == "output ≤ 0"
    assert binning.describe(np.array([False, True, True])) == "output > 0"
