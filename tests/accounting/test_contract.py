"""The contract every accountant keeps (dp_accounting's ``privacy_accountant_test.py`` in spirit)."""

from __future__ import annotations

import math

import pytest

from dpdash.accounting import (
    ACCOUNTANT_NAMES,
    Accountant,
    LaplaceEvent,
    PrivacyEvent,
    PrivacyTotal,
    UnsupportedEventError,
    get_accountant,
)
from dpdash.errors import ParameterError, ParameterTypeError
from tests.accounting.cases import EVENTS, NON_PRIVATE, REFUSED, bigger

TARGET_DELTA = 1e-5


@pytest.fixture(params=ACCOUNTANT_NAMES)
def accountant(request: pytest.FixtureRequest) -> Accountant:
    return get_accountant(request.param)


def supported(accountant: Accountant) -> list[PrivacyEvent]:
    """Events the accountant supports together (for tightest: all but the ρ-zCDP one, since no single
    accountant takes both ρ-zCDP and approximate (ε, δ) events)."""
    refused = REFUSED[accountant.name] or {"zcdp"}
    return [event for key, event in EVENTS.items() if key not in refused]


def test_tightest_refuses_a_combination_no_accountant_supports() -> None:
    tightest = get_accountant("tightest")
    assert all(tightest.supports(event) for event in EVENTS.values())
    with pytest.raises(UnsupportedEventError, match="no single accountant"):
        tightest.epsilon([EVENTS["zcdp"], EVENTS["approximate"]], TARGET_DELTA)


def test_no_events_cost_nothing(accountant: Accountant) -> None:
    assert accountant.epsilon([], TARGET_DELTA) == 0.0
    assert accountant.epsilon([], 0.0) == 0.0
    assert accountant.delta([], 0.0) == 0.0
    assert accountant.total([], TARGET_DELTA) == PrivacyTotal(
        0.0, TARGET_DELTA, accountant.name, accountant.name, 0
    )


def test_a_non_private_event_costs_everything(accountant: Accountant) -> None:
    events = [*supported(accountant)[:2], NON_PRIVATE]
    assert accountant.supports(NON_PRIVATE)
    assert accountant.epsilon(events, TARGET_DELTA) == math.inf
    assert accountant.epsilon([NON_PRIVATE], 0.5) == math.inf
    assert accountant.delta(events, 100.0) == 1.0


def test_the_support_matrix(accountant: Accountant) -> None:
    for key, event in EVENTS.items():
        assert accountant.supports(event) == (key not in REFUSED[accountant.name]), key


def test_unsupported_events_are_refused_by_name(accountant: Accountant) -> None:
    for key in REFUSED[accountant.name]:
        event = EVENTS[key]
        with pytest.raises(UnsupportedEventError) as caught:
            accountant.epsilon([EVENTS["laplace"], event], TARGET_DELTA)
        message = str(caught.value)
        assert type(event).__name__ in message and repr(event.query) in message and accountant.name in message
        with pytest.raises(UnsupportedEventError):
            accountant.delta([event], 1.0)


def test_foreign_objects_are_type_errors(accountant: Accountant) -> None:
    from dpdash import Laplace

    with pytest.raises(ParameterTypeError, match="event_for"):
        accountant.epsilon([Laplace(epsilon=1.0, sensitivity=1.0)], TARGET_DELTA)  # type: ignore[list-item]
    with pytest.raises(ParameterTypeError, match="single event"):
        accountant.epsilon(EVENTS["laplace"], TARGET_DELTA)  # type: ignore[arg-type]


def test_targets_are_validated(accountant: Accountant) -> None:
    with pytest.raises(ParameterError, match="target_delta"):
        accountant.epsilon([EVENTS["laplace"]], 1.5)
    with pytest.raises(ParameterError, match="target_epsilon"):
        accountant.delta([EVENTS["laplace"]], -1.0)


