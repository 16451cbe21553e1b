"""Planning: PSI-style allocation of what remains, what-if totals, releases remaining."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from dpdash import Gaussian, Laplace
from dpdash.accounting import (
    ApproxDPEvent,
    Budget,
    BudgetExceededError,
    LaplaceEvent,
    NonPrivateEvent,
    PlannedQuery,
    PrivacyEvent,
    ZCDPEvent,
    cumulative_totals,
    event_for,
    get_accountant,
    max_releases,
    plan,
    running,
    what_if,
)
from dpdash.accounting.accountant import REL_SLACK, Accountant
from dpdash.accounting.planning import _FACTOR_RTOL
from dpdash.errors import ParameterError, UnsupportedEventError
from dpdash.ledger import Ledger


def test_unlocked_rows_share_the_remainder_by_weight() -> None:
    spent = [LaplaceEvent(epsilon=0.4, sensitivity=1.0)]
    queries = [
        PlannedQuery(mechanism="laplace", sensitivity=1.0, weight=1.0, query="a"),
        PlannedQuery(mechanism="geometric", sensitivity=1, weight=2.0, query="b"),
        PlannedQuery(mechanism="staircase", sensitivity=1.0, weight=3.0, query="c"),
    ]
    result = plan(queries, budget=Budget(1.0), spent=spent, accountant="basic")
    assert result.fits and result.over_by == 0.0
    epsilons = [r.epsilon for r in result.releases]
    # Basic composition: the remaining 0.6 split 1 : 2 : 3, to within the bisection's 1e-4, never over.
    assert epsilons == pytest.approx([0.1, 0.2, 0.3], rel=2e-4)
    assert result.total <= 1.0 and result.spent == pytest.approx(0.4)
    assert epsilons[1] / epsilons[0] == pytest.approx(2.0) and epsilons[2] / epsilons[0] == pytest.approx(3.0)
    assert [r.mechanism.name for r in result.releases] == ["Laplace", "Geometric", "Staircase"]
    assert result.releases[0].half_width == pytest.approx(result.releases[0].mechanism.accuracy(0.95))


def test_locked_rows_keep_their_epsilon_or_accuracy() -> None:
    queries = [
        PlannedQuery(mechanism="laplace", sensitivity=1.0, epsilon=0.3),
        PlannedQuery(mechanism="laplace", sensitivity=1.0, accuracy=20.0, confidence=0.95),
        PlannedQuery(mechanism="laplace", sensitivity=1.0),
    ]
    result = plan(queries, budget=Budget(1.0), accountant="basic")
    locked, by_accuracy, free = result.releases
    assert locked.locked and locked.epsilon == 0.3
    expected = Laplace.for_accuracy(alpha=20.0, confidence=0.95, sensitivity=1.0).epsilon
    assert by_accuracy.locked and by_accuracy.epsilon == expected and by_accuracy.half_width <= 20.0
    assert free.epsilon == pytest.approx(1.0 - 0.3 - expected, rel=2e-4)


def test_tighter_accountants_give_each_row_more() -> None:
    queries = [PlannedQuery(mechanism="gaussian", sensitivity=1.0, delta=1e-8)] * 20
    basic = plan(queries, budget=Budget(1.0, 1e-6), accountant="basic")
    tight = plan(queries, budget=Budget(1.0, 1e-6), accountant="tightest")
    assert basic.fits and tight.fits
    assert tight.releases[0].epsilon > 1.5 * basic.releases[0].epsilon
    assert get_accountant("tightest").epsilon(tight.events, 1e-6) <= 1.0 + 1e-9


def test_a_plan_that_cannot_fit_says_by_how_much() -> None:
    spent = [LaplaceEvent(epsilon=0.8, sensitivity=1.0)]
    queries = [
        PlannedQuery(mechanism="laplace", sensitivity=1.0, epsilon=0.5),
        PlannedQuery(mechanism="laplace", sensitivity=1.0),
    ]
    result = plan(queries, budget=Budget(1.0), spent=spent, accountant="basic")
    assert not result.fits
    assert result.over_by == pytest.approx(0.3)
    assert result.releases[1].mechanism is None and result.releases[1].epsilon is None
    assert result.remaining_after == pytest.approx(-0.3)


def test_a_plan_whose_deltas_exceed_the_budget_cannot_fit() -> None:
    queries = [PlannedQuery(mechanism="gaussian", sensitivity=1.0, delta=1e-5)] * 2
    result = plan(queries, budget=Budget(1.0, 1e-6), accountant="basic")
    assert not result.fits and result.over_by == math.inf


def test_only_locked_rows() -> None:
    queries = [PlannedQuery(mechanism="laplace", sensitivity=1.0, epsilon=0.5)] * 2
    assert plan(queries, budget=Budget(1.0), accountant="basic").fits
    assert not plan(queries * 2, budget=Budget(1.0), accountant="basic").fits


def test_planned_query_validation() -> None:
    with pytest.raises(ParameterError, match="delta is required"):
        PlannedQuery(mechanism="gaussian", sensitivity=1.0)
    with pytest.raises(ParameterError, match="delta applies only"):
        PlannedQuery(mechanism="laplace", sensitivity=1.0, delta=1e-6)
    with pytest.raises(ParameterError, match="not both"):
        PlannedQuery(mechanism="laplace", sensitivity=1.0, epsilon=1.0, accuracy=3.0)
    with pytest.raises(ParameterError, match="mechanism"):
        PlannedQuery(mechanism="wishart", sensitivity=1.0)
    with pytest.raises(ParameterError, match="weight"):
        PlannedQuery(mechanism="laplace", sensitivity=1.0, weight=0.0)


def test_planning_refuses_unsupported_spent_events() -> None:
    with pytest.raises(UnsupportedEventError):
        plan(
            [PlannedQuery(mechanism="laplace", sensitivity=1.0)],
            budget=Budget(1.0),
            spent=[ZCDPEvent(rho=0.1)],
            accountant="basic",
        )


def test_what_if_and_max_releases() -> None:
    spent = [LaplaceEvent(epsilon=0.5, sensitivity=1.0)]
    event = LaplaceEvent(epsilon=0.1, sensitivity=1.0)
    rows = what_if(event, [0, 1, 5, 6], spent=spent, budget=Budget(1.0, 1e-6), accountants=["basic", "zcdp"])
    assert [row.totals["basic"] for row in rows] == pytest.approx([0.5, 0.6, 1.0, 1.1])
    assert [row.within_budget["basic"] for row in rows] == [True, True, True, False]
    assert rows[0].totals["zcdp"] > 0.5  # zCDP is loose for a few pure releases
    assert max_releases(event, spent=spent, budget=Budget(1.0), accountant="basic") == 5
    more = max_releases(event, spent=spent, budget=Budget(1.0, 1e-6), accountant="tightest")
    assert more >= 5
    assert get_accountant("tightest").epsilon(spent + [event] * more, 1e-6) <= 1.0 + 1e-9
    assert get_accountant("tightest").epsilon(spent + [event] * (more + 1), 1e-6) > 1.0
    assert (
        max_releases(LaplaceEvent(epsilon=2.0, sensitivity=1.0), budget=Budget(1.0), accountant="basic") == 0
    )


def test_max_releases_of_gaussian_events_grows_like_the_square() -> None:
    gauss = event_for(Gaussian(epsilon=0.1, delta=1e-9, sensitivity=1.0))
    n = max_releases(gauss, budget=Budget(1.0, 1e-6), accountant="pld")
    assert n > 40  # basic composition would allow 10


def test_cumulative_totals_sample_long_histories() -> None:
    events = [LaplaceEvent(epsilon=0.01, sensitivity=1.0)] * 500
    rows = cumulative_totals(events, 1e-6, ["basic", "zcdp"], points=20)
    counts = [n for n, _ in rows]
    assert counts[0] == 0 and counts[-1] == 500 and len(counts) == 21 and counts == sorted(counts)
    assert rows[-1][1]["basic"] == pytest.approx(5.0)
    refusing = cumulative_totals(
        [LaplaceEvent(epsilon=0.1, sensitivity=1.0), ZCDPEvent(rho=0.1)], 1e-6, ["basic"]
    )
    assert [row["basic"] for _, row in refusing] == [0.0, 0.1, None]


def test_the_tightest_plan_is_the_best_of_its_components() -> None:
    spent = [LaplaceEvent(epsilon=0.05, sensitivity=1.0)] * 20
    queries = [PlannedQuery(mechanism="laplace", sensitivity=1.0, weight=w) for w in (1.0, 2.0)]
    budget = Budget(2.0, 1e-6)
    tight = plan(queries, budget=budget, spent=spent, accountant="tightest")
    for name in ("basic", "optimal", "rdp", "pld"):
        alone = plan(queries, budget=budget, spent=spent, accountant=name)
        assert tight.factor >= alone.factor * (1 - 2e-4), name
    assert tight.total <= 2.0 * (1 + 1e-9)


# ---- planning from the kept state of the spent releases (running.py) ---------------------------------------
def varied_history(n: int, seed: int, partitioned: bool = False) -> list[PrivacyEvent]:
    """n releases with nearly all distinct settings: Laplace and Gaussian, ε log-uniform in [0.001, 0.05]."""
    rng = random.Random(seed)
    events: list[PrivacyEvent] = []
    for i in range(n):
        epsilon = math.exp(rng.uniform(math.log(0.001), math.log(0.05)))
        partition = ("region", rng.choice("NS")) if partitioned and rng.random() < 0.3 else None
        if i % 2:
            mechanism: Laplace | Gaussian = Gaussian(epsilon=epsilon, delta=1e-9, sensitivity=1.0)
        else:
            mechanism = Laplace(epsilon=epsilon, sensitivity=rng.choice([1.0, 2.0]))
        events.append(event_for(mechanism, query=f"query {i}", partition=partition))
    return events


def from_scratch(
    accountant: Accountant,
    history: Sequence[PrivacyEvent],
    new: Sequence[PrivacyEvent] = (),
    target_delta: float = 0.0,
    *,
    keep: bool = True,
) -> float:
    """The straightforward total: the accountant composes every release again (the planner did so at
    every step of its search before it composed onto the kept state of the spent releases)."""
    return accountant.epsilon([*history, *new], target_delta)


FREE_ROWS = [
    PlannedQuery(mechanism="laplace", sensitivity=1.0, weight=1.0, query="count"),
    PlannedQuery(mechanism="laplace", sensitivity=2.0, weight=2.0, query="histogram"),
    PlannedQuery(mechanism="gaussian", sensitivity=1.0, delta=1e-9, weight=1.0, query="sum"),
    PlannedQuery(mechanism="gaussian", sensitivity=1.0, delta=1e-9, weight=3.0, query="mean"),
]
LOCKED_ROWS = [
    PlannedQuery(mechanism="laplace", sensitivity=1.0, epsilon=0.1, query="median"),
    PlannedQuery(mechanism="gaussian", sensitivity=1.0, delta=1e-9, accuracy=30.0, query="total"),
]
# name: (accountant, seed, partitioned history, releases added to it, budget, planned rows)
CASES: dict[str, tuple[str, int, bool, list[PrivacyEvent], Budget, list[PlannedQuery]]] = {
    "pld, free rows": ("pld", 0, False, [], Budget(2.0, 1e-6), FREE_ROWS),
    "pld, locked rows": ("pld", 1, False, [], Budget(2.0, 1e-6), FREE_ROWS[1:3] + LOCKED_ROWS),
    "pld, partitioned": (
        "pld",
        2,
        True,
        [],
        Budget(1.5, 1e-6),
        [*FREE_ROWS[:2], PlannedQuery(mechanism="laplace", sensitivity=1.0, partition=("region", "N"))],
    ),
    "tightest, locked rows": ("tightest", 3, False, [], Budget(2.0, 1e-6), FREE_ROWS[:3] + LOCKED_ROWS[:1]),
    "pld, locked rows alone": ("pld", 4, False, [], Budget(2.0, 1e-6), LOCKED_ROWS),
    "pld, locked rows overshoot": (
        "pld",
        5,
        False,
        [],
        Budget(1.0, 1e-6),
        [*FREE_ROWS[:2], PlannedQuery(mechanism="laplace", sensitivity=1.0, epsilon=0.8)],
    ),
    "pld, no epsilon fits": (  # a spent δ above the budget's: the PLD total is ∞ whatever the plan
        "pld",
        6,
        False,
        [ApproxDPEvent(epsilon=0.1, delta=1e-5)],
        Budget(2.0, 1e-6),
        FREE_ROWS[:2],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_planning_onto_the_kept_state_agrees_with_composing_everything(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each step of the search composes only the planned releases onto the kept state of the spent ones.
    The plan is the one the straightforward search (every release composed at every step) finds: the same
    fit, the factor to the search's precision, totals to the running state's 1e-9; a plan that fits does
    so under the accountant's own total from scratch and under the ledger's budget check, and a factor
    larger by the precision would not fit."""
    name, seed, partitioned, extra, budget, queries = CASES[case]
    accountant = get_accountant(name)
    spent = varied_history(120, seed, partitioned) + extra
    with monkeypatch.context() as patch:
        patch.setattr(running, "epsilon", from_scratch)
        old = plan(queries, budget=budget, spent=spent, accountant=name)
    running.clear()
    new = plan(queries, budget=budget, spent=spent, accountant=name)
    assert new.fits == old.fits and (new.factor is None) == (old.factor is None)
    assert new.spent == pytest.approx(old.spent, rel=1e-9)
    assert new.total == pytest.approx(old.total, rel=1e-4 if new.factor else 1e-9)
    assert new.over_by == pytest.approx(old.over_by, rel=1e-9, abs=1e-9)
    if new.factor is not None:
        assert math.isclose(new.factor, old.factor, rel_tol=_FACTOR_RTOL)
    for mine, theirs in zip(new.releases, old.releases, strict=True):
        assert mine.locked == theirs.locked and (mine.epsilon is None) == (theirs.epsilon is None)
        if mine.epsilon is not None:
            assert math.isclose(mine.epsilon, theirs.epsilon, rel_tol=_FACTOR_RTOL)
    if not new.fits:
        return
    limit = budget.epsilon * (1 + REL_SLACK)
    assert accountant.epsilon(spent + new.events, budget.delta) <= limit
    assert running.fits(accountant, spent, new.events, budget.delta, budget.epsilon)
    if new.factor is not None:  # the factor is the largest that fits, to the search's precision
        more = new.factor * (1 + 2 * _FACTOR_RTOL)
        bigger = [q.event(q.build(more * q.weight)) for q in queries if not q.locked]
        locked = [r.event for r in new.releases if r.locked]
        assert accountant.epsilon(spent + locked + bigger, budget.delta) > limit


