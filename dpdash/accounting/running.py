"""Running totals: a growing history's composed state under each accountant, so that adding a release
composes only the new events.

A ledger's history only grows. ``epsilon(accountant, history, new, target_delta)`` is
``accountant.epsilon([*history, *new], target_delta)``, computed from a kept state of ``history`` (found by
checking that a kept state's events are a prefix of it, event by event) extended by what came after.
``fits`` answers the budget question with as little work as possible: under the tightest accountant the
total is the minimum over its components, so it is within a budget as soon as one component's is, and the
components are asked cheapest first.

The state of a history is its split into whole-data events and cells of partitionings, with the
worst-case paths of ``accountant.compositions`` (whole-data events plus one undominated cell of each
partitioning, or the union of the cells beyond ``MAX_PATHS``), each path's multiset of settings, and for
each accountant asked the sums its total is a function of:

- basic: Σ kε and Σ kδ of the whole-data settings and of every cell (``basic_sums``);
- zcdp: Σ kρ per path; advanced: the sums of ``advanced_terms``; optimal: those of ``heterogeneous_terms``
  per distinct (ε, δ), with the count, the largest ε and δ and the number of distinct guarantees;
- rdp: the Rényi curve Σ k·D_α per order.

The accountants round these sums once with ``math.fsum``; here the same terms are kept in exact integer
accumulators (every double is an integer multiple of 2⁻¹⁰⁷⁴) and rounded once when read, so the running
totals of these five accountants equal the accountants' own to the last bit, whatever the history.

Kept states never change: a new release is composed on a copy, whose paths remember the paths they were
copied from, so an accountant first asked of the copy starts from the original's tally (built and kept
there) plus the few changed settings; totals are memoised per state. A question about ``history + new``
keeps the states of both, so the same question asked again (the ledger checks a spend once from a read
snapshot, before its write lock, and again under it) composes only what was added in between.

PLD is different: it keeps composed loss pmfs (per side: ``remove``, and ``add`` once an asymmetric
release is in), split as path = base ⊗ recent ⊗ own (``_PLDSplit``): the whole-data releases composed once
(``base``, with its cumulative tails), those added since (``recent``, short), and each path's partitioned
releases (``own``, short). Each starts from ``PLDAccountant``'s own composition of its releases; a new
release is one convolution with that release's pmf, and ``recent`` is folded into ``base`` (one convolution)
once carrying it through every path's check costs more than that. The base's tails are cut where each holds
at most ``CUT_MASS`` = 1e-17 of mass as computed; the short tallies' where Chernoff's bound, from exact
per-release log-MGF bounds (``pld.log_mgf``), leaves at most ``BOUND_CUT_MASS`` = 1e-20, however noisy the
FFTs left them there; the mass cut is counted at the infinite loss (pessimistic, as dp_accounting's tail
truncation). The budget check asks δ at the budget's ε instead of ε at its δ (the same question: δ(ε) is
non-increasing): a path's δ(ε) = P_J[∞] + Σ_c P_J(c)·δ_base(ε − c) with J = recent ⊗ own, one pass over J
given the base's tails; within a relative ``FITS_MARGIN`` of the target δ it computes ε instead. A path's ε
convolves base and J. The totals differ from composing everything at once only by floating-point rounding
in the FFTs and by the masses cut, both far below the grid's own rounding (the tests bound the difference).

A total shown or decided on is a function of the events alone, the same in every process (issue 26): a
ledger's total must not depend on whether a server composed its releases one by one or read them fresh.
``epsilon`` and ``total`` give the accountant's own composition for PLD and the tightest (``pld._Composer``
keeps nothing that changes a bit), and the running state only where it is that to the bit; ``fits`` lets
the running PLD state decide only with a margin (``DECIDE_MARGIN``), the canonical total deciding near the
limit. Hypothetical totals (``keep=False``: a planner's search, a what-if, the total a release would bring)
are the running ones, within the FFTs' rounding of the canonical; whether they fit is ``fits``'s answer.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from dpdash.accounting.accountant import (
    REL_SLACK,
    Accountant,
    PrivacyTotal,
    _unit_closed,
    as_events,
)
from dpdash.accounting.events import PrivacyEvent
from dpdash.accounting.pld import (
    PLDAccountant,
    _pinned,
)
from dpdash.accounting.running_pld import _LOCK, finish_folds
from dpdash.accounting.running_state import _State
from dpdash.accounting.tightest import TightestAccountant

__all__ = ["clear", "epsilon", "finish_folds", "fits", "kept_epsilon", "total"]

# States kept (each of one history); a spend keeps two (its history, and with the new releases).
MAX_STATES = 8
# A running total that is not the canonical one to the bit (PLD, tightest) decides a budget check only
# when it certifies the limit shrunk by this relative margin: the two differ by the FFTs' rounding and the
# masses cut, a few 1e-9 relative at most (measured: 2e-9 after 240 single spends at δ = 1e-8; the tests
# bound it); nearer the limit the canonical total decides.
DECIDE_MARGIN = 1e-6


_STATES: list[_State] = []
# The last question not kept (``keep=False``): the kept state it starts from, its new events, and its state,
# so that the same question asked again under another accountant (a what-if row: pld, then tightest, whose
# minimum reads the same PLD total) composes the new events once.
_ASKED: tuple[_State, list[PrivacyEvent], _State] | None = None


def clear() -> None:
    """Forget the kept states (answers never depend on them)."""
    global _ASKED
    with _LOCK:
        _STATES.clear()
        _ASKED = None


def _prefix_of(state: _State, history: Sequence[PrivacyEvent]) -> bool:
    """Whether the state's events are the first events of ``history`` (equal, event by event)."""
    kept = state.events
    if len(kept) > len(history):
        return False
    if all(map(operator.is_, kept, history)):  # the usual case, after the first check: at C speed
        return True
    for i, (a, b) in enumerate(zip(kept, history)):  # noqa: B905 - history may be longer
        if a is not b:
            if a != b:
                return False
            kept[i] = b  # the same event: keep the caller's object, so the next check is by identity
    return True


