"""A release request sent again spends once: the ledger's schema-4 records of request ids.

A caller whose connection to the ledger broke while it waited for a spend's answer cannot know whether the
spend was recorded. It sends the request again with the same ``request_id`` (any text it chose before the
first try, e.g. ``uuid.uuid4().hex``): ``Ledger.spend_release`` (and ``spend``, ``spend_many``) stores the id
with the entries, in the same transaction, unique per dataset, and a call whose id is already recorded for
the dataset records nothing and returns the first call's entries. The first call's values are the ones
published (``Ledger.published``): a request sent again with other events, or a release with other values,
under a recorded id is refused, since publishing a second draw would spend the budget twice. A refused
request records nothing, so its id stays unused. Append-only like the rest of the ledger; request ids stay
in the ledger that received them (an export does not carry them). This module holds the queries; each
storage (``storage``) creates the table.
"""

from __future__ import annotations

import json

from dpdash.ledger.records import short_text
from dpdash.ledger.storage.base import Connection

__all__ = ["MAX_LENGTH", "insert_request", "read_request", "request_id_of"]

#: The longest request id, in characters.
MAX_LENGTH = 200


def request_id_of(value: object) -> str | None:
    """``value`` if it is a valid request id (non-empty text of at most ``MAX_LENGTH`` characters) or
    ``None``; else a ``ParameterError`` saying why."""
    return None if value is None else short_text(value, "request_id", MAX_LENGTH)


def read_request(conn: Connection, dataset_id: int, request_id: str) -> list[str] | None:
    """The uids of the entries recorded for ``request_id`` on the dataset, in order, or ``None``."""
    row = conn.execute(
        "SELECT entry_uids FROM requests WHERE dataset_id = ? AND request_id = ?", (dataset_id, request_id)
    ).fetchone()
    return None if row is None else [str(uid) for uid in json.loads(row[0])]


def insert_request(
    conn: Connection, dataset_id: int, request_id: str, entry_uids: list[str], created_at: str
) -> None:
    """Record that ``request_id`` recorded these entries on the dataset."""
    conn.execute(
        "INSERT INTO requests (dataset_id, request_id, entry_uids, created_at) VALUES (?, ?, ?, ?)",
        (dataset_id, request_id, json.dumps(entry_uids), created_at),
    )
