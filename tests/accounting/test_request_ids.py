"""Request ids in an SQLite ledger made before them (schema 3): upgraded when it can be written, refused
with a message when it cannot. What request ids do on every storage is in test_ledger_contract.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dpdash.accounting import Budget, LaplaceEvent
from dpdash.ledger import Ledger, LedgerError
from dpdash.ledger.storage.base import SCHEMA_VERSION
from tests.accounting.test_ledger_file import unwritable

FP = "sha256:requests"
EVENT = LaplaceEvent(epsilon=0.1, sensitivity=1.0)


def _as_schema_3(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE requests")
    conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()


def _made(path: Path) -> None:
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(name="r", fingerprint=FP, budget=Budget(1.0), accountant="basic")
        ledger.spend(ds, EVENT)
    _as_schema_3(path)


def test_a_schema_3_ledger_is_upgraded_and_keeps_its_history(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    _made(path)
    with Ledger(path) as ledger:
        entry = ledger.spend(FP, EVENT, request_id="r")
        assert ledger.spend(FP, EVENT, request_id="r") == entry and len(ledger.entries(FP)) == 2
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    with pytest.raises(sqlite3.DatabaseError, match="append-only: requests cannot be deleted"):
        conn.execute("DELETE FROM requests")
    conn.close()


def test_a_read_only_schema_3_ledger_reads_and_refuses_request_ids_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    _made(path)
    with unwritable(path), Ledger(path) as ledger:
        assert len(ledger.entries(FP)) == 1
        with pytest.raises(LedgerError, match=r"cannot record the request id: .* read-only at schema 3"):
            ledger.spend(FP, EVENT, request_id="r")
