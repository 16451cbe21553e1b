"""``Ledger``'s totals and planning: what a dataset has spent under each accountant, what remains, and
what the rest of its budget can still buy (``dpdash.accounting.planning`` on the ledger's history)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dpdash.accounting import running
from dpdash.accounting.accountant import PrivacyTotal
from dpdash.accounting.events import (
    PrivacyEvent,
)
from dpdash.accounting.registry import ACCOUNTANT_NAMES, get_accountant
from dpdash.errors import (
    UnsupportedEventError,
)
from dpdash.ledger.records import (
    Budget,
    BudgetStatus,
    Dataset,
)
from dpdash.ledger.releases import release_count

__all__ = ["Totals", "remaining_of"]


class Totals:
    """``Ledger``'s totals and planning (see the module docstring)."""

    # ---- totals -----------------------------------------------------------------------------------
    def spent(self, dataset: Dataset | str, accountant: str | None = None) -> PrivacyTotal:
        """The composed total of the dataset's releases at its budget's δ, under its accountant (or the
        one named).

        The accountant's own number, a function of the ledger's contents alone (``running.total``): the
        same to the bit in every process, whether it composed the releases one by one or read them
        fresh."""
        ds = self.dataset(dataset)
        keeper = get_accountant(accountant or ds.accountant)
        return running.total(keeper, self.events(ds), ds.budget.delta)

    def status(self, dataset: Dataset | str) -> BudgetStatus:
        """Budget, spent (``spent``) and remaining under the dataset's accountant, and how many entries and
        releases (``releases.release_count``) the ledger holds."""
        ds = self.dataset(dataset)
        entries = self.entries(ds)
        events = [entry.event for entry in entries]
        spent = running.total(get_accountant(ds.accountant), events, ds.budget.delta)
        return BudgetStatus(
            ds.budget, spent, remaining_of(ds.budget, spent.epsilon), len(entries), release_count(entries)
        )

    def remaining(self, dataset: Dataset | str) -> float:
        """The ε still unspent at the budget's δ, under the dataset's accountant (budget ε − spent ε, ≥ 0)."""
        return self.status(dataset).remaining_epsilon

    def totals(
        self,
        dataset: Dataset | str,
        accountants: Iterable[str] = ACCOUNTANT_NAMES,
        *,
        group_size: int = 1,
    ) -> dict[str, PrivacyTotal | None]:
        """The dataset's total under each accountant side by side, at the budget's δ (``None`` where an
        accountant refuses one of the events), optionally for groups of ``group_size`` records; each as
        ``spent`` computes it."""
        ds = self.dataset(dataset)
        events = self.events(ds)
        out: dict[str, PrivacyTotal | None] = {}
        for name in accountants:
            try:
                total = running.total(get_accountant(name), events, ds.budget.delta)
            except UnsupportedEventError:
                out[name] = None
                continue
            out[name] = total.for_group(group_size) if group_size != 1 else total
        return out

    def cumulative(
        self,
        dataset: Dataset | str,
        accountants: Iterable[str] = ACCOUNTANT_NAMES,
        *,
        points: int = 50,
    ) -> list[tuple[int, dict[str, float | None]]]:
        """Total ε at the budget's δ after the first n releases, for up to ``points`` values of n (always
        including every n when there are few entries, and the last one): the data of a step chart."""
        from dpdash.accounting.planning import cumulative_totals

        ds = self.dataset(dataset)
        return cumulative_totals(self.events(ds), ds.budget.delta, accountants, points=points)

    # ---- planning ---------------------------------------------------------------------------------
    def plan(self, dataset: Dataset | str, queries: Sequence[Any]) -> Any:
        """``planning.plan`` for this dataset: the ε per planned query that fits what remains."""
        from dpdash.accounting.planning import plan

        ds = self.dataset(dataset)
        return plan(queries, budget=ds.budget, spent=self.events(ds), accountant=ds.accountant)

    def what_if(
        self,
        dataset: Dataset | str,
        event: PrivacyEvent,
        counts: Iterable[int],
        accountants: Iterable[str] = ACCOUNTANT_NAMES,
    ) -> Any:
        """``planning.what_if`` for this dataset: totals after k more releases like ``event``."""
        from dpdash.accounting.planning import what_if

        ds = self.dataset(dataset)
        return what_if(event, counts, spent=self.events(ds), budget=ds.budget, accountants=accountants)

    def max_releases(self, dataset: Dataset | str, event: PrivacyEvent) -> int:
        """How many more releases like ``event`` fit the dataset's budget under its accountant."""
        from dpdash.accounting.planning import max_releases

        ds = self.dataset(dataset)
        return max_releases(event, spent=self.events(ds), budget=ds.budget, accountant=ds.accountant)


def remaining_of(budget: Budget, spent: float) -> float:
    return max(0.0, budget.epsilon - spent)
