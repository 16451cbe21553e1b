"""A history's composed state (``running``): its split into whole-data events and cells of partitionings,
the worst-case paths, and per path the tallies each accountant asked keeps (``running_tallies``,
``running_pld``); copied, never changed, when a release is added."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from dpdash.accounting.accountant import (
    MAX_PATHS,
    REL_SLACK,
    Accountant,
    _undominated,
)
from dpdash.accounting.basic import BasicComposition
from dpdash.accounting.events import NonPrivateEvent, PrivacyEvent
from dpdash.accounting.pld import (
    PLDAccountant,
)
from dpdash.accounting.running_pld import _PLDSplit
from dpdash.accounting.running_tallies import _TALLIES, _basic_update, _ExactSums, _Tally
from dpdash.accounting.tightest import TightestAccountant

__all__ = []


# The tightest accountant asks its components in this order when checking a budget: cheapest first.
# PLD checks a budget from δ at the budget's ε (one pass over the tails) and is the tightest in practice, so
# it comes before optimal composition's search over the worst case.
_CHEAP_FIRST = ("basic", "zcdp", "advanced", "rdp", "pld", "optimal")


# ---- a history's state ----------------------------------------------------------------------------------
class _Path:
    """One worst-case path: its settings with counts, and the tallies of the accountants asked so far.

    A copy remembers the path it was copied from (``origin``, whose counts no longer change once its state
    is kept) and the settings whose counts changed since; an accountant first asked of the copy gets the
    origin's tally (built there, and kept there for later copies) updated by those changes, so asking a
    total of a history plus a few releases composes only the few. Links are kept two generations deep.
    """

    def __init__(self, counts: Counter[PrivacyEvent]) -> None:
        self.counts = counts
        self.tallies: dict[Accountant, _Tally] = {}
        self.origin: _Path | None = None
        self.changed: set[PrivacyEvent] = set()

    def copy(self) -> _Path:
        out = _Path(Counter(self.counts))
        out.tallies = {a: t.copy() for a, t in self.tallies.items()}
        out.origin = self
        if self.origin is not None:
            self.origin.origin = None  # at most two generations: older states may be let go
        return out

    def set(self, setting: PrivacyEvent, new: int) -> None:
        old = self.counts[setting]
        if new != old:
            self.counts[setting] = new
            if self.origin is not None:
                self.changed.add(setting)
            for tally in self.tallies.values():
                tally.update(setting, old, new)

    def tally(self, accountant: Accountant) -> _Tally:
        tally = self.tallies.get(accountant)
        if tally is not None:
            return tally
        origin = self.origin
        if origin is not None:
            base = origin.tally(accountant)
            base.settle()
            tally = base.copy()
            for setting in self.changed:
                tally.update(setting, origin.counts[setting], self.counts[setting])
        else:
            tally = _TALLIES[type(accountant)](accountant)  # type: ignore[call-arg]
            for setting, count in self.counts.items():
                tally.update(setting, 0, count)
        self.tallies[accountant] = tally
        return tally


class _State:
    """The composed state of a list of events (see the module docstring)."""

    def __init__(self) -> None:
        self.events: list[PrivacyEvent] = []
        self.kinds: dict[type, PrivacyEvent] = {}
        self.non_private = False
        self.whole: Counter[PrivacyEvent] = Counter()
        self.cells: dict[str, dict[str, Counter[PrivacyEvent]]] = {}
        self.layout: tuple[Any, ...] = ((),)  # the paths: one tuple of (by, part) per path, or "union"
        self.paths: dict[Any, _Path] = {(): _Path(Counter())}
        self.basic_whole = _ExactSums(2)
        self.basic_cells: dict[str, dict[str, _ExactSums]] = {}
        self.totals: dict[tuple[Accountant, float], float] = {}  # kept states never change: memoised
        self.fit_answers: dict[tuple[Accountant, float, float], bool] = {}
        self.pld: dict[Accountant, _PLDSplit] = {}  # PLD's state, per PLD accountant asked
        self.origin: _State | None = None
        self.kept = True  # False: asked once and dropped (its PLD recent part is never folded)

    def copy(self) -> _State:
        out = _State()
        out.events, out.kinds, out.non_private = list(self.events), dict(self.kinds), self.non_private
        out.whole = Counter(self.whole)
        out.cells = {by: {part: Counter(c) for part, c in parts.items()} for by, parts in self.cells.items()}
        out.layout = self.layout
        out.paths = {key: path.copy() for key, path in self.paths.items()}
        out.basic_whole = self.basic_whole.copy()
        out.pld = {accountant: split.copy() for accountant, split in self.pld.items()}
        out.basic_cells = {
            by: {p: s.copy() for p, s in parts.items()} for by, parts in self.basic_cells.items()
        }
        out.origin = self  # PLD first asked of the copy starts from this state's (built and kept here)
        if self.origin is not None:
            self.origin.origin = None  # at most two generations, as paths
        return out

    # -- adding events
    def extend(self, events: Iterable[PrivacyEvent]) -> None:
        # A run of one event (k more releases like it) is added at once: its setting's count grows by k.
        for _, run in itertools.groupby(events, key=id):
            alike = list(run)
            self._add(alike[0], len(alike))

    def _add(self, event: PrivacyEvent, count: int = 1) -> None:
        self.events.extend(itertools.repeat(event, count))
        if type(event) not in self.kinds:
            self.kinds[type(event)] = event
            for path in self.paths.values():  # tallies of accountants that refuse it are never read again
                for accountant in [a for a in path.tallies if a.refusal(event) is not None]:
                    del path.tallies[accountant]
            for accountant in [a for a in self.pld if a.refusal(event) is not None]:
                del self.pld[accountant]
        if isinstance(event, NonPrivateEvent):
            self.non_private = True
            return
        setting = event.setting
        if event.partition is None:
            old = self.whole[setting]
            self.whole[setting] = old + count
            _basic_update(self.basic_whole, setting, old, old + count)
            for path in self.paths.values():
                path.set(setting, path.counts[setting] + count)
            for split in self.pld.values():
                split.update_whole(setting, old, old + count)
            return
        by, part = event.partition
        cell = self.cells.setdefault(by, {}).setdefault(part, Counter())
        old = cell[setting]
        cell[setting] = old + count
        sums = self.basic_cells.setdefault(by, {}).setdefault(part, _ExactSums(2))
        _basic_update(sums, setting, old, old + count)
        layout = self._layout()
        if layout != self.layout:
            self._rebuild(layout)
            for split in self.pld.values():
                split.forget_rests()
        elif layout == ("union",):
            union = self.paths["union"]
            union.set(
                setting, self.whole[setting] + sum(_cell_max(parts, setting) for parts in self.cells.values())
            )
        else:
            for key, path in self.paths.items():
                if (by, part) in key:
                    path.set(setting, path.counts[setting] + count)
        for split in self.pld.values():
            for key, path in self.paths.items():
                split.sync_rest(key, path, self.whole, setting)

    def _layout(self) -> tuple[Any, ...]:
        """The paths of ``compositions``: the product of the undominated cells, or the union."""
        choices = []
        for by, parts in sorted(self.cells.items()):
            kept = _undominated(parts.values())
            # `_undominated` returns the first of each set of equal cells itself: found by identity (a
            # Counter compares all its items even with itself).
            choices.append([(by, next(p for p, c in parts.items() if c is cell)) for cell in kept])
        if math.prod(len(c) for c in choices) <= MAX_PATHS:
            return tuple(itertools.product(*choices))
        return ("union",)

    def _rebuild(self, layout: tuple[Any, ...]) -> None:
        paths: dict[Any, _Path] = {}
        for key in layout:
            if key in self.paths:
                paths[key] = self.paths[key]
                continue
            counts = Counter(self.whole)
            if key == "union":
                for parts in self.cells.values():
                    counts.update(_union(parts.values()))
            else:
                for by, part in key:
                    counts.update(self.cells[by][part])
            paths[key] = _Path(counts)
        self.layout, self.paths = layout, paths
        # A kept path may lack a count the rebuild would give it only if its cells changed: recount them.
        for key, path in paths.items():
            if key != "union":
                expected = Counter(self.whole)
                for by, part in key:
                    expected.update(self.cells[by][part])
                for setting in set(expected) | set(path.counts):
                    path.set(setting, expected[setting])

    # -- totals
    def refusal(self, accountant: Accountant) -> str | None:
        for event in self.kinds.values():
            reason = accountant.refusal(event)
            if reason is not None:
                return reason
        return None

    def epsilon(self, accountant: Accountant, target_delta: float) -> float:
        """``accountant.epsilon(self.events, target_delta)`` (events already checked)."""
        if not self.events:
            return 0.0
        if self.non_private:
            return math.inf
        if isinstance(accountant, TightestAccountant):
            return min(self.epsilon(c, target_delta) for c in self._usable(accountant))
        key = (accountant, target_delta)
        total = self.totals.get(key)
        if total is None:
            total = self.totals[key] = self._epsilon(accountant, target_delta)
        return total

    def _epsilon(self, accountant: Accountant, target_delta: float) -> float:
        if isinstance(accountant, BasicComposition):
            epsilon, delta = self._basic_sums()
            return epsilon if delta <= target_delta * (1.0 + REL_SLACK) else math.inf
        if type(accountant) is PLDAccountant:
            split = self._pld(accountant)
            return max(split.epsilon(k, p, self.whole, target_delta) for k, p in self.paths.items())
        if type(accountant) not in _TALLIES:  # an accountant this module does not know: from scratch
            return accountant.epsilon(self.events, target_delta)
        return max(path.tally(accountant).epsilon(target_delta) for path in self.paths.values())

    def _pld(self, accountant: PLDAccountant) -> _PLDSplit:
        """PLD's state of this history: kept; first asked of a copy, the origin's (built there and kept
        there for later copies) updated by the releases added since."""
        split = self.pld.get(accountant)
        if split is None:
            split = self.pld[accountant] = self._pld_from_origin(accountant)
        if self.kept:
            split._fold()
        return split

    def _pld_from_origin(self, accountant: PLDAccountant) -> _PLDSplit:
        origin = self.origin
        if origin is None or origin.non_private:
            split = _PLDSplit(accountant, self.whole)
        else:
            split = origin._pld(accountant).copy()
            changed = {
                e.setting for e in self.events[len(origin.events) :] if not isinstance(e, NonPrivateEvent)
            }
            for setting in changed:
                if self.whole[setting] != origin.whole[setting]:
                    split.update_whole(setting, origin.whole[setting], self.whole[setting])
            if self.layout != origin.layout:
                split.forget_rests()
            else:
                for key, path in self.paths.items():
                    for setting in changed:
                        split.sync_rest(key, path, self.whole, setting)
        return split

    def fits(self, accountant: Accountant, target_delta: float, limit: float) -> bool:
        """Whether ``epsilon(accountant, target_delta) <= limit``, asking the tightest's components cheapest
        first and stopping at the first that fits (the minimum fits iff one of them does); PLD answers from
        δ(limit) where that decides it (``_PLDTally.fits``)."""
        if not self.events or self.non_private:
            return self.epsilon(accountant, target_delta) <= limit
        if not isinstance(accountant, TightestAccountant):
            return self._fits(accountant, target_delta, limit)
        usable = sorted(
            self._usable(accountant),
            key=lambda c: _CHEAP_FIRST.index(c.name) if c.name in _CHEAP_FIRST else len(_CHEAP_FIRST),
        )
        return any(self._fits(c, target_delta, limit) for c in usable)

    def _fits(self, accountant: Accountant, target_delta: float, limit: float) -> bool:
        total = self.totals.get((accountant, target_delta))
        if total is not None:
            return total <= limit
        if type(accountant) is PLDAccountant:
            key = (accountant, target_delta, limit)
            if key not in self.fit_answers:
                split = self._pld(accountant)
                decided = split.fits(self.paths, self.whole, target_delta, limit)
                if decided is not None:
                    self.fit_answers[key] = decided
                    return decided
            else:
                return self.fit_answers[key]
        return self.epsilon(accountant, target_delta) <= limit

    def _usable(self, accountant: TightestAccountant) -> list[Accountant]:
        return accountant.usable(list(self.kinds.values()))

    def _basic_sums(self) -> tuple[float, float]:
        """``basic_sums(self.events)``."""
        eps_parts, delta_parts = [], []
        e, d = self.basic_whole.values()
        eps_parts.append(e)
        delta_parts.append(d)
        for _, parts in sorted(self.basic_cells.items()):
            cell_sums = [sums.values() for sums in parts.values()]
            eps_parts.append(max(e for e, _ in cell_sums))
            delta_parts.append(max(d for _, d in cell_sums))
        return math.fsum(eps_parts), math.fsum(delta_parts)


def _cell_max(parts: dict[str, Counter[PrivacyEvent]], setting: PrivacyEvent) -> int:
    return max(cell[setting] for cell in parts.values())


def _union(cells: Iterable[Counter[PrivacyEvent]]) -> Counter[PrivacyEvent]:
    out: Counter[PrivacyEvent] = Counter()
    for cell in cells:
        out |= cell
    return out