def test_a_ledger_accepts_the_releases_of_its_plan(tmp_path: Path) -> None:
    """Planned on a PLD ledger, the releases are then recorded: the ledger's budget check lets them in."""
    fingerprint = "sha256:" + "1" * 64
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ledger.add_dataset(name="d", fingerprint=fingerprint, budget=Budget(1.5, 1e-6), accountant="pld")
        ledger.spend_many(fingerprint, varied_history(200, 7))
        result = ledger.plan(fingerprint, FREE_ROWS + LOCKED_ROWS[:1])
        assert result.fits and result.spent == ledger.spent(fingerprint).epsilon
        ledger.spend_many(fingerprint, result.events)
        assert ledger.spent(fingerprint).epsilon == pytest.approx(result.total, rel=1e-9)
        assert ledger.spent(fingerprint).epsilon <= 1.5 * (1 + REL_SLACK)


# ---- what-if totals and releases remaining, from the kept state of the spent releases --------------------
def straightforward_max_releases(
    event: PrivacyEvent, spent: list[PrivacyEvent], budget: Budget, accountant: Accountant
) -> int:
    """The largest k with the accountant's own total of spent + k releases like ``event``, composed from
    scratch, within the budget (as the ledger compares: ε·(1 + REL_SLACK)); by doubling and bisection."""

    def fits(k: int) -> bool:
        return accountant.epsilon(spent + [event] * k, budget.delta) <= budget.epsilon * (1 + REL_SLACK)

    if not fits(1):
        return 0
    lo, hi = 1, 2
    while fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        middle = (lo + hi) // 2
        lo, hi = (middle, hi) if fits(middle) else (lo, middle)
    return lo


