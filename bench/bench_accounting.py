"""Benchmark: privacy totals of a 1 000-release ledger, against Google's dp_accounting in the same run.

Run from the repository root: ``.venv/bin/python bench/bench_accounting.py`` (or ``make bench``).

The ledger holds 1 000 releases with 10 distinct mechanism settings (all five dpdash mechanisms, 100 each,
interleaved as an analyst would make them). Measured:

1. totals under every accountant (basic, advanced, optimal, zcdp, rdp, pld, tightest), cold caches;
   target ≤ 1 s;
2. one more release (``Ledger.spend``, which checks the budget under the tightest accountant) and all the
   totals again; target ≤ 200 ms;
3. the baselines: dp_accounting's PLD composing the events one at a time (as ``PLDAccountant.compose`` does
   per event) — timed on the first 100 and the last 100 steps and extrapolated to 1 000, because the full
   run takes minutes; and dp_accounting composing by count (``self_compose`` per setting, then ``compose``);
4. the tight total against dp_accounting's PLD total (pessimistic), and its optimistic estimate (a lower
   bound on the true ε): the tight total must be within 1% of the pessimistic one and never below the
   optimistic one.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hashlib
import json
import logging
import math
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from dpdash import DiscreteGaussian, Gaussian, Geometric, Laplace, Staircase
from dpdash.accounting import (
    ACCOUNTANT_NAMES,
    Budget,
    DiscreteGaussianEvent,
    GaussianEvent,
    GeometricEvent,
    LaplaceEvent,
    PrivacyEvent,
    PureDPEvent,
    clear_caches,
    event_for,
    get_accountant,
)
from dpdash.accounting.events import canonical_json
from dpdash.ledger import Ledger
from dpdash.ledger import ledger as ledger_module
from dpdash.ledger.exports import EXPORT_VERSION, dataset_record, totals_record

TARGET_TOTALS = 1.0  # seconds
TARGET_UPDATE = 0.200  # seconds
BUDGET = Budget(epsilon=20.0, delta=1e-5)
RELEASES_PER_SETTING = 100
INTERVAL = 1e-4  # dp_accounting's default PLD grid

MECHANISMS = [
    Laplace(epsilon=0.01, sensitivity=1.0),
    Laplace(epsilon=0.02, sensitivity=1.0),
    Laplace(epsilon=0.05, sensitivity=2.0),
    Gaussian(epsilon=0.1, delta=1e-9, sensitivity=1.0),
    Gaussian(epsilon=0.05, delta=1e-9, sensitivity=1.0),
    Gaussian(epsilon=0.2, delta=1e-9, sensitivity=1.0, calibration="classic"),
    Geometric(epsilon=0.02, sensitivity=1),
    Geometric(epsilon=0.05, sensitivity=2),
    DiscreteGaussian(epsilon=0.1, delta=1e-9, sensitivity=1),
    Staircase(epsilon=0.03, sensitivity=1.0),
]


def timed(function: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def build_events() -> list[PrivacyEvent]:
    """100 releases of each setting, interleaved as an analyst would make them."""
    return [
        event_for(m, query=f"{m.name} query {i}") for i in range(RELEASES_PER_SETTING) for m in MECHANISMS
    ]


def fill_ledger(ledger: Ledger, events: list[PrivacyEvent]) -> str:
    """Register the dataset and import its 1 000 past releases (as ``Ledger.import_json`` would restore
    them from an export); returns the fingerprint."""
    fingerprint = "sha256:" + hashlib.sha256(b"benchmark dataset").hexdigest()
    dataset = ledger_module.Dataset(fingerprint, "benchmark", BUDGET, "tightest", ledger_module._now())
    records = [
        {
            "uid": f"{i:032x}",
            "created_at": ledger_module._now(),
            "session": None,
            "query": e.query,
            "mechanism": e.mechanism,
            "event": e.to_dict(),
        }
        for i, e in enumerate(events)
    ]
    document = {
        "format": ledger_module.EXPORT_FORMAT,
        "schema_version": EXPORT_VERSION,
        "exported_at": ledger_module._now(),
        "dataset": dataset_record(dataset),
        "sessions": [],
        "entries": records,
        "entries_sha256": hashlib.sha256(canonical_json(records).encode()).hexdigest(),
        "totals": totals_record(dataset, events),
    }
    ledger.import_json(json.dumps(document))
    return fingerprint


# ---- dp_accounting baselines ------------------------------------------------------------------------


def dp_pld(setting: PrivacyEvent, pessimistic: bool = True) -> Any:
    """dp_accounting's PLD of one release, as its PLDAccountant builds it for the events it knows.

    ``pessimistic=False`` gives dp_accounting's optimistic estimate (privacy buckets rounding down), whose
    ε is a lower bound on the true one.
    """
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    kwargs: dict[str, Any] = {"value_discretization_interval": INTERVAL, "pessimistic_estimate": pessimistic}
    if not pessimistic:
        kwargs["use_connect_dots"] = False  # connect-the-dots is pessimistic only
    if isinstance(setting, LaplaceEvent):
        return pld.from_laplace_mechanism(1.0 / setting.epsilon, **kwargs)
    if isinstance(setting, GaussianEvent):
        return pld.from_gaussian_mechanism(setting.noise_multiplier, **kwargs)
    if isinstance(setting, GeometricEvent):
        return pld.from_discrete_laplace_mechanism(
            setting.noise_parameter, sensitivity=setting.sensitivity, **kwargs
        )
    if isinstance(setting, DiscreteGaussianEvent):
        return pld.from_discrete_gaussian_mechanism(setting.sigma, sensitivity=setting.sensitivity, **kwargs)
    if isinstance(setting, PureDPEvent):
        if pessimistic:
            params = common.DifferentialPrivacyParameters(setting.epsilon, 0.0)
            return pld.from_privacy_parameters(params, value_discretization_interval=INTERVAL)
        # The worst-case pair's losses ±ε, rounded down to the grid.
        e = setting.epsilon
        masses = {
            math.floor(e / INTERVAL + 1e-9): math.exp(e) / (1 + math.exp(e)),
            math.floor(-e / INTERVAL + 1e-9): 1 / (1 + math.exp(e)),
        }
        return pld.PrivacyLossDistribution.create_from_rounded_probability(
            masses, 0.0, INTERVAL, pessimistic_estimate=False
        )
    raise AssertionError(setting)


def dp_by_count(events: list[PrivacyEvent], pessimistic: bool = True) -> Any:
    """dp_accounting's best practice: self_compose each setting by its count, then compose the settings."""
    total = None
    for setting, count in Counter(e.setting for e in events).items():
        part = dp_pld(setting, pessimistic).self_compose(count)
        total = part if total is None else total.compose(part)
    return total


