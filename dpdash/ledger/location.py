"""Where the ledger is: ``$DPDASH_LEDGER`` (a file path or a PostgreSQL URL), else a file in dpdash's folder
on this machine. Read by the ledger, the workspace and the engines (which refuse the ledger's own server as
a source), so it imports nothing of theirs."""

from __future__ import annotations

import os
from pathlib import Path

from dpdash.errors import LedgerError
from dpdash.pg_urls import is_url, redact

__all__ = ["default_ledger_location", "default_ledger_path", "local_data_folder"]


def default_ledger_location() -> str | Path:
    """What ``Ledger()`` opens: ``$DPDASH_LEDGER`` (a file path, or a ``postgresql://`` URL, returned as
    text); else ``$XDG_DATA_HOME/dpdash/ledger.sqlite``; else ``~/.local/share/dpdash/ledger.sqlite``."""
    configured = os.environ.get("DPDASH_LEDGER", "").strip()
    if is_url(configured):
        return configured
    if configured:
        return Path(configured).expanduser()
    return local_data_folder() / "ledger.sqlite"


def default_ledger_path() -> Path:
    """The ledger file ``Ledger()`` opens: ``$DPDASH_LEDGER``; else ``$XDG_DATA_HOME/dpdash/ledger.sqlite``;
    else ``~/.local/share/dpdash/ledger.sqlite``.

    Raises:
        LedgerError: ``$DPDASH_LEDGER`` names a PostgreSQL ledger, which is not a file
            (``default_ledger_location``).
    """
    location = default_ledger_location()
    if isinstance(location, str):
        raise LedgerError(
            f"DPDASH_LEDGER names a PostgreSQL ledger ({redact(location)}), not a file; open it with "
            "Ledger() or Ledger(url)"
        )
    return location


def local_data_folder() -> Path:
    """dpdash's folder on this machine: ``$XDG_DATA_HOME/dpdash``, else ``~/.local/share/dpdash``."""
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "dpdash"
