"""AppTest of the Planner page."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget, event_for
from dpdash.datasets import PublicFacts
from dpdash.facts import Facts
from dpdash.ledger import Ledger, fingerprint
from dpdash.mechanisms import Geometric
from dpdash.release import dataset_fingerprint
from tests.app.conftest import example_identity

APP = Path(__file__).resolve().parents[2] / "app.py"


def _app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spent: float) -> AppTest:
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(name="patients", fingerprint=example_identity(),
                                budget=Budget(1.0, 1e-6), accountant="basic")  # fmt: skip
        if spent:
            ledger.spend(ds, event_for(Geometric(epsilon=spent, sensitivity=1), query="count"))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.switch_page("pages/planner.py").run()
    return at


def test_plan_fits_and_shares_the_remaining_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _app(tmp_path, monkeypatch, spent=0.2)
    assert not at.exception, [e.value for e in at.exception]
    assert any("The plan fits" in s.value for s in at.success)
    plan = at.dataframe[1].value
    # The starting plan comes from the table's declared facts: 4 rows of weight 1 share the 0.8 left.
    assert plan["query"].tolist() == [
        "count of rows", "histogram of diabetes", "histogram of age (10 bins)", "sum of age",
    ]  # fmt: skip
    assert plan["ε"].sum() == pytest.approx(0.8)  # basic: the unlocked rows share the 0.8 left
    assert plan["ε"].tolist() == pytest.approx([0.2, 0.2, 0.2, 0.2])
    assert [m.value for m in at.metric] == ["4"]  # 4 more counts at ε = 0.2 fit the 0.8 left


def test_an_exhausted_budget_plans_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _app(tmp_path, monkeypatch, spent=1.0)
    assert not at.exception, [e.value for e in at.exception]
    assert any("Nothing remains of this table's budget" in e.value for e in at.error)
    assert not at.dataframe  # no plan drawn


def _other_table(at: AppTest, data: pd.DataFrame, facts: PublicFacts, path: Path) -> None:
    """Make ``data`` the active table (as the Data page does after an upload) with a budget."""
    from ui.state import ActiveTable

    with Ledger(path) as ledger:
        ledger.add_dataset(
            name="mine", fingerprint=fingerprint(data), budget=Budget(1.0, 1e-6), accountant="basic"
        )
    at.session_state["dpdash_dataset"] = ActiveTable(
        "mine.csv", "upload 'mine.csv'", data, facts, dataset_fingerprint(data), fingerprint(data)
    )


def test_another_table_gets_its_own_plan_not_the_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(tmp_path, monkeypatch, spent=0.0)
    data = pd.DataFrame({"weight": [60.5, 72.1, 80.0] * 10, "smoker": ["yes", "no", "no"] * 10})
    facts = PublicFacts(bounds={"weight": (30, 200)}, categories={"smoker": ("yes", "no")}, unit=Facts())
    _other_table(at, data, facts, tmp_path / "ledger.sqlite")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    plan = at.dataframe[1].value
    assert plan["query"].tolist() == [
        "count of rows", "histogram of smoker", "histogram of weight (10 bins)", "sum of weight",
    ]  # fmt: skip
    assert not any("patients" in q or "diagnosis" in q or "income" in q for q in plan["query"])
    rows = at.dataframe[0].value  # the plan as entered
    assert rows["answers k"].tolist() == [1, 3, 11, 1] and rows["sensitivity"].tolist()[-1] == 200.0


def test_a_table_without_facts_starts_empty_with_a_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(tmp_path, monkeypatch, spent=0.0)
    data = pd.DataFrame({"x": [1, 2, 3]})
    _other_table(at, data, PublicFacts(unit=Facts(neighbours="substitute")), tmp_path / "ledger.sqlite")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Nothing is planned yet" in i.value for i in at.info)
    assert any("Add a planned release" in i.value for i in at.info)  # the editor is empty: nothing to fit


def test_a_mean_added_from_a_query_shows_its_combined_plus_minus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(tmp_path, monkeypatch, spent=0.0)
    at.selectbox(key="planner_kind").set_value("Mean").run()
    at.button(key="planner_add").click().run()
    assert not at.exception, [e.value for e in at.exception]
    rows = at.dataframe[0].value
    assert rows["query"].tolist()[-2:] == ["mean of age: sum", "mean of age: count"]
    assert rows["weight"].tolist()[-2:] == [0.5, 0.5]  # the mean's split of ε
    combined = next(d.value for d in at.dataframe if list(d.value.columns) == ["query", "ε", "±", "how"])
    assert combined["query"].tolist() == ["mean of age"] and combined["±"].iloc[0] > 0
    assert combined["how"].iloc[0].startswith("simulated: 4,000 seeded draws, Monte Carlo error")


def test_weighted_cells_are_planned_with_continuous_noise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under weighted bounding a histogram's cells are fractional: the starting plan gives them Laplace
    noise, which a release accepts, while the count of rows (Σ min(n, c), whole) keeps geometric."""
    at = _app(tmp_path, monkeypatch, spent=0.0)
    data = pd.DataFrame({"pid": [1, 1, 2] * 10, "smoker": ["yes", "no", "no"] * 10, "weight": [60.0] * 30})
    unit = Facts(rows_per_person=2, id_column="pid", bounding="weight")
    facts = PublicFacts(bounds={"weight": (30, 200)}, categories={"smoker": ("yes", "no")}, unit=unit)
    _other_table(at, data, facts, tmp_path / "ledger.sqlite")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    rows = at.dataframe[0].value
    assert rows["mechanism"].tolist() == ["geometric", "laplace", "laplace", "laplace"]