LAPLACE = LaplaceEvent(epsilon=0.1, sensitivity=1.0, query="count")
GAUSS = event_for(Gaussian(epsilon=0.2, delta=1e-9, sensitivity=1.0), query="sum")
# name: (accountant, seed, partitioned history, releases added to it, budget, the event repeated)
REPEATS: dict[str, tuple[str, int, bool, list[PrivacyEvent], Budget, PrivacyEvent]] = {
    "pld, laplace": ("pld", 10, False, [], Budget(2.0, 1e-6), LAPLACE),
    "pld, gaussian": ("pld", 11, False, [], Budget(2.0, 1e-6), GAUSS),
    "pld, partitioned": (
        "pld",
        12,
        True,
        [],
        Budget(1.5, 1e-6),
        LaplaceEvent(epsilon=0.1, sensitivity=1.0, partition=("region", "N")),
    ),
    "tightest, laplace": ("tightest", 13, False, [], Budget(2.0, 1e-6), LAPLACE),
    "tightest, gaussian": ("tightest", 14, True, [], Budget(2.0, 1e-6), GAUSS),
    "basic, laplace": ("basic", 15, True, [], Budget(2.0, 1e-6), LAPLACE),
    "pld, already over": (
        "pld",
        16,
        False,
        [LaplaceEvent(epsilon=2.5, sensitivity=1.0)],
        Budget(2.0, 1e-6),
        GAUSS,
    ),
    "pld, infinite": ("pld", 17, False, [ApproxDPEvent(epsilon=0.1, delta=1e-5)], Budget(2.0, 1e-6), LAPLACE),
    "tightest, non-private": (
        "tightest",
        18,
        False,
        [NonPrivateEvent(query="exact")],
        Budget(2.0, 1e-6),
        LAPLACE,
    ),
}


