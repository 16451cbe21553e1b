"""Where a ledger is kept: one interface (``base.Store``), a small module per storage.

- ``sqlite``: one SQLite file (the default);
- ``postgres``: a PostgreSQL database, shared by every process and machine that reaches it
  (``postgresql://user@host:port/database``); ``postgres_setup`` sets one up for a team, its tables owned
  by an administrator and the app's role only reading and adding.

``open_store(location)`` picks the backend from the location: a ``postgresql://`` (or ``postgres://``) URL
is a PostgreSQL ledger, anything else a file path.
"""

from __future__ import annotations

import os
from pathlib import Path

from dpdash.ledger.storage.base import SCHEMA_VERSION, Store
from dpdash.pg_urls import is_url

__all__ = ["SCHEMA_VERSION", "Store", "is_url", "open_store"]

def open_store(location: str | os.PathLike[str], *, timeout: float) -> Store:
    """The storage at ``location``, open: PostgreSQL for a URL, else the SQLite file at that path."""
    if is_url(location):
        from dpdash.ledger.storage.postgres import PostgresStore

        return PostgresStore(str(location).strip(), timeout=timeout)
    from dpdash.ledger.storage.sqlite import SQLiteStore

    return SQLiteStore(Path(location).expanduser(), timeout=timeout)
