"""Releases, as people count them, from ledger entries: one release may be recorded as several entries.

A mean is released as two noisy pieces (a sum and a count), a median of several levels as one selection per
level, and a per-coordinate mechanism as m runs: ``Ledger.spend_release`` records each as its own entry
(``events_for_release``), because that is what the accountants compose. All the entries of one release
are written by one ``spend_many`` transaction, which gives them the same ``created_at`` (one timestamp,
taken under the write lock, to the microsecond) and the same session, and consecutive row ids. Entries of
two different spends never share a timestamp in practice: spends are serialised by the write lock and each
commits to disk (``synchronous = FULL``) before the next can start. Imports keep both fields, so a
release stays one release in every ledger it travels to.

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
"""

from __future__ import annotations

from collections.abc import Sequence

from dpdash.ledger.records import Entry

__all__ = ["group_releases", "release_count"]


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
