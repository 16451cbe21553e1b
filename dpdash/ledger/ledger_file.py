"""The ledger's file on disk: its folder, its identity while open, the marker that remembers it, and
SQLite's errors said in words a person can act on.

Two rules keep the history safe when several handles and processes share the file:

- The ledger file is only ever opened through SQLite. Closing *any* descriptor of a file drops every POSIX
  lock the process holds on it, the locks of its SQLite connections included (SQLite's "How To Corrupt An
  SQLite Database File", §2.2); another process then believes it is the last user, checkpoints and deletes
  the write-ahead log, and spends made through the first process's connections are lost. Nothing here opens
  the ledger file itself: ``os.stat`` needs no descriptor, and the marker is another file.
- A ledger that existed never comes back empty in silence. When a ledger is created, a marker file beside it
  (``<ledger>.dpdash-id``) records its id. Opening a path whose ledger is missing, empty (0 bytes, e.g.
  truncated) or another ledger while the marker names one is refused with ``LedgerError``. While a handle
  is open, every transaction first checks that the path is still the file it opened (same device and inode,
  not truncated), so a ledger deleted or replaced under a running app refuses spends instead of committing
  them to a deleted file.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dpdash.errors import LedgerError

__all__ = [
    "MARKER_SUFFIX",
    "FileIdentity",
    "file_identity",
    "marker_path",
    "prepare_folder",
    "read_marker",
    "refuse_lost_history",
    "sqlite_problem",
    "write_marker",
]

MARKER_SUFFIX = ".dpdash-id"
MOVE_AWAY = "The file was left unchanged; move it away or point DPDASH_LEDGER at another file."


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """Which file a path named when the ledger was opened: ``(device, inode)``."""

    device: int
    inode: int


def marker_path(path: Path) -> Path:
    """The marker beside the ledger: ``ledger.sqlite`` → ``ledger.sqlite.dpdash-id``."""
    return path.with_name(path.name + MARKER_SUFFIX)


def prepare_folder(path: Path) -> None:
    """Create the ledger's folder (mode 0700) if missing; refuse a path that is a folder or lies under a
    file, with a ``LedgerError`` that says what to change."""
    if path.is_dir():
        raise LedgerError(f"the ledger path {path} is a folder, not a file; point DPDASH_LEDGER at a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except (FileExistsError, NotADirectoryError):
        raise LedgerError(
            f"cannot use the ledger path {path}: a part of {path.parent} is a file, not a folder. Point "
            "DPDASH_LEDGER at a file in a folder."
        ) from None
    except OSError as error:
        raise LedgerError(
            f"cannot create the folder {path.parent} for the ledger: {error.strerror or error}. Point "
            "DPDASH_LEDGER at a file in a writable folder."
        ) from None


def file_identity(path: Path) -> FileIdentity | None:
    """The file ``path`` names now, or ``None`` if there is none (``os.stat``: no descriptor is opened)."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise LedgerError(f"cannot read the ledger {path}: {error.strerror or error}") from None
    return FileIdentity(stat.st_dev, stat.st_ino)


def file_size(path: Path) -> int | None:
    """The size of the file at ``path`` in bytes, or ``None`` if there is none."""
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return None
    except OSError as error:
        raise LedgerError(f"cannot read the ledger {path}: {error.strerror or error}") from None


def check_same_file(path: Path, opened: FileIdentity, *, may_be_empty: bool = False) -> None:
    """Refuse to go on if ``path`` is no longer the file that was opened (deleted, replaced, or truncated,
    unless ``may_be_empty``: a ledger being created)."""
    now = file_identity(path)
    restore = (
        "Nothing was recorded. Stop the app, restore the ledger from a backup (or re-import its exports), "
        "and open it again."
    )
    if now is None:
        raise LedgerError(f"the ledger {path} was deleted while it was open. {restore}")
    if now != opened:
        raise LedgerError(f"the ledger {path} was replaced by another file while it was open. {restore}")
    if not may_be_empty and file_size(path) == 0:
        raise LedgerError(f"the ledger {path} was truncated to 0 bytes while it was open. {restore}")