@pytest.mark.parametrize("recent", [False, True], ids=["history composed at once", "after spends"])
@pytest.mark.parametrize("case", REPEATS)
def test_releases_remaining_are_the_straightforward_count_and_pass_the_budget_check(
    case: str, recent: bool
) -> None:
    """``max_releases`` asks the ledger's budget check about k new releases on the kept state of the spent
    ones: the count is the one the accountant's own totals from scratch give, that many pass the check
    and fit from scratch, and one more does not. ``recent``: the kept state was grown by single spends
    (its newest releases composed one by one, not yet folded into the rest), as a ledger's is."""
    name, seed, partitioned, extra, budget, event = REPEATS[case]
    accountant = get_accountant(name)
    spent = varied_history(120, seed, partitioned) + extra
    running.clear()
    if recent:
        for n in range(len(spent) - 6, len(spent) + 1):  # each spend's total, from the kept state
            running.epsilon(accountant, spent[: n - 1], spent[n - 1 : n], budget.delta)
    count = max_releases(event, spent=spent, budget=budget, accountant=name)
    assert count == straightforward_max_releases(event, spent, budget, accountant)
    limit = budget.epsilon * (1 + REL_SLACK)
    if count:  # never over: from scratch, and under the ledger's check
        assert accountant.epsilon(spent + [event] * count, budget.delta) <= limit
        assert running.fits(accountant, spent, [event] * count, budget.delta, budget.epsilon)
    assert accountant.epsilon(spent + [event] * (count + 1), budget.delta) > limit
    assert not running.fits(accountant, spent, [event] * (count + 1), budget.delta, budget.epsilon)
    if "over" in case or "infinite" in case or "non-private" in case:
        assert count == 0