def _state_of(
    history: Sequence[PrivacyEvent], new: Sequence[PrivacyEvent] = (), keep: bool = True
) -> _State:
    """A state of exactly ``[*history, *new]``: a kept one, or the longest kept prefix extended by the
    events it lacks. The states of ``history`` and of ``history + new`` are both kept: the next release
    starts from the first, and the same question asked again (a spend re-checked under the write lock, the
    total of a refused spend) finds the second with its totals. With ``keep=False`` only the state of
    ``history`` is kept; ``history + new`` is a copy of it, dropped once another such question is asked."""
    global _ASKED
    if not keep and new:
        origin = _state_of(history)
        if _ASKED is not None and _ASKED[0] is origin and _ASKED[1] == new:
            return _ASKED[2]
        state = origin.copy()
        state.kept = False
        state.extend(new)
        _ASKED = (origin, list(new), state)
        return state
    full = [*history, *new]
    best = max((s for s in _STATES if _prefix_of(s, full)), key=lambda s: len(s.events), default=None)
    if best is not None:  # the least recently used state goes first, never the one questions start from
        _STATES.remove(best)
        _STATES.append(best)
        if len(best.events) == len(full):
            return best
    state = best
    for upto in (len(history), len(full)):
        if state is None or len(state.events) < upto:
            state = state.copy() if state is not None else _State()
            state.extend(full[len(state.events) : upto])
            _keep(state)
    assert state is not None
    return state


def _keep(state: _State) -> None:
    _STATES.append(state)
    while len(_STATES) > MAX_STATES:
        _STATES.pop(0)


def _with_new(
    accountant: Accountant,
    history: Sequence[PrivacyEvent],
    new: Sequence[PrivacyEvent],
    target_delta: float,
    keep: bool = True,
) -> tuple[_State, float]:
    target_delta = _unit_closed(target_delta, "target_delta")
    history, new = as_events(history), accountant.check(new)
    state = _state_of(history, new, keep)
    reason = state.refusal(accountant)
    if reason is not None:
        accountant.check(history)  # raises UnsupportedEventError naming the refused events
    return state, target_delta


def _bit_exact(accountant: Accountant) -> bool:
    """Whether the running totals of ``accountant`` are its own to the last bit (exact sums: every accountant
    but PLD, and the tightest, which may take PLD's)."""
    return not isinstance(accountant, (PLDAccountant, TightestAccountant))