def read_marker(path: Path) -> dict[str, str] | None:
    """The marker's record ``{"ledger_id": ..., "created_at": ...}``, or ``None`` if there is no marker."""
    marker = marker_path(path)
    try:
        text = marker.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise LedgerError(f"cannot read the ledger's marker {marker}: {error}") from None
    try:
        record = json.loads(text)
        if not isinstance(record, dict) or not isinstance(record.get("ledger_id"), str):
            raise ValueError("no ledger_id")
    except ValueError:
        raise LedgerError(
            f"the ledger's marker {marker} is not readable; if the ledger {path} is the right one, delete "
            "the marker and open it again"
        ) from None
    return {"ledger_id": record["ledger_id"], "created_at": str(record.get("created_at", ""))}


def write_marker(path: Path, ledger_id: str, created_at: str) -> None:
    """Write the marker atomically (a temporary file renamed over it)."""
    marker = marker_path(path)
    record = {
        "ledger_id": ledger_id,
        "created_at": created_at,
        "about": (
            "dpdash remembers here that a budget ledger lives beside this file. If the ledger goes missing "
            "or comes back empty, dpdash refuses to start a new one in silence. Delete this file only to "
            "start a new, empty ledger on purpose."
        ),
    }
    try:
        handle, temporary = tempfile.mkstemp(prefix=marker.name, suffix=".tmp", dir=marker.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(record, out, indent=1)
        os.replace(temporary, marker)
    except OSError as error:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(temporary)
        raise LedgerError(
            f"cannot write the ledger's marker {marker}: {error.strerror or error}. The folder "
            f"{marker.parent} must be writable."
        ) from None


def refuse_lost_history(path: Path, marker: dict[str, str], what: str) -> LedgerError:
    """The error for a path whose ledger, named by the marker, is ``what`` (missing, empty, another)."""
    created = f", created {marker['created_at']}" if marker.get("created_at") else ""
    return LedgerError(
        f"the ledger {path} {what}, but {marker_path(path)} records that ledger {marker['ledger_id']}"
        f"{created} lived here: its history of spent budget may have been lost. Restore the ledger file from "
        "a backup (or re-import its exports into a new ledger). To start a new, empty ledger on purpose, "
        f"delete {marker_path(path)}."
    )


def folder_writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (tried for real: permission bits do not bind root, and
    an immutable or read-only-mounted folder refuses even root)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def sqlite_problem(error: sqlite3.Error, path: Path, doing: str) -> LedgerError:
    """SQLite's ``error`` while ``doing`` something with the ledger, as a ``LedgerError`` a person can act
    on: read-only file or folder, the write lock held too long, a full disk, or a damaged file."""
    name = getattr(error, "sqlite_errorname", "") or ""
    text = str(error)
    if name.startswith("SQLITE_READONLY") or "readonly" in text:
        if not folder_writable(path.parent):
            why = (
                f"its folder {path.parent} cannot be written (SQLite keeps {path.name}-wal and "
                f"{path.name}-shm beside the ledger)"
            )
        else:
            why = "the file is read-only"
        return LedgerError(
            f"cannot {doing}: the ledger {path} is read-only ({why}). Nothing was recorded. Make the file "
            "and its folder writable, or point DPDASH_LEDGER at a writable file."
        )
    if name in ("SQLITE_BUSY", "SQLITE_LOCKED") or "locked" in text:
        return LedgerError(
            f"cannot lock the ledger {path} to {doing}: another process held it for too long ({text}). "
            "Nothing was recorded; try again."
        )
    if name == "SQLITE_FULL" or "full" in text:
        return LedgerError(
            f"cannot {doing}: the disk holding the ledger {path} is full. Nothing was recorded."
        )
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_IOERR")) and not folder_writable(path.parent):
        return LedgerError(
            f"cannot {doing}: the folder {path.parent} cannot be written, and SQLite needs to create "
            f"{path.name}-wal and {path.name}-shm beside the ledger. Make the folder writable, or point "
            "DPDASH_LEDGER at a file in a writable folder."
        )
    if name == "SQLITE_NOTADB":
        return LedgerError(f"{path} is not a dpdash ledger: it is not an SQLite database. {MOVE_AWAY}")
    if name == "SQLITE_CORRUPT" or "malformed" in text:
        return LedgerError(f"the ledger {path} is corrupted ({text}). {MOVE_AWAY}")
    return LedgerError(f"cannot {doing} in the ledger {path}: {text}")
