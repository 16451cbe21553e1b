"""What every accountant offers, and the bookkeeping they share.

An accountant is a strategy for adding up privacy events (dp_accounting's ``PrivacyAccountant``):

- ``supports(event)`` / ``check(events)``: whether it can account for an event; unsupported events are
  refused with an ``UnsupportedEventError`` that names them and says why;
- ``epsilon(events, target_delta)``: the smallest ε it can certify for the composition at that δ
  (∞ if none, 0 for no events);
- ``delta(events, target_epsilon)``: the smallest δ it can certify at that ε (1 if none);
- ``total(events, target_delta)``: the same as a ``PrivacyTotal`` value, which offers group privacy.

Accountants are stateless: they read a list of events and return numbers, so one instance serves every
ledger. Identical events are composed by count: an accountant sees a ``Composition``, a multiset of
settings (events without their labels) with counts, and caches its answers for each multiset.

Parallel composition. Events with a ``partition`` (by, part) touched only the records in that part. A
record lies in exactly one part of each partitioning, so the neighbouring pairs that differ in it see the
whole-data events plus one cell of each partitioning: a *path*. The composition's guarantee is the worst
path's. Cells whose multiset of events is contained in another cell's are dominated and dropped; if more
than ``MAX_PATHS`` paths remain, each partitioning is replaced by the union (count-wise maximum) of its
cells, which dominates every cell, so the answer stays an upper bound. Basic composition, being additive,
uses the exact max for ε and for δ instead.
"""

from __future__ import annotations

import functools
import itertools
import math
from abc import ABC, abstractmethod
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from dpdash import _validation as check
from dpdash.accounting.events import EVENT_TYPES, NonPrivateEvent, PrivacyEvent, canonical_json
from dpdash.errors import ParameterError, ParameterTypeError, UnsupportedEventError

__all__ = [
    "MAX_PATHS",
    "REL_SLACK",
    "Accountant",
    "Composition",
    "PrivacyTotal",
    "compositions",
    "group_privacy",
]

# Comparisons of a total with a budget forgive this relative excess, so that a budget split evenly in
# decimal (ten releases of ε = 0.1 in ε = 1) is not refused for binary rounding. One part in 10⁹ of ε is
# far below anything that matters for privacy.
REL_SLACK = 1e-9

# The most worst-case paths through partitioned events that are composed one by one (see module docs).
MAX_PATHS = 64


def group_privacy(epsilon: float, delta: float, group_size: int) -> tuple[float, float]:
    """The guarantee for groups of ``group_size`` records of an (ε, δ)-DP release: (gε, g·e^((g−1)ε)·δ),
    capped at δ = 1 (Dwork & Roth 2014, Thm 2.2 and its (ε, δ) form; MATH.md "Group privacy").

    >>> group_privacy(0.5, 1e-6, 3)
    (1.5, 8.154845485377135e-06)
    """
    g = check.positive_int(group_size, "group_size")
    epsilon = _non_negative(epsilon, "epsilon", allow_inf=True)
    delta = _unit_closed(delta, "delta")
    if delta == 0.0:
        return g * epsilon, 0.0
    if math.isinf(epsilon):
        return math.inf, 1.0
    exponent = (g - 1) * epsilon
    if exponent + math.log(g) + math.log(delta) >= 0.0:
        return g * epsilon, 1.0
    return g * epsilon, min(1.0, g * math.exp(exponent) * delta)


@dataclass(frozen=True, slots=True)
class PrivacyTotal:
    """A composed guarantee: the events are (epsilon, delta)-DP according to ``accountant``.

    Attributes:
        epsilon: ε (``math.inf`` when the accountant can certify none at this δ).
        delta: δ.
        accountant: the accountant's name.
        via: for ``tightest``, the accountant whose bound was the smallest; else the same as
            ``accountant``.
        events: how many events were composed.
        group_size: the records per protected unit (1 for one record; see ``for_group``).
    """

    epsilon: float
    delta: float
    accountant: str
    via: str = ""
    events: int = 0
    group_size: int = 1

    def for_group(self, group_size: int) -> PrivacyTotal:
        """This total for groups of ``group_size`` records: (gε, g·e^((g−1)ε)·δ)."""
        g = check.positive_int(group_size, "group_size")
        epsilon, delta = group_privacy(self.epsilon, self.delta, g)
        return PrivacyTotal(epsilon, delta, self.accountant, self.via, self.events, self.group_size * g)


class Composition(tuple):
    """A multiset of event settings with counts, sorted canonically: ``((setting, count), ...)``.

    Hashable, so accountants cache their answers per composition.
    """

    __slots__ = ()

    @classmethod
    def of(cls, counts: Counter[PrivacyEvent]) -> Composition:
        items = [(setting, count) for setting, count in counts.items() if count > 0]
        items.sort(key=lambda item: _sort_key(item[0]))
        return cls(items)

    @property
    def size(self) -> int:
        """The number of events."""
        return sum(count for _, count in self)

    def counter(self) -> Counter[PrivacyEvent]:
        return Counter(dict(self))


