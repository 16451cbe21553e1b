"""Releases, as people count them, from ledger entries: one release may be recorded as several entries.

A release is what a person released with one click (or one ``Ledger.spend_release`` / ``spend_many`` call):
the ledger entries that one spend wrote. A mean is released as two noisy pieces (a sum and a count), a
median of several levels as one selection per level, and a per-coordinate mechanism as m runs:
``Ledger.spend_release`` records each as its own entry (``events_for_release``), because that is what the
accountants compose. All the entries of one release are written by one ``spend_many`` transaction, which
gives them the same ``created_at`` (one timestamp, taken under the write lock, to the microsecond) and the
same session, and consecutive row ids; the values it published (``published``) are stored under the uid
of its first entry. Entries of two different spends never share a timestamp in practice: spends are
serialised by the write lock and each commits to disk (``synchronous = FULL``) before the next can start.
Imports keep both fields, so a release stays one release in every ledger it travels to.

Every count of releases (``BudgetStatus.releases``, the app's sidebar, Budget, Datasets and risk pages,
the stakeholder report) is ``release_count``; where entries are counted they are called entries.

>>> from dpdash import Laplace
>>> from dpdash.accounting import event_for
>>> from dpdash.ledger import Entry
>>> def entry(uid, created, query):
...     event = event_for(Laplace(epsilon=0.5, sensitivity=1.0), query=query)
...     return Entry(uid, "sha256:x", "s1", created, event)
>>> entries = [entry("a", "t1", "mean of age: sum"), entry("b", "t1", "mean of age: count"),
...            entry("c", "t2", "count")]
>>> release_count(entries), [len(group) for group in group_releases(entries)]
(2, [2, 1])
>>> first = recorded_releases(entries, {})[0]
>>> first.number, first.epsilon, first.summed
(1, 1.0, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dpdash.ledger.records import Entry

__all__ = ["RecordedRelease", "group_releases", "recorded_releases", "release_count"]


def group_releases(entries: Sequence[Entry]) -> list[tuple[Entry, ...]]:
    """The entries (in the ledger's order) grouped into releases: runs of consecutive entries with the
    same ``created_at`` and session, i.e. written by one transaction."""
    groups: list[list[Entry]] = []
    for entry in entries:
        if groups and (groups[-1][-1].created_at, groups[-1][-1].session) == (
            entry.created_at,
            entry.session,
        ):
            groups[-1].append(entry)
        else:
            groups.append([entry])
    return [tuple(group) for group in groups]


def release_count(entries: Sequence[Entry]) -> int:
    """How many releases the entries record (a mean's sum and count pieces are one release)."""
    return len(group_releases(entries))


def _finite(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


@dataclass(frozen=True, slots=True)
class RecordedRelease:
    """One release in a dataset's ledger: its entries and, if one was stored, the record of what it
    published (``Ledger.published``: a ``dpdash.release.Release`` as JSON, never the true values).

    Attributes:
        number: its place among the dataset's releases, from 1, oldest first.
        entries: the ledger entries its spend wrote (one per noisy piece), in order.
        record: the published record, or ``None`` (recorded by ``spend``/``spend_many``, by a dpdash
            older than the records, or imported from an export that was not trusted).
    """

    number: int
    entries: tuple[Entry, ...]
    record: Mapping[str, Any] | None

    @property
    def uid(self) -> str:
        """The uid of its first entry (the key of its published record)."""
        return self.entries[0].uid

    @property
    def created_at(self) -> str:
        return self.entries[0].created_at

    @property
    def session(self) -> str | None:
        return self.entries[0].session

    @property
    def query(self) -> str:
        """The query's name as the record states it, else its first entry's query."""
        name = None if self.record is None else self.record.get("query_name")
        return name if isinstance(name, str) and name else self.entries[0].query

    @property
    def mechanism(self) -> str:
        name = None if self.record is None else self.record.get("mechanism")
        return name if isinstance(name, str) and name else self.entries[0].mechanism

    @property
    def summed(self) -> bool:
        """Whether ``epsilon``/``delta`` are the sum of several entries' (no record states the cost)."""
        return self._stated is None and len(self.entries) > 1

    @property
    def _stated(self) -> tuple[float, float] | None:
        if self.record is None:
            return None
        epsilon, delta = _finite(self.record.get("epsilon")), _finite(self.record.get("delta"))
        return None if epsilon is None or delta is None else (epsilon, delta)

    @property
    def epsilon(self) -> float | None:
        """What it spent: its record's ε, else the sum of its entries' ε (``summed``: by basic
        composition, an upper bound), or ``None`` where an entry states no ε (e.g. a zCDP event)."""
        stated = self._stated
        if stated is not None:
            return stated[0]
        values = [entry.epsilon for entry in self.entries]
        return None if any(v is None for v in values) else math.fsum(v for v in values if v is not None)

    @property
    def delta(self) -> float | None:
        """Its record's δ, else the sum of its entries' δ (as ``epsilon``)."""
        stated = self._stated
        if stated is not None:
            return stated[1]
        values = [entry.delta for entry in self.entries]
        return None if any(v is None for v in values) else math.fsum(v for v in values if v is not None)


def recorded_releases(
    entries: Sequence[Entry], published: Mapping[str, Mapping[str, Any]]
) -> list[RecordedRelease]:
    """The entries grouped into releases (``group_releases``), each with its published record by the
    uid of its first entry (``Ledger.published``), oldest first."""
    return [
        RecordedRelease(number, group, published.get(group[0].uid))
        for number, group in enumerate(group_releases(entries), start=1)
    ]