def dp_one_at_a_time_steps(events: list[PrivacyEvent], start: Any) -> list[float]:
    """Seconds per step of composing ``events`` one at a time onto ``start`` (what PLDAccountant.compose
    does for each event: build the event's PLD, compose it with the running one)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    running = start if start is not None else pld.identity(value_discretization_interval=INTERVAL)
    steps = []
    for event in events:
        t0 = time.perf_counter()
        running = running.compose(dp_pld(event.setting))
        steps.append(time.perf_counter() - t0)
    return steps


# ---- the run -------------------------------------------------------------------------------------------


def main() -> None:
    logging.getLogger().setLevel(logging.ERROR)  # dp_accounting logs warnings about its own options
    events = build_events()
    n = len(events)
    print(
        f"ledger: {n} releases, {len(set(e.setting for e in events))} distinct mechanism settings, "
        f"budget ε = {BUDGET.epsilon:g}, δ = {BUDGET.delta:g}"
    )

    with tempfile.TemporaryDirectory() as folder, Ledger(Path(folder) / "ledger.sqlite") as ledger:
        fingerprint = fill_ledger(ledger, events)
        ledger.events(fingerprint)  # parse the entries once (the app's ledger object keeps them)

        clear_caches()
        totals, cold = timed(lambda: ledger.totals(fingerprint))
        _, warm = timed(lambda: ledger.totals(fingerprint))
        pld_only = []
        for _ in range(3):
            clear_caches()
            pld_only.append(timed(lambda: get_accountant("pld").epsilon(events, BUDGET.delta))[1])

        print("\ntotals at δ = 1e-5 (ε):")
        for name in ACCOUNTANT_NAMES:
            total = totals[name]
            shown = "refused" if total is None else f"{total.epsilon:10.4f}"
            via = f"  (via {total.via})" if total is not None and total.via != name else ""
            print(f"  {name:9s} {shown}{via}")

        updates = []
        for i in range(5):
            event = event_for(MECHANISMS[(3 * i) % len(MECHANISMS)], query=f"new release {i}")

            def spend_and_total(event: PrivacyEvent = event) -> Any:
                ledger.spend(fingerprint, event)
                return ledger.totals(fingerprint)

            updates.append(timed(spend_and_total)[1])
        update = statistics.median(updates)

    # Baselines, in the same run.
    head, tail = events[:100], events[-100:]
    start_steps = dp_one_at_a_time_steps(head, None)
    prefix, prefix_time = timed(lambda: dp_by_count(events[:-100]))
    end_steps = dp_one_at_a_time_steps(tail, prefix)
    # The step cost grows with the running PLD's support, about linearly in the number of events composed:
    # estimate the 1 000 steps by the trapezoid between the mean step at the start and at the end.
    one_at_a_time = n * (statistics.mean(start_steps) + statistics.mean(end_steps)) / 2.0
    measured_steps = sum(start_steps) + sum(end_steps)

    reference_pld, by_count_time = timed(lambda: dp_by_count(events))
    reference = reference_pld.get_epsilon_for_delta(BUDGET.delta)
    optimistic = dp_by_count(events, pessimistic=False).get_epsilon_for_delta(BUDGET.delta)
    tight = totals["tightest"].epsilon

    print("\ntimes (ratio = measured / target or baseline / dpdash; > 1 means dpdash is faster):")
    print(
        f"  all 7 totals, cold caches      {cold * 1e3:8.1f} ms   target {TARGET_TOTALS * 1e3:.0f} ms: "
        f"{cold / TARGET_TOTALS:5.2f} of the target"
    )
    print(f"  all 7 totals, warm             {warm * 1e3:8.1f} ms")
    print(f"  pld total alone, cold          {statistics.median(pld_only) * 1e3:8.1f} ms (median of 3)")
    print(
        f"  spend one + all totals         {update * 1e3:8.1f} ms   target {TARGET_UPDATE * 1e3:.0f} ms: "
        f"{update / TARGET_UPDATE:5.2f} of the target (median of 5, max {max(updates) * 1e3:.1f} ms)"
    )
    print(
        f"  dp_accounting one at a time    {one_at_a_time:8.1f} s    EXTRAPOLATED from {len(start_steps)} + "
        f"{len(end_steps)} measured steps ({measured_steps:.1f} s; steps 1-100 average "
        f"{statistics.mean(start_steps) * 1e3:.0f} ms, steps 901-1000 average "
        f"{statistics.mean(end_steps) * 1e3:.0f} ms)"
    )
    print(f"    ratio to dpdash's cold totals (all 7 accountants): {one_at_a_time / cold:7.1f}x")
    print(f"  dp_accounting by count         {by_count_time * 1e3:8.1f} ms   (self_compose, then compose)")
    ratio = by_count_time / statistics.median(pld_only)
    print(f"    ratio to dpdash's cold pld total:                  {ratio:7.1f}x")

    gap = tight / reference - 1.0
    print("\ntight total vs dp_accounting's PLD (same events, grid 1e-4):")
    print(f"  dpdash tightest                {tight:.6f}")
    print(f"  dp_accounting PLD, pessimistic {reference:.6f}   difference {gap * 100:+.4f}% (target: ±1%)")
    print(
        f"  dp_accounting PLD, optimistic  {optimistic:.6f}   (lower bound on the true ε: its discretisation "
        f"error is {reference - optimistic:.2e})"
    )
    ok_close = abs(gap) <= 0.01
    ok_floor = tight >= optimistic * (1 - 1e-12)
    print(
        f"  within 1%: {'yes' if ok_close else 'NO'}; never below dp_accounting by more than its "
        f"discretisation error: {'yes' if ok_floor else 'NO'}"
    )
    print(f"  (prefix of {n - 100} events composed by count for the end-steps baseline: {prefix_time:.1f} s)")


if __name__ == "__main__":
    main()