@functools.lru_cache(maxsize=4096)
def _sort_key(setting: PrivacyEvent) -> tuple[str, str]:
    return setting.family, canonical_json(setting.to_dict())


def _union(counters: Iterable[Counter[PrivacyEvent]]) -> Counter[PrivacyEvent]:
    out: Counter[PrivacyEvent] = Counter()
    for counter in counters:
        out |= counter
    return out


def _undominated(cells: Iterable[Counter[PrivacyEvent]]) -> list[Counter[PrivacyEvent]]:
    """The cells not contained (as multisets) in another cell; one of each set of equal cells."""
    distinct: list[Counter[PrivacyEvent]] = []
    for cell in cells:
        if cell not in distinct:
            distinct.append(cell)
    # Distinct cells differ from every other one, so `other is not cell` is `other != cell`, without a
    # Counter comparison that walks all of a cell's items when it meets itself.
    return [cell for cell in distinct if not any(other is not cell and cell <= other for other in distinct)]


def _split(events: Sequence[PrivacyEvent]) -> tuple[Counter[PrivacyEvent], list[list[Counter[PrivacyEvent]]]]:
    """Whole-data settings with counts, and for each partitioning the settings of each of its cells."""
    whole, partitionings = _split_cached(tuple(events))
    return Counter(whole), [[Counter(cell) for cell in cells] for cells in partitionings]


@functools.lru_cache(maxsize=16)
def _split_cached(
    events: tuple[PrivacyEvent, ...],
) -> tuple[Counter[PrivacyEvent], list[list[Counter[PrivacyEvent]]]]:
    # Cached: every accountant (and "tightest" again) splits the same list when a ledger shows its totals.
    whole: Counter[PrivacyEvent] = Counter()
    cells: defaultdict[str, defaultdict[str, Counter[PrivacyEvent]]] = defaultdict(
        lambda: defaultdict(Counter)
    )
    settings: dict[PrivacyEvent, PrivacyEvent] = {}
    for event in events:
        setting = settings.get(event)
        if setting is None:
            setting = settings[event] = event.setting
        if event.partition is None:
            whole[setting] += 1
        else:
            by, part = event.partition
            cells[by][part][setting] += 1
    return whole, [list(parts.values()) for _, parts in sorted(cells.items())]


def compositions(events: Sequence[PrivacyEvent]) -> tuple[list[Composition], bool]:
    """The worst-case paths through ``events`` (see the module docstring), each a ``Composition``.

    Returns:
        (paths, exact): ``exact`` is False when partitionings were replaced by the union of their cells.
    """
    whole, partitionings = _split(events)
    undominated = [_undominated(cells) for cells in partitionings]
    if math.prod(len(cells) for cells in undominated) <= MAX_PATHS:
        paths = []
        for choice in itertools.product(*undominated):
            path = Counter(whole)
            for cell in choice:
                path.update(cell)
            paths.append(Composition.of(path))
        return paths, True
    path = Counter(whole)
    for cells in undominated:
        path.update(_union(cells))
    return [Composition.of(path)], False


def _non_negative(value: object, name: str, *, allow_inf: bool = False) -> float:
    x = check._real(value, name)
    if not (x >= 0 and (allow_inf or math.isfinite(x))):
        rule = "a number >= 0" if allow_inf else "a finite number >= 0"
        raise ParameterError(f"{name} must be {rule}, got {name}={value!r}")
    return x


def _unit_closed(value: object, name: str) -> float:
    x = check._real(value, name)
    if not (0.0 <= x <= 1.0):
        raise ParameterError(f"{name} must be a number in [0, 1], got {name}={value!r}")
    return x


def as_events(events: Iterable[PrivacyEvent]) -> list[PrivacyEvent]:
    """``events`` as a list, refusing anything that is not a ``PrivacyEvent``."""
    if isinstance(events, PrivacyEvent):
        raise ParameterTypeError("events must be a list of events, got a single event; wrap it in a list")
    out = list(events)
    # One check per distinct type, at C speed over the list (a ledger's history: 10 000 events, a few types).
    if all(issubclass(kind, PrivacyEvent) for kind in set(map(type, out))):
        return out
    event = next(e for e in out if not isinstance(e, PrivacyEvent))
    hint = " (use event_for(mechanism))" if hasattr(event, "privacy_profile") else ""
    raise ParameterTypeError(f"events must be PrivacyEvent instances{hint}, got {type(event).__name__}")


