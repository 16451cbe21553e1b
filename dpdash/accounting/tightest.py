"""The smallest total among the accountants that can account for the events."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import ClassVar

from dpdash.accounting.accountant import Accountant, Composition, as_events
from dpdash.accounting.events import NonPrivateEvent, PrivacyEvent
from dpdash.errors import UnsupportedEventError

__all__ = ["TightestAccountant"]


class TightestAccountant(Accountant):
    """The minimum over several accountants of their totals.

    Every accountant returns an upper bound on the true privacy loss, so the smallest is an upper bound
    too: this is the tightest guarantee dpdash can certify (typically PLD's, or the exact optimal
    composition of identical pure releases, or basic composition at δ = 0, where PLD's grid rounding shows).
    Only the accountants that support every event of the list take part; an event none of them supports is
    refused, naming why each refused it.

    Args:
        components: the accountants to take the minimum over (``get_accountant("tightest")`` takes the
            shared basic, advanced, optimal, zcdp, rdp and pld accountants).
    """

    name: ClassVar[str] = "tightest"
    title: ClassVar[str] = "Tightest (minimum over all accountants)"

    def __init__(self, components: Sequence[Accountant]) -> None:
        self.components = tuple(components)

    def __repr__(self) -> str:
        return f"TightestAccountant(components={[c.name for c in self.components]})"

    def refusal(self, event: PrivacyEvent) -> str | None:
        reasons = []
        for component in self.components:
            reason = component.refusal(event)
            if reason is None:
                return None
            reasons.append(f"{component.name}: {reason}")
        return "no accountant supports it (" + "; ".join(reasons) + ")"

    def usable(self, events: Iterable[PrivacyEvent]) -> list[Accountant]:
        """The accountants that support every event; ``UnsupportedEventError`` if there is none."""
        events = self.check(events)
        kinds = {type(e): e for e in events}.values()  # support depends on the kind of event only
        usable = [c for c in self.components if all(c.supports(e) for e in kinds)]
        if not usable:
            kinds = sorted({type(e).__name__ for e in events})
            raise UnsupportedEventError(
                f"the {self.name} accountant refuses this combination of events ({', '.join(kinds)}): "
                "no single accountant supports them all (ρ-zCDP events need zcdp or rdp, which refuse "
                "approximate (ε, δ) events)"
            )
        return usable

    def _best(self, events: list[PrivacyEvent], target_delta: float) -> tuple[float, str]:
        best, via = math.inf, self.components[0].name
        for component in self.usable(events):
            value = component.epsilon(events, target_delta)
            if value < best:
                best, via = value, component.name
        return best, via

    def _epsilon_of_events(self, events: list[PrivacyEvent], target_delta: float) -> float:
        return self._best(events, target_delta)[0]

    def _delta_of_events(self, events: list[PrivacyEvent], target_epsilon: float) -> float:
        return min(component.delta(events, target_epsilon) for component in self.usable(events))

    def _via(self, events: list[PrivacyEvent], target_delta: float) -> str:
        events = as_events(events)
        if not events or any(isinstance(e, NonPrivateEvent) for e in events):
            return self.name
        return self._best(events, target_delta)[1]

    def _epsilon(self, composition: Composition, target_delta: float) -> float:  # pragma: no cover
        raise AssertionError("the tightest accountant works on whole event lists")

    def _delta(self, composition: Composition, target_epsilon: float) -> float:  # pragma: no cover
        raise AssertionError("the tightest accountant works on whole event lists")
