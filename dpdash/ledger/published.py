"""What each release showed: the ledger's schema-3 records of published values.

An entry records what a release cost; the values it published live in its release record
(``dpdash.release.Release.to_json()``: query, mechanism, noisy values, accuracy and its definition; never the
true values). ``Ledger.spend_release`` stores that record in the same transaction as the release's entries,
under the uid of its first entry, so the values are kept exactly when the spend is: a stakeholder report made
later, in another session or on another machine after an import, shows what was released. Append-only like
the rest of the ledger. This module holds the queries and the row conversions; ``Ledger`` calls it inside
its own transactions; each storage (``storage``) creates the table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dpdash.ledger.storage.base import Connection

__all__ = ["insert_published", "read_published", "record_of"]

_TABLE = "published"


def record_of(release: Any) -> dict[str, Any]:
    """The publishable record of a release, as a JSON object (``release.to_json()``, which leaves out the
    true values and the owner's report)."""
    record = json.loads(release.to_json())
    if not isinstance(record, dict):
        raise TypeError(f"a release record must be a JSON object, got {type(record).__name__}")
    return record


def insert_published(conn: Connection, records: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
    """Store ``(first entry uid, record)`` pairs; a uid that already has a record keeps it (imports)."""
    conn.executemany(
        f"INSERT INTO {_TABLE} (entry_uid, record) VALUES (?, ?) ON CONFLICT (entry_uid) DO NOTHING",
        [(uid, json.dumps(record, ensure_ascii=False, allow_nan=False)) for uid, record in records],
    )


def read_published(
    conn: Connection, dataset_id: int, uids: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """The dataset's stored release records by first entry uid, in release order; with ``uids``, only
    those of these first entries."""
    only, chosen = "", ()
    if uids is not None:
        if not uids:
            return {}
        only, chosen = f" AND p.entry_uid IN ({', '.join('?' * len(uids))})", tuple(uids)
    rows = conn.execute(
        f"SELECT p.entry_uid, p.record FROM {_TABLE} p JOIN entries e ON e.uid = p.entry_uid "
        f"WHERE e.dataset_id = ?{only} ORDER BY e.id",
        (dataset_id, *chosen),
    ).fetchall()
    return {uid: json.loads(text) for uid, text in rows}