def epsilon(
    accountant: Accountant,
    history: Sequence[PrivacyEvent],
    new: Sequence[PrivacyEvent] = (),
    target_delta: float = 0.0,
) -> float:
    """``accountant.epsilon([*history, *new], target_delta)``, the canonical total: a function of the events
    alone, the same in every process. It comes from the kept state of a prefix of ``history`` where that is
    the same to the bit (every accountant but PLD and the tightest; see the module); for those two, from the
    accountant's own composition (its caches never change a bit, ``pld._Composer``)."""
    if not _bit_exact(accountant):
        return accountant.epsilon([*as_events(history), *as_events(new)], target_delta)
    return kept_epsilon(accountant, history, new, target_delta)


def kept_epsilon(
    accountant: Accountant,
    history: Sequence[PrivacyEvent],
    new: Sequence[PrivacyEvent] = (),
    target_delta: float = 0.0,
    *,
    keep: bool = True,
) -> float:
    """The running total of ``[*history, *new]`` from the kept state of a prefix of ``history`` (``epsilon``
    for every accountant but PLD and the tightest, whose running totals are within ``DECIDE_MARGIN`` of it):
    what a preview of a release's cost and the tests of the running state ask.

    ``keep=False`` for a question asked once about hypothetical ``new`` events (a step of the planner's
    search): the state of ``history`` is kept, not that of ``history + new``, so such questions neither push
    the ledger's states out nor fold PLD's recent releases for a state that is dropped."""
    with _LOCK, _pinned():  # a single pmf is built once per question, whatever the paths
        state, target_delta = _with_new(accountant, history, new, target_delta, keep)
        return state.epsilon(accountant, target_delta)


def total(accountant: Accountant, history: Sequence[PrivacyEvent], target_delta: float) -> PrivacyTotal:
    """``accountant.total(history, target_delta)``, the canonical total (``epsilon``), from the kept state
    where that is the same to the bit: ``epsilon`` and, for the tightest accountant, ``via``, the first
    component with the smallest total (as ``TightestAccountant._via``)."""
    if not _bit_exact(accountant):
        return accountant.total(history, target_delta)
    with _LOCK, _pinned():  # a single pmf is built once per question, whatever the paths
        state, target_delta = _with_new(accountant, history, (), target_delta)
        value = state.epsilon(accountant, target_delta)
        via = accountant.name
        if isinstance(accountant, TightestAccountant) and state.events and not state.non_private:
            best, via = math.inf, accountant.components[0].name
            for component in state._usable(accountant):
                if (candidate := state.epsilon(component, target_delta)) < best:
                    best, via = candidate, component.name
        return PrivacyTotal(value, float(target_delta), accountant.name, via, len(state.events))


def fits(
    accountant: Accountant,
    history: Sequence[PrivacyEvent],
    new: Sequence[PrivacyEvent],
    target_delta: float,
    budget_epsilon: float,
    *,
    keep: bool = True,
) -> bool:
    """Whether ``epsilon(accountant, history, new, target_delta) <= budget_epsilon·(1 + REL_SLACK)``, the
    ledger's budget check, on the canonical total: the same answer in every process.

    The kept state answers at once, stopping at the first of the tightest's components that certifies it;
    where it is not the canonical total to the bit (PLD, the tightest), it decides only outside a band of
    ``DECIDE_MARGIN`` around the limit (it fits the shrunk limit, or not even the grown one), far wider than
    the FFTs' rounding between the two; within the band the canonical total decides. The states of
    ``history`` and ``history + new`` are kept, with the totals asked (``_state_of``); with ``keep=False``
    (a hypothetical question, as for ``epsilon``) only that of ``history``."""
    limit = budget_epsilon * (1.0 + REL_SLACK)
    exact = _bit_exact(accountant)
    with _LOCK, _pinned():  # a single pmf is built once per question, whatever the paths
        state, target_delta = _with_new(accountant, history, new, target_delta, keep)
        if state.fits(accountant, target_delta, limit if exact else limit * (1.0 - DECIDE_MARGIN)):
            return True
        if exact or not state.fits(accountant, target_delta, limit * (1.0 + DECIDE_MARGIN)):
            return False
    return accountant.epsilon([*as_events(history), *as_events(new)], target_delta) <= limit