class Accountant(ABC):
    """Base class of the accountants (dp_accounting's ``PrivacyAccountant``, as a stateless strategy).

    Class attributes:
        name: the key used in ledgers and ``get_accountant`` (e.g. ``"basic"``).
        title: for people (e.g. "Basic composition").
        finite_at_zero_delta: False when the accountant can certify no finite ε at δ = 0 for any event
            with positive privacy loss (zCDP, RDP), so it cannot keep a pure-DP budget.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    finite_at_zero_delta: ClassVar[bool] = True

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    # ---- support --------------------------------------------------------------------------------
    def refusal(self, event: PrivacyEvent) -> str | None:
        """Why this accountant cannot account for ``event``, or ``None`` if it can."""
        if not isinstance(event, PrivacyEvent):
            return f"{type(event).__name__} is not a privacy event"
        if EVENT_TYPES.get(event.family) is not type(event):
            return f"{type(event).__name__} is an unknown event type"
        if isinstance(event, NonPrivateEvent):
            return None
        return self._refusal(event)

    def _refusal(self, event: PrivacyEvent) -> str | None:
        """Subclasses: why a (known, private) event is unsupported, or ``None``."""
        return None

    def supports(self, event: PrivacyEvent) -> bool:
        """Whether this accountant can account for ``event``."""
        return self.refusal(event) is None

    def check(self, events: Iterable[PrivacyEvent]) -> list[PrivacyEvent]:
        """``events`` as a list, or ``UnsupportedEventError`` naming each refused event and why."""
        events = as_events(events)
        # Support depends on the kind of event only: ask once per kind (naming the first of each).
        problems: dict[str, str] = {}
        for event in {type(e): e for e in reversed(events)}.values():
            reason = self.refusal(event)
            if reason is not None:
                problems.setdefault(_name(event), reason)
        if problems:
            listed = "; ".join(f"{name}: {reason}" for name, reason in problems.items())
            raise UnsupportedEventError(f"the {self.name} accountant ({self.title}) refuses {listed}")
        return events

    # ---- totals ---------------------------------------------------------------------------------
    def epsilon(self, events: Iterable[PrivacyEvent], target_delta: float) -> float:
        """The smallest ε this accountant certifies for the composition of ``events`` at δ = target_delta.

        0 for no events; ``math.inf`` when it certifies none (e.g. a non-private event, or a target δ below
        what the events' own δs already use).
        """
        target_delta = _unit_closed(target_delta, "target_delta")
        events = self.check(events)
        if not events:
            return 0.0
        if any(isinstance(event, NonPrivateEvent) for event in events):
            return math.inf
        return self._epsilon_of_events(events, target_delta)

    def delta(self, events: Iterable[PrivacyEvent], target_epsilon: float) -> float:
        """The smallest δ this accountant certifies for the composition of ``events`` at ε = target_epsilon
        (0 for no events; 1 when it certifies nothing better)."""
        target_epsilon = _non_negative(target_epsilon, "target_epsilon")
        events = self.check(events)
        if not events:
            return 0.0
        if any(isinstance(event, NonPrivateEvent) for event in events):
            return 1.0
        return min(1.0, self._delta_of_events(events, target_epsilon))

    def total(self, events: Iterable[PrivacyEvent], target_delta: float) -> PrivacyTotal:
        """``PrivacyTotal(epsilon(events, target_delta), target_delta, ...)``."""
        events = as_events(events)
        epsilon = self.epsilon(events, target_delta)
        return PrivacyTotal(
            epsilon, float(target_delta), self.name, self._via(events, target_delta), len(events)
        )

    def _via(self, events: list[PrivacyEvent], target_delta: float) -> str:
        return self.name

    # Default: the worst path. Basic composition overrides these with its exact parallel rule.
    def _epsilon_of_events(self, events: list[PrivacyEvent], target_delta: float) -> float:
        paths, _ = compositions(events)
        return max(self._epsilon_cached(path, target_delta) for path in paths)

    def _delta_of_events(self, events: list[PrivacyEvent], target_epsilon: float) -> float:
        paths, _ = compositions(events)
        return max(self._delta_cached(path, target_epsilon) for path in paths)

    @functools.lru_cache(maxsize=512)  # noqa: B019 -- accountants are few and long-lived
    def _epsilon_cached(self, composition: Composition, target_delta: float) -> float:
        return float(self._epsilon(composition, target_delta))

    @functools.lru_cache(maxsize=512)  # noqa: B019
    def _delta_cached(self, composition: Composition, target_epsilon: float) -> float:
        return float(self._delta(composition, target_epsilon))

    @abstractmethod
    def _epsilon(self, composition: Composition, target_delta: float) -> float:
        """ε at δ for one path of private, supported settings (non-empty)."""

    @abstractmethod
    def _delta(self, composition: Composition, target_epsilon: float) -> float:
        """δ at ε for one path of private, supported settings (non-empty)."""


def _name(event: PrivacyEvent) -> str:
    label = f" '{event.query}'" if getattr(event, "query", "") else ""
    describe = event.describe() if isinstance(event, PrivacyEvent) else repr(event)
    return f"{type(event).__name__}{label} ({describe})"


def pairs(composition: Composition) -> list[tuple[float, float, int]]:
    """(ε, δ, count) of each setting of a path, for accountants that compose (ε, δ) guarantees."""
    return [(float(s.epsilon), float(s.delta), count) for s, count in composition]  # type: ignore[arg-type]


def refuse_without_epsilon_delta(event: PrivacyEvent) -> str | None:
    """The refusal of accountants that compose stated (ε, δ) guarantees."""
    if event.epsilon is None or event.delta is None:
        return (
            "it states no (ε, δ) guarantee (a ρ-zCDP bound converts to a whole curve of them); "
            "use the zcdp or rdp accountant"
        )
    return None
