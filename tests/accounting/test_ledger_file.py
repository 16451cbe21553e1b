"""The ledger's file: history is never lost in silence, and every file problem is a message, not a traceback.

Issue 12, items 8 and 9: a ledger truncated to 0 bytes or deleted must not come back as a new, empty one; a
ledger deleted or replaced while open must refuse spends instead of committing them to a deleted file; a
read-only file or folder, a path under a regular file, and an entry another client wrote badly each give a
``LedgerError`` that says what is wrong.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpdash.accounting import Budget, LaplaceEvent
from dpdash.ledger import Ledger, LedgerError
from dpdash.ledger.ledger_file import marker_path

FINGERPRINT = "sha256:file-tests"
EVENT = LaplaceEvent(epsilon=0.1, sensitivity=1.0, query="count")


def make_ledger(path: Path, spends: int = 1) -> None:
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(name="t", fingerprint=FINGERPRINT, budget=Budget(1.0), accountant="basic")
        for _ in range(spends):
            ledger.spend(ds, EVENT)


def remove_ledger_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            path.with_name(path.name + suffix).unlink()


@contextlib.contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """Make ``path`` (a file or a folder) unwritable for this process: ``chattr +i`` as root (permission
    bits do not bind root; the immutable flag does), ``chmod`` otherwise."""
    if os.geteuid() == 0:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot make {path} immutable here: {done.stderr.strip()}")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)


# ---- history never comes back empty ------------------------------------------------------------------


def test_a_new_ledger_leaves_a_marker(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    make_ledger(path, spends=0)
    record = json.loads(marker_path(path).read_text())
    with sqlite3.connect(path) as conn:
        ledger_id = dict(conn.execute("SELECT key, value FROM meta").fetchall())["ledger_id"]
    assert record["ledger_id"] == ledger_id


def test_a_ledger_truncated_to_zero_bytes_is_refused_loudly(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    make_ledger(path)
    remove_ledger_files(path)
    path.write_bytes(b"")
    with pytest.raises(LedgerError, match=r"is empty \(0 bytes\).*history of spent budget may have been"):
        Ledger(path)
    assert path.read_bytes() == b""  # left as it was: nothing written over it


def test_a_deleted_ledger_is_refused_loudly_until_the_marker_is_removed(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    make_ledger(path)
    remove_ledger_files(path)
    with pytest.raises(LedgerError, match=r"is missing.*delete .*dpdash-id"):
        Ledger(path)
    assert not path.exists()
    marker_path(path).unlink()  # starting afresh on purpose
    with Ledger(path) as ledger:
        assert ledger.datasets() == []


def test_a_ledger_replaced_by_another_is_refused(tmp_path: Path) -> None:
    path, other = tmp_path / "ledger.sqlite", tmp_path / "other" / "ledger.sqlite"
    make_ledger(path)
    make_ledger(other, spends=0)
    remove_ledger_files(path)
    shutil.copyfile(other, path)
    with pytest.raises(LedgerError, match="holds another ledger"):
        Ledger(path)


def test_a_ledger_from_before_ledger_ids_gets_a_marker(tmp_path: Path) -> None:
    """Ledgers written before this change have no ledger_id: they are known by their creation time."""
    path = tmp_path / "ledger.sqlite"
    make_ledger(path)
    marker_path(path).unlink()
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM meta WHERE key IN ('ledger_id', 'signing_key')")
        created = dict(conn.execute("SELECT key, value FROM meta").fetchall())["created_at"]
    with Ledger(path) as ledger:
        assert len(ledger.entries(FINGERPRINT)) == 1
    assert json.loads(marker_path(path).read_text())["ledger_id"] == f"created-{created}"
    remove_ledger_files(path)
    with pytest.raises(LedgerError, match="is missing"):
        Ledger(path)


@pytest.mark.parametrize("damage", ["deleted", "replaced", "truncated"])
def test_a_ledger_changed_under_an_open_handle_refuses_spends(tmp_path: Path, damage: str) -> None:
    """The handle's file is deleted, replaced or truncated while it is open: its next spend is refused
    (nothing "committed" to a deleted file), and so are its reads."""
    path = tmp_path / "ledger.sqlite"
    make_ledger(path)
    ledger = Ledger(path)
    try:
        if damage == "deleted":
            remove_ledger_files(path)
        elif damage == "replaced":
            make_ledger(tmp_path / "b" / "l.sqlite", spends=0)
            os.replace(tmp_path / "b" / "l.sqlite", path)
        else:
            with open(path, "r+b") as handle:
                handle.truncate(0)
        with pytest.raises(LedgerError, match=f"was {damage}.*Nothing was recorded"):
            ledger.spend(FINGERPRINT, EVENT)
        with pytest.raises(LedgerError, match=f"was {damage}"):
            ledger.status(FINGERPRINT)
    finally:
        ledger.close()
    if damage == "deleted":
        assert not path.exists()


# ---- file problems are messages ------------------------------------------------------------------------


def test_a_read_only_ledger_can_be_read_and_refuses_spends_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    make_ledger(path)
    with unwritable(path), Ledger(path) as ledger:
        assert ledger.status(FINGERPRINT).entries == 1
        with pytest.raises(LedgerError, match=r"read-only.*Nothing was recorded.*writable"):
            ledger.spend(FINGERPRINT, EVENT)
    with Ledger(path) as ledger:
        assert ledger.status(FINGERPRINT).entries == 1


def test_an_unwritable_folder_is_reported_as_such_not_as_corruption(tmp_path: Path) -> None:
    folder = tmp_path / "frozen"
    path = folder / "ledger.sqlite"
    make_ledger(path)
    with unwritable(folder):
        try:
            ledger = Ledger(path)
        except LedgerError as error:
            assert "cannot be written" in str(error) and "corrupt" not in str(error)
        else:
            with ledger, pytest.raises(LedgerError, match=r"cannot be written|read-only") as caught:
                ledger.spend(FINGERPRINT, EVENT)
            assert "corrupt" not in str(caught.value)
    with Ledger(path) as ledger:
        assert ledger.status(FINGERPRINT).entries == 1


def test_a_new_ledger_in_an_unwritable_folder_is_a_message(tmp_path: Path) -> None:
    folder = tmp_path / "frozen"
    folder.mkdir()
    with unwritable(folder), pytest.raises(LedgerError, match="writable"):
        Ledger(folder / "ledger.sqlite")


@pytest.mark.parametrize("under", ["file", "file/deeper"])
def test_a_ledger_path_under_a_regular_file_is_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, under: str
) -> None:
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / under / "ledger.sqlite"))
    with pytest.raises(LedgerError, match="is a file, not a folder"):
        Ledger()


def test_a_ledger_path_that_is_a_folder_is_a_message(tmp_path: Path) -> None:
    with pytest.raises(LedgerError, match="is a folder"):
        Ledger(tmp_path)


@pytest.mark.parametrize(
    "event_text",
    ["{not json", "[1, 2]", '{"type": "laplace"}', '"text"', "null", "[" * 100_000 + "]" * 100_000],
)
def test_an_entry_written_badly_by_another_client_is_a_message(tmp_path: Path, event_text: str) -> None:
    path = tmp_path / "ledger.sqlite"
    make_ledger(path)
    with sqlite3.connect(path) as conn:  # another SQLite client appends an entry (triggers allow INSERT)
        conn.execute(
            "INSERT INTO entries (uid, dataset_id, session_id, created_at, query, mechanism, event) "
            "VALUES ('bad', 1, NULL, '2026-01-01', 'q', 'm', ?)",
            (event_text,),
        )
    with Ledger(path) as ledger:
        for read in (ledger.entries, ledger.status, ledger.export_json):
            with pytest.raises(LedgerError, match="unreadable entry bad"):
                read(FINGERPRINT)
        with pytest.raises(LedgerError, match="unreadable entry bad"):
            ledger.spend(FINGERPRINT, EVENT)
