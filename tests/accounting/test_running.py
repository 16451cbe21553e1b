"""Running totals equal the accountants' totals composed from scratch, on random varied histories.

basic, advanced, optimal, zcdp and rdp: equal to the last bit (the same terms, summed exactly and rounded
once). pld (and so tightest, its minimum): the running state starts from ``PLDAccountant``'s own
composition and adds each release by one convolution; it may differ from composing everything at once by
FFT rounding (about 1e-16 of the largest mass per grid point) and by ``TAIL_MASS`` = 1e-15 of mass moved to
the infinite loss per cut. On the short histories here both move ε at δ ≥ 1e-8 by less than one part in
10⁹ (REL_SLACK, the slack every budget comparison already allows), which is the tolerance stated here; a
long run of single spends adds noise with every convolution (``test_a_long_run…`` states its tolerance).
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpdash.accounting import (
    ApproxDPEvent,
    GaussianEvent,
    GeometricEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PrivacyEvent,
    PureDPEvent,
    ZCDPEvent,
    get_accountant,
    running,
    running_pld,
)
from dpdash.accounting.accountant import Composition
from dpdash.accounting.registry import ACCOUNTANT_NAMES
from dpdash.errors import UnsupportedEventError

EXACT = ("basic", "advanced", "optimal", "zcdp", "rdp")
PLD_RTOL = 1e-9

epsilons = st.floats(min_value=0.01, max_value=0.5)
partitions = st.one_of(
    st.none(), st.tuples(st.sampled_from(["region", "age"]), st.sampled_from(["a", "b", "c"]))
)


@st.composite
def varied_event(draw: st.DrawFn, kinds: tuple[str, ...]) -> PrivacyEvent:
    kind = draw(st.sampled_from(kinds))
    label = {"partition": draw(partitions)}
    if kind == "laplace":
        return LaplaceEvent(epsilon=draw(epsilons), sensitivity=draw(st.sampled_from([1.0, 2.0])), **label)
    if kind == "geometric":
        return GeometricEvent(epsilon=draw(epsilons), sensitivity=draw(st.sampled_from([1, 2])), **label)
    if kind == "gaussian":
        sigma = draw(st.floats(min_value=2.0, max_value=20.0))
        return GaussianEvent.from_sigma(sigma=sigma, sensitivity=1.0, delta=1e-9, **label)
    if kind == "pure":
        return PureDPEvent(epsilon=draw(epsilons), mechanism="randomized response", **label)
    if kind == "approximate":
        return ApproxDPEvent(epsilon=draw(epsilons), delta=1e-9, **label)
    return ZCDPEvent(rho=draw(st.floats(min_value=1e-4, max_value=0.05)), **label)


def kinds_for(name: str) -> tuple[str, ...]:
    accountant = get_accountant(name)
    samples = {
        "laplace": LaplaceEvent(epsilon=0.1, sensitivity=1.0),
        "geometric": GeometricEvent(epsilon=0.1, sensitivity=1),
        "gaussian": GaussianEvent.from_sigma(sigma=5.0, sensitivity=1.0, delta=1e-9),
        "pure": PureDPEvent(epsilon=0.1),
        "approximate": ApproxDPEvent(epsilon=0.1, delta=1e-9),
        "zcdp": ZCDPEvent(rho=0.01),
    }
    kinds = tuple(kind for kind, event in samples.items() if accountant.supports(event))
    if name == "tightest":  # a mix that every component supports, so that all of them are compared
        kinds = ("laplace", "geometric", "gaussian", "pure")
    return kinds


def same(name: str, running_total: float, scratch: float) -> bool:
    if name in EXACT:
        return running_total == scratch
    return running_total == pytest.approx(scratch, rel=PLD_RTOL, abs=1e-12) or running_total == scratch


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_running_totals_equal_the_totals_from_scratch(name: str, data: st.DataObject) -> None:
    accountant = get_accountant(name)
    events = data.draw(st.lists(varied_event(kinds_for(name)), min_size=1, max_size=40))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(events)), max_size=3)))
    delta = data.draw(st.sampled_from([1e-5, 1e-8, 0.01]))
    running.clear()
    # Grow the history in steps, as a ledger does, asking the total (and with a tentative release) each time.
    for n in [*cuts, len(events)]:
        history = events[:n]
        assert same(name, running.epsilon(accountant, history, (), delta), accountant.epsilon(history, delta))
        kept, scratch = running.total(accountant, history, delta), accountant.total(history, delta)
        assert same(name, kept.epsilon, scratch.epsilon)
        assert (kept.delta, kept.accountant, kept.via, kept.events) == (
            scratch.delta,
            scratch.accountant,
            scratch.via,
            scratch.events,
        )
        if n < len(events):
            new = events[n : n + 2]
            both = accountant.epsilon(history + new, delta)
            assert same(name, running.epsilon(accountant, history, new, delta), both)
            limit = both * 1.01 if math.isfinite(both) else 1e9
            assert running.fits(accountant, history, new, delta, limit) == (both <= limit * (1 + 1e-9))


@pytest.mark.parametrize("name", ACCOUNTANT_NAMES)
def test_the_budget_check_agrees_at_the_boundary(name: str) -> None:
    """``fits`` answers ε ≤ budget exactly as the total does, just above and just below it."""
    accountant = get_accountant(name)
    events = [LaplaceEvent(epsilon=0.1 + 0.01 * i, sensitivity=1.0) for i in range(12)]
    events += [GaussianEvent.from_sigma(sigma=4.0 + i, sensitivity=1.0, delta=1e-9) for i in range(5)]
    if name in ("zcdp", "rdp"):
        events = [e for e in events if accountant.supports(e)]
    total = accountant.epsilon(events, 1e-5)
    running.clear()
    assert running.fits(accountant, events[:-1], events[-1:], 1e-5, total)
    assert not running.fits(accountant, events[:-1], events[-1:], 1e-5, total * (1 - 1e-6))


def test_partitioned_events_switch_between_paths_and_the_union() -> None:
    """More cells than MAX_PATHS paths: the union replaces the paths, as in ``compositions``."""
    events: list[PrivacyEvent] = []
    for by in ("a", "b", "c"):
        for part in range(5):
            events.append(LaplaceEvent(epsilon=0.05 * (part + 1), sensitivity=1.0, partition=(by, str(part))))
    events.append(LaplaceEvent(epsilon=0.3, sensitivity=1.0))
    for name in EXACT:
        accountant = get_accountant(name)
        running.clear()
        for n in range(1, len(events) + 1):
            assert running.epsilon(accountant, events[:n], (), 1e-5) == accountant.epsilon(events[:n], 1e-5)


def test_the_state_questions_start_from_is_kept_however_many_follow() -> None:
    """A history's state stays kept while questions about it plus other new releases come and go (each
    keeps its own state): found as their prefix, it is the most recently used, so it is never recomposed."""
    history = [LaplaceEvent(epsilon=0.01 + 0.001 * i, sensitivity=1.0) for i in range(20)]
    pld = get_accountant("pld")
    running.clear()
    running.kept_epsilon(pld, history, (), 1e-6)
    for i in range(2 * running.MAX_STATES):
        running.kept_epsilon(pld, history, [LaplaceEvent(epsilon=0.1 + i, sensitivity=1.0)], 1e-6)
    assert len(history) in [len(state.events) for state in running._STATES]


@pytest.mark.parametrize("name", ["pld", "tightest", "rdp"])
def test_questions_not_kept_leave_only_the_history_kept(name: str) -> None:
    """``keep=False`` (the planner's search): the same totals, from the kept state of the history, without
    keeping the state of history + new or folding its recent releases."""
    accountant = get_accountant(name)
    history = [LaplaceEvent(epsilon=0.02 + 0.001 * i, sensitivity=1.0) for i in range(30)]
    history += [GaussianEvent.from_sigma(sigma=5.0 + i, sensitivity=1.0, delta=1e-9) for i in range(10)]
    history.append(LaplaceEvent(epsilon=0.05, sensitivity=1.0, partition=("region", "a")))
    running.clear()
    for epsilon in (0.5, 2.0, 8.0):  # recent releases far longer than the history's: a fold would be due
        new = [
            LaplaceEvent(epsilon=epsilon, sensitivity=1.0),
            GaussianEvent.from_sigma(sigma=1.0 / epsilon, sensitivity=1.0, delta=1e-9),
            LaplaceEvent(epsilon=epsilon / 3, sensitivity=1.0, partition=("region", "b")),
        ]
        total = running.kept_epsilon(accountant, history, new, 1e-6, keep=False)
        assert same(name, total, accountant.epsilon(history + new, 1e-6))
        assert [len(state.events) for state in running._STATES] == [len(history)]
        assert running.finish_folds(timeout=0.0)  # no fold was started
    kept = running._STATES[0]
    assert same(name, running.kept_epsilon(accountant, history, new, 1e-6), total)  # kept (and folded) now
    assert running._STATES[-1].events == history + new and kept in running._STATES


@pytest.mark.parametrize("name", ["pld", "tightest"])
def test_many_releases_alike_onto_recent_ones_compose_once(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """k releases alike asked about (not kept) on a state whose newest releases are not yet folded into
    the rest, as a ledger's is after a few spends: PLD composes them as one k-fold pmf (``PLDAccountant``'s
    own, by count), then one convolution; the totals are those from scratch, the budget check agrees with
    them, and neither question keeps a state."""
    accountant = get_accountant(name)
    history = [LaplaceEvent(epsilon=0.02 + 0.001 * i, sensitivity=1.0) for i in range(30)]
    monkeypatch.setattr(running_pld, "FOLD_SHARE", 10.0)  # the recent releases stay recent
    running.clear()
    for n in range(len(history) - 3, len(history)):  # three spends: recent releases on the base
        running.kept_epsilon(accountant, history[:n], history[n : n + 1], 1e-6)
    kept = [len(state.events) for state in running._STATES]
    for k in (2, 40, 400):
        new = [GaussianEvent.from_sigma(sigma=10.0, sensitivity=1.0, delta=1e-9)] * k
        scratch = accountant.epsilon(history + new, 1e-6)
        assert same(name, running.kept_epsilon(accountant, history, new, 1e-6, keep=False), scratch)
        assert running.fits(accountant, history, new, 1e-6, scratch * 1.001, keep=False)
        assert not running.fits(accountant, history, new, 1e-6, scratch * 0.999, keep=False)
    assert [len(state.events) for state in running._STATES] == kept


def test_unsupported_and_non_private_events() -> None:
    running.clear()
    history = [LaplaceEvent(epsilon=0.1, sensitivity=1.0)]
    assert running.epsilon(get_accountant("basic"), history, [NonPrivateEvent()], 1e-5) == math.inf
    with pytest.raises(UnsupportedEventError):
        running.epsilon(get_accountant("basic"), history, [ZCDPEvent(rho=0.1)], 1e-5)
    with pytest.raises(UnsupportedEventError):
        running.epsilon(get_accountant("zcdp"), [ApproxDPEvent(epsilon=0.1, delta=1e-9)], [], 1e-5)
    assert running.epsilon(get_accountant("tightest"), [], [], 1e-5) == 0.0


@pytest.mark.parametrize("name", ["pld", "tightest"])
@pytest.mark.parametrize("factor", [1 - 1e-3, 1 - 2e-6, 1 + 2e-6, 1 + 1e-3])
def test_the_pld_check_from_delta_agrees_with_the_total_near_the_boundary(name: str, factor: float) -> None:
    """PLD's budget check decides from δ(limit) (one pass over the tail) unless that is within FITS_MARGIN
    of the target δ; either way it answers exactly as comparing the total ε with the limit does."""
    accountant = get_accountant(name)
    events = [LaplaceEvent(epsilon=0.05 + 0.01 * i, sensitivity=1.0) for i in range(30)]
    events += [GaussianEvent.from_sigma(sigma=3.0 + i, sensitivity=1.0, delta=1e-9) for i in range(8)]
    events += [LaplaceEvent(epsilon=0.2, sensitivity=1.0, partition=("region", p)) for p in "ab"]
    running.clear()
    total = running.epsilon(accountant, events[:-3], events[-3:], 1e-6)
    running.clear()  # the check must not find the total memoised: it is asked first
    limit = total * factor
    assert running.fits(accountant, events[:-3], events[-3:], 1e-6, limit) == (factor > 1)
    if abs(factor - 1) > 1e-4:  # far enough from the boundary: decided from δ(limit), no ε search
        state = running._STATES[-1]
        assert len(state.events) == len(events)
        assert not [key for key in state.totals if key[0].name == "pld"]
        assert [key for key in state.fit_answers if key[0].name == "pld"]


def test_the_tails_give_the_hockey_stick_divergence_at_every_epsilon() -> None:
    """``_Tails.delta`` (many ε at once, from cumulative sums) equals ``pld._delta_for_epsilon`` (one ε,
    directly), below, inside and above the support, on and off the grid."""
    import numpy as np

    from dpdash.accounting.pld import _delta_for_epsilon, _Pmf

    rng = np.random.default_rng(1)
    probs = rng.random(5000)
    probs /= probs.sum() * (1 + 1e-7)
    pmf = _Pmf(-2000, probs, 1e-9)
    xs = np.array([-5.0, -2.0005, -1.0, 0.0, 0.0004, 1.2345, 2.999, 3.0, 3.5, 800.0])
    got = running_pld._Tails(pmf, 1e-3).delta(xs)
    want = np.array([_delta_for_epsilon(pmf, 1e-3, float(x)) for x in xs])
    assert np.all(np.isfinite(got))
    assert got == pytest.approx(want, rel=1e-12, abs=0)


def test_the_tails_extend_downwards_as_they_are_asked() -> None:
    """``_Tails`` sums only the suffix asked so far; asking lower later extends it, with the same δ as
    asking everything at once (to 1e-12 relative: the sums are associated differently)."""
    import numpy as np

    from dpdash.accounting.pld import _delta_for_epsilon, _Pmf

    rng = np.random.default_rng(2)
    probs = rng.random(20_000)
    probs /= probs.sum()
    pmf = _Pmf(-5_000, probs, 1e-12)
    tails = running_pld._Tails(pmf, 1e-3)
    steps = [np.array([14.9, 20.0]), np.array([14.0]), np.array([3.3, 9.0]), np.array([-4.0, -9.0])]
    for xs in steps:
        got = tails.delta(xs)
        want = np.array([_delta_for_epsilon(pmf, 1e-3, float(x)) for x in xs])
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300)
    assert tails.start == 0


@pytest.mark.parametrize(
    "setting",
    [
        LaplaceEvent(epsilon=0.2, sensitivity=1.0),
        LaplaceEvent(epsilon=0.003, sensitivity=2.0),
        GaussianEvent.from_sigma(sigma=5.0, sensitivity=1.0, delta=1e-9),
        GeometricEvent(epsilon=0.1, sensitivity=2),
        PureDPEvent(epsilon=0.05, mechanism="randomized response"),
        ApproxDPEvent(epsilon=0.1, delta=1e-7),
    ],
    ids=lambda s: type(s).__name__,
)
def test_log_mgf_bounds_the_exact_log_mgf_and_is_tight(setting: PrivacyEvent) -> None:
    """``pld.log_mgf`` (a chord bound over blocks of the pmf) is never below log E[e^(±λJ)] computed
    point by point, and within (λw)²/8 + 1e-12 of it (w = 31, the block width)."""
    import numpy as np
    from scipy import special

    from dpdash.accounting.pld import LAMBDAS, _side, log_mgf

    for side in ("remove", "add"):
        pmf = _side(setting, 1e-4, side)
        index = pmf.lower + np.arange(len(pmf.probs))
        nonzero = pmf.probs > 0
        bounds = log_mgf(setting, 1e-4, side)
        for row, sign in enumerate((1.0, -1.0)):
            exact = np.array(
                [special.logsumexp(sign * lam * index[nonzero], b=pmf.probs[nonzero]) for lam in LAMBDAS]
            )
            assert np.all(bounds[row] >= exact - 1e-12 * np.maximum(1.0, np.abs(exact)))
            slack = (LAMBDAS * 31) ** 2 / 8 + 1e-12 * np.maximum(1.0, np.abs(exact))
            assert np.all(bounds[row] - exact <= slack)


def test_the_chernoff_window_holds_all_but_its_mass() -> None:
    """Composed exactly (dp_accounting's pmfs, one FFT), 60 varied releases have at most e^log_mass of their
    mass outside ``chernoff_window`` of their summed ``log_mgf``, on each side; and the window is narrow
    (within 10 standard deviations of the mean)."""
    import numpy as np

    from dpdash.accounting.pld import _COMPOSER, _items, chernoff_window, log_mgf

    settings_ = [LaplaceEvent(epsilon=0.01 + 0.003 * i, sensitivity=1.0) for i in range(40)]
    settings_ += [GaussianEvent.from_sigma(sigma=4.0 + i, sensitivity=1.0, delta=1e-9) for i in range(20)]
    items = _items(Composition.of(Counter(settings_)))
    pmf = _COMPOSER.compose(items, 1e-4, "remove")
    bounds = sum(k * log_mgf(s, 1e-4, "remove") for s, k in items)
    index = pmf.lower + np.arange(len(pmf.probs))
    mean = float(np.dot(pmf.probs, index) / pmf.probs.sum())
    sd = math.sqrt(float(np.dot(pmf.probs, (index - mean) ** 2) / pmf.probs.sum()))
    for log_mass in (math.log(1e-6), math.log(1e-9)):
        lo, hi = chernoff_window(bounds, log_mass)
        assert pmf.probs[index < lo].sum() <= math.exp(log_mass)
        assert pmf.probs[index > hi].sum() <= math.exp(log_mass)
        assert mean - 10 * sd < lo < mean < hi < mean + 10 * sd


def test_a_long_run_of_single_spends_folds_and_stays_with_the_total_from_scratch(monkeypatch) -> None:
    """A ledger's run: 240 varied releases (one in ten partitioned), each checked against the budget as it
    is added. The running PLD folds its recent whole-data releases into the base along the way, and its
    totals stay within PLD_RTOL of composing everything from scratch."""
    import random

    rng = random.Random(5)
    events: list[PrivacyEvent] = []
    for i in range(240):
        partition = ("region", rng.choice("NSEW")) if rng.random() < 0.1 else None
        epsilon = math.exp(rng.uniform(math.log(0.005), math.log(0.2)))
        if i % 3 == 0:
            events.append(
                GaussianEvent.from_sigma(
                    sigma=rng.uniform(5, 50), sensitivity=1.0, delta=1e-9, partition=partition
                )
            )
        elif i % 3 == 1:
            events.append(LaplaceEvent(epsilon=epsilon, sensitivity=1.0, partition=partition))
        else:
            events.append(GeometricEvent(epsilon=epsilon, sensitivity=1, partition=partition))
    folds = []
    absorb = running_pld._PLDTally.absorb
    monkeypatch.setattr(
        running_pld._PLDTally, "absorb", lambda self, other: folds.append(1) or absorb(self, other)
    )
    monkeypatch.setattr(running_pld, "BACKGROUND_FOLDS", False)  # folded where due: the same run every time
    accountant = get_accountant("pld")
    running.clear()
    for n in range(200, 240):
        assert running.fits(accountant, events[:n], events[n : n + 1], 1e-6, 1e6)
    assert folds, "no fold in 40 spends"
    # Forty convolutions (and folds) each add FFT noise of about 1e-16 of a point's mass: ε at δ = 1e-6 stays
    # within PLD_RTOL, at δ = 1e-8 within 1e-8 (measured: 2e-11 and 1.6e-9). The budget check itself decides
    # from δ(limit) and computes ε within FITS_MARGIN of the boundary (asserted below).
    for delta, rtol in ((1e-6, PLD_RTOL), (1e-8, 1e-8)):
        got = running.epsilon(accountant, events[:-1], events[-1:], delta)
        assert got == pytest.approx(accountant.epsilon(events, delta), rel=rtol, abs=0)
    total = accountant.epsilon(events, 1e-6)
    assert running.fits(accountant, events[:-1], events[-1:], 1e-6, total * (1 + 1e-6))
    assert not running.fits(accountant, events[:-1], events[-1:], 1e-6, total * (1 - 1e-6))


def test_a_fold_runs_after_the_spend_in_a_background_thread(monkeypatch) -> None:
    """With BACKGROUND_FOLDS a fold found due runs in its own thread, after the question that found it (it
    waits for the running lock), and the totals after it are those of composing everything at once."""
    import threading

    events = [LaplaceEvent(epsilon=0.01 + 0.002 * i, sensitivity=1.0) for i in range(30)]
    events += [GaussianEvent.from_sigma(sigma=6.0 + i, sensitivity=1.0, delta=1e-9) for i in range(10)]
    threads: list[str] = []
    absorb = running_pld._PLDTally.absorb
    monkeypatch.setattr(
        running_pld._PLDTally,
        "absorb",
        lambda self, other: threads.append(threading.current_thread().name) or absorb(self, other),
    )
    monkeypatch.setattr(running_pld, "FOLD_SHARE", 0.02)
    monkeypatch.setattr(running_pld, "FOLD_NOW_SHARE", 1e9)  # never at once: the background path only
    monkeypatch.setattr(running_pld, "BACKGROUND_FOLDS", True)
    accountant = get_accountant("pld")
    running.clear()
    for n in range(20, len(events)):
        assert running.fits(accountant, events[:n], events[n : n + 1], 1e-6, 1e6)
        assert running.finish_folds(timeout=60)
    assert threads, "no fold"
    assert set(threads) == {"dpdash-pld-fold"}  # never in the spending thread
    got = running.epsilon(accountant, events[:-1], events[-1:], 1e-6)
    assert got == pytest.approx(accountant.epsilon(events, 1e-6), rel=PLD_RTOL, abs=0)


@pytest.mark.parametrize("limit", [1e3, 1e15, 1e300])
def test_a_huge_budget_is_checked_without_overflow(limit: float) -> None:
    """A budget ε far past every loss on the grid fits (δ there is P[∞] only), with or without partitions
    and recent releases, and ``_Tails.delta`` reads such an ε as past the top."""
    import numpy as np

    from dpdash.accounting.pld import _Pmf

    events = [LaplaceEvent(epsilon=0.1, sensitivity=1.0) for _ in range(3)]
    events += [LaplaceEvent(epsilon=0.2, sensitivity=1.0, partition=("region", p)) for p in "ab"]
    running.clear()
    for accountant in (get_accountant("pld"), get_accountant("tightest")):
        assert running.fits(accountant, events[:-2], events[-2:], 1e-6, limit)
        assert running.fits(accountant, events[:-1], events[-1:], 1e-6, limit)
    tails = running_pld._Tails(_Pmf(-10, np.full(21, 1 / 21), 1e-9), 0.1)
    assert tails.delta(np.array([limit, -limit])) == pytest.approx([1e-9, 1.0 + 1e-9 - 0.0], abs=1e-6)


_FRESH_TOTALS = """
import json, sys
from dpdash.ledger import Ledger
with Ledger(sys.argv[1]) as ledger:
    (ds,) = ledger.datasets()
    totals = ledger.totals(ds)
    print(json.dumps({name: None if t is None else repr(t.epsilon) for name, t in totals.items()}))
"""


def test_a_ledgers_totals_are_the_same_to_the_bit_in_a_fresh_process_and_a_running_one(tmp_path) -> None:
    """Issue 26: a total is a function of the ledger's contents alone. This process spends 160 varied
    releases one by one (PLD's budget check keeps and extends its running state, and the composer keeps
    products along the way) and asks the totals as it goes; a fresh process reads the same ledger. Every
    accountant's total is the same double in both (``repr``), as every budget decision then is."""
    import json
    import os
    import random
    import subprocess
    import sys
    from pathlib import Path

    from dpdash.accounting import Budget
    from dpdash.ledger import Ledger

    rng = random.Random(26)
    running.clear()
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(name="panel", fingerprint="sha256:" + "26" * 32,
                                budget=Budget(1e4, 1e-6), accountant="pld")  # fmt: skip
        for i in range(160):
            epsilon = rng.choice([0.01, 0.02, 0.05]) if i % 2 else math.exp(rng.uniform(-5.0, -2.0))
            if i % 3 == 0:
                event = GaussianEvent.from_sigma(sigma=rng.uniform(5, 50), sensitivity=1.0, delta=1e-9)
            elif i % 3 == 1:
                event = LaplaceEvent(epsilon=epsilon, sensitivity=1.0)
            else:
                event = GeometricEvent(epsilon=epsilon, sensitivity=1)
            ledger.spend(ds, event)
            if i % 40 == 39:
                ledger.totals(ds)
        here = {name: None if t is None else repr(t.epsilon) for name, t in ledger.totals(ds).items()}
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    fresh = subprocess.run([sys.executable, "-c", _FRESH_TOTALS, str(path)], capture_output=True, text=True,
                           env=env, cwd=root, check=True, timeout=300)  # fmt: skip
    assert json.loads(fresh.stdout) == here
    assert here["pld"] is not None and float(here["pld"]) > 0


def test_a_pld_total_is_the_same_to_the_bit_whatever_this_process_composed_before() -> None:
    """PLD's composer keeps products of repeated settings to reuse them; a product kept for part of a
    history (fewer releases of each setting) must not be extended into the history's: multiplied in
    another order, the total would differ in its last bits from a fresh process's."""
    from dpdash.accounting.registry import clear_caches

    laplace, gauss = LaplaceEvent(epsilon=0.01, sensitivity=1.0), GaussianEvent.from_sigma(
        sigma=20.0, sensitivity=1.0, delta=1e-9
    )
    singles = [LaplaceEvent(epsilon=0.003 * (i + 1), sensitivity=1.0) for i in range(5)]
    history = [laplace] * 7 + [gauss] * 5 + singles
    pld = get_accountant("pld")
    clear_caches()
    fresh = pld.epsilon(history, 1e-6)
    for earlier in ([laplace] * 3 + [gauss] * 2, [laplace] * 6 + [gauss] * 5 + singles[:2]):
        clear_caches()
        pld.epsilon(earlier, 1e-6)
        assert repr(pld.epsilon(history, 1e-6)) == repr(fresh)
