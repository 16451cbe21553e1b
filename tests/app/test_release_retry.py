"""AppTest (issue 16): a release whose commit may have been lost is sent again as it was, under the same
request id, so the budget is spent once and what the page shows is what the ledger recorded; a release
refused for good (the budget) is drawn anew on the next try."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpdash.errors import LedgerError
from dpdash.ledger import Ledger
from tests.app.conftest import budgeted_app


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    at = budgeted_app(tmp_path / "ledger.sqlite", tmp_path, monkeypatch)
    at.switch_page("pages/release.py").run()
    assert not at.exception
    return at


def test_a_lost_commit_is_sent_again_and_spends_once(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str | None, tuple[object, ...]]] = []
    real = Ledger.spend_release

    def lost_once(self, dataset, release, **kwargs):  # type: ignore[no-untyped-def]
        calls.append((kwargs.get("request_id"), release.values))
        entries = real(self, dataset, release, **kwargs)
        if len(calls) == 1:  # recorded, but the answer never arrives
            raise LedgerError("the connection to the ledger was lost while committing: it may or may not "
                              "have been recorded")  # fmt: skip
        return entries

    monkeypatch.setattr(Ledger, "spend_release", lost_once)
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert "may or may not" in app.error[0].value.replace("\\", "")
    assert "release_last" not in app.session_state  # nothing shown as released yet
    app.run()
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    (first_id, first_values), (second_id, second_values) = calls
    assert first_id is not None and first_id == second_id and first_values == second_values  # sent as it was
    ledger = Ledger()
    (dataset,) = ledger.datasets()
    assert ledger.status(dataset).entries == 1  # spent once
    (published,) = ledger.published(dataset).values()
    assert tuple(published["values"]) == app.session_state["release_last"].values  # shown = recorded


def test_a_refused_release_is_drawn_anew(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    ids: list[str | None] = []
    real = Ledger.spend_release

    def refuse_once(self, dataset, release, **kwargs):  # type: ignore[no-untyped-def]
        ids.append(kwargs.get("request_id"))
        if len(ids) == 1:
            from dpdash.errors import BudgetExceededError

            raise BudgetExceededError("refused: over the budget")
        return real(self, dataset, release, **kwargs)

    monkeypatch.setattr(Ledger, "spend_release", refuse_once)
    for _ in range(2):
        app.run()
        app.button(key="release_button").click().run()
        app.button(key="release_confirm").click().run()
    assert len(ids) == 2 and ids[0] != ids[1]  # a new request: the refused draw was never recorded
    (dataset,) = Ledger().datasets()
    assert Ledger().status(dataset).entries == 1
