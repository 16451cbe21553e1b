"""The first-run checklist on Home: each step's state follows the active table and the ledger."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget, LaplaceEvent
from dpdash.datasets import PublicFacts
from dpdash.facts import Facts
from dpdash.ledger import Ledger, fingerprint
from tests.app.conftest import example_identity

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _lines(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith(":material/")]


def _done(at: AppTest) -> list[bool]:
    return [line.startswith(":material/check_circle:") for line in _lines(at)]


def test_the_example_has_its_facts_but_no_budget_yet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert _done(at) == [True, True, True, False, False, False]
    assert any("3 of 6 steps done" in m.value for m in at.markdown)


def test_budget_preview_and_release_tick_their_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(
            name="patients", fingerprint=example_identity(), budget=Budget(2.0, 1e-6)
        )
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0, query="count"))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    assert _done(at) == [True] * 6, _lines(at)


def test_an_upload_starts_with_the_unit_and_facts_to_declare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    table = pd.DataFrame({"age": [30, 41, 52], "city": ["a", "b", "a"]})
    at.session_state["dpdash_dataset"] = _active(table, PublicFacts(unit=Facts()))
    at.run()
    assert _done(at) == [True, False, False, False, False, False], _lines(at)
    assert any("the default" in line and "check it" in line for line in _lines(at)), _lines(at)


def _active(data: pd.DataFrame, facts: PublicFacts):  # type: ignore[no-untyped-def]
    from dpdash.release import dataset_fingerprint
    from ui.state import ActiveTable

    return ActiveTable(
        "mine.csv", "upload 'mine.csv'", data, facts, dataset_fingerprint(data), fingerprint(data)
    )
