"""Accounting tests never touch the real ledger: ``DPDASH_LEDGER`` points into the test's tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_ledger_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "default-ledger.sqlite"))