@pytest.mark.parametrize(
    "case", ["pld, gaussian", "tightest, gaussian", "pld, infinite", "tightest, non-private"]
)
def test_what_if_totals_are_the_accountants_totals_from_scratch(case: str) -> None:
    """Each what-if total is the accountant's own from scratch: to the bit for the five exact accountants,
    to running's 1e-9 relative for pld and tightest; an accountant that refuses an event gives None."""
    _, seed, partitioned, extra, budget, event = REPEATS[case]
    spent = varied_history(120, seed, partitioned) + extra + [ZCDPEvent(rho=0.001)] * (seed % 2)
    running.clear()
    rows = what_if(event, [0, 1, 7, 300], spent=spent, budget=budget)
    for row in rows:
        assert row.count in (0, 1, 7, 300)
        for name, total in row.totals.items():
            accountant = get_accountant(name)
            try:
                want = accountant.epsilon(spent + [event] * row.count, budget.delta)
            except UnsupportedEventError:
                assert total is None and row.within_budget[name] is None, name
                continue
            assert total is not None, name
            if name in ("pld", "tightest") and math.isfinite(want):
                assert total == pytest.approx(want, rel=1e-9, abs=0), name
            else:
                assert total == want, name
            assert row.within_budget[name] == (total <= budget.epsilon * (1 + REL_SLACK)), name


def test_a_ledger_accepts_the_releases_remaining_and_refuses_one_more(tmp_path: Path) -> None:
    fingerprint = "sha256:" + "2" * 64
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ledger.add_dataset(name="d", fingerprint=fingerprint, budget=Budget(1.5, 1e-6), accountant="pld")
        ledger.spend_many(fingerprint, varied_history(200, 8))
        count = ledger.max_releases(fingerprint, GAUSS)
        assert count > 0
        ledger.spend_many(fingerprint, [GAUSS] * count)
        with pytest.raises(BudgetExceededError):
            ledger.spend(fingerprint, GAUSS)
        assert ledger.max_releases(fingerprint, GAUSS) == 0


def test_cumulative_totals_are_each_prefixs_totals_from_scratch() -> None:
    """Each of the step chart's totals is the accountant's own total of that prefix from scratch."""
    events = [*varied_history(120, 20, partitioned=True), ZCDPEvent(rho=0.001), *varied_history(10, 21)]
    running.clear()
    rows = cumulative_totals(events, 1e-6, points=12)
    assert [n for n, _ in rows][-1] == len(events) and len(rows) == 13
    for n, row in rows[1:]:
        for name, total in row.items():
            try:
                want = get_accountant(name).epsilon(events[:n], 1e-6)
            except UnsupportedEventError:
                assert total is None and n > 120, (name, n)
                continue
            assert total == want, (name, n)