def test_monotone_in_adding_events(accountant: Accountant) -> None:
    events = supported(accountant)
    previous_eps, previous_delta = 0.0, 0.0
    for n in range(1, len(events) + 1):
        eps = accountant.epsilon(events[:n], TARGET_DELTA)
        dlt = accountant.delta(events[:n], 2.0)
        assert eps >= previous_eps * (1 - 1e-9), events[n - 1]
        assert dlt >= previous_delta * (1 - 1e-9) - 1e-15, events[n - 1]
        previous_eps, previous_delta = eps, dlt


def test_monotone_in_every_event(accountant: Accountant) -> None:
    events = supported(accountant)
    base_eps = accountant.epsilon(events, TARGET_DELTA)
    base_delta = accountant.delta(events, 2.0)
    for i, event in enumerate(events):
        more = [*events[:i], bigger(event), *events[i + 1 :]]
        assert accountant.epsilon(more, TARGET_DELTA) >= base_eps * (1 - 1e-9), event
        assert accountant.delta(more, 2.0) >= base_delta * (1 - 1e-9) - 1e-15, event


def test_monotone_in_repetitions(accountant: Accountant) -> None:
    event = supported(accountant)[0]
    totals = [accountant.epsilon([event] * k, TARGET_DELTA) for k in (1, 2, 5, 20, 60)]
    assert totals == sorted(totals)


def test_delta_and_epsilon_agree(accountant: Accountant) -> None:
    """Whatever ε an accountant certifies at δ, its δ at that ε is no larger (up to its own rounding)."""
    events = supported(accountant)[:3] * 3
    for target in (1e-6, 1e-3):
        eps = accountant.epsilon(events, target)
        if math.isfinite(eps):
            assert accountant.delta(events, eps * (1 + 1e-6) + 1e-9) <= target * (1 + 1e-3)


def test_labels_do_not_change_totals(accountant: Accountant) -> None:
    events = supported(accountant)
    unlabelled = [event.setting for event in events]
    assert accountant.epsilon(events, TARGET_DELTA) == accountant.epsilon(unlabelled, TARGET_DELTA)


def test_order_does_not_matter(accountant: Accountant) -> None:
    events = supported(accountant)
    assert accountant.epsilon(events, TARGET_DELTA) == pytest.approx(
        accountant.epsilon(events[::-1], TARGET_DELTA), rel=1e-12
    )


def test_parallel_composition_costs_the_worst_part(accountant: Accountant) -> None:
    north = LaplaceEvent(epsilon=0.5, sensitivity=1.0, partition=("region", "North"))
    south = LaplaceEvent(epsilon=0.2, sensitivity=1.0, partition=("region", "South"))
    whole = LaplaceEvent(epsilon=0.3, sensitivity=1.0)
    alone = accountant.epsilon([whole, north.setting], TARGET_DELTA)
    assert accountant.epsilon([whole, north, south, south], TARGET_DELTA) == pytest.approx(alone, rel=1e-9)
    # Another partitioning overlaps the first one: its cells add up with them.
    by_age = LaplaceEvent(epsilon=0.1, sensitivity=1.0, partition=("age", "<30"))
    assert accountant.epsilon([whole, north, south, by_age], TARGET_DELTA) >= alone


def test_group_privacy_on_any_total(accountant: Accountant) -> None:
    total = accountant.total(supported(accountant)[:2], TARGET_DELTA)
    group = total.for_group(3)
    assert group.epsilon == pytest.approx(3 * total.epsilon)
    assert group.delta == pytest.approx(min(1.0, 3 * math.exp(2 * total.epsilon) * TARGET_DELTA))
    assert group.group_size == 3 and group.accountant == accountant.name


def test_pure_budgets(accountant: Accountant) -> None:
    """At δ = 0 pure events cost their sum under every accountant that certifies anything there."""
    events = [LaplaceEvent(epsilon=0.1, sensitivity=1.0)] * 10
    eps = accountant.epsilon(events, 0.0)
    if accountant.finite_at_zero_delta:
        assert eps == pytest.approx(1.0, rel=2e-3)
        assert eps >= 1.0 - 1e-12
    else:
        assert eps == math.inf
