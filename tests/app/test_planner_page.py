"""AppTest of the Planner page."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget, Ledger, event_for, fingerprint
from dpdash.datasets import synthetic_patients
from dpdash.mechanisms import Geometric

APP = Path(__file__).resolve().parents[2] / "app.py"


def _app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spent: float) -> AppTest:
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(name="patients", fingerprint=fingerprint(synthetic_patients().data),
                                budget=Budget(1.0, 1e-6), accountant="basic")  # fmt: skip
        if spent:
            ledger.spend(ds, event_for(Geometric(epsilon=spent, sensitivity=1), query="count"))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.switch_page("app_pages/planner.py").run()
    return at


def test_plan_fits_and_shares_the_remaining_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _app(tmp_path, monkeypatch, spent=0.2)
    assert not at.exception, [e.value for e in at.exception]
    assert any("The plan fits" in s.value for s in at.success)
    plan = at.dataframe[1].value
    assert plan["ε"].sum() == pytest.approx(0.8)  # basic: the unlocked rows share the 0.8 left, 1:2:1
    assert plan["ε"].tolist() == pytest.approx([0.2, 0.4, 0.2])
    assert [m.value for m in at.metric] == ["4"]  # 4 more counts at ε = 0.2 fit the 0.8 left


def test_an_exhausted_budget_plans_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _app(tmp_path, monkeypatch, spent=1.0)
    assert not at.exception, [e.value for e in at.exception]
    assert any("Nothing remains of this table's budget" in e.value for e in at.error)
    assert not at.dataframe  # no plan drawn
