"""AppTest (issue 16): the app on a PostgreSQL ledger whose server is killed (``pg_ctl stop -m immediate``)
says so on every page, with no traceback and nothing spent, and works again once the server is back."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from streamlit.testing.v1 import AppTest

from dpdash.ledger import Ledger
from tests.app.conftest import PG_LEDGER_PASSWORD, budgeted_app

if TYPE_CHECKING:
    from tests.servers import PostgresServer

PAGES = ("pages/data.py", "pages/release.py", "pages/budget.py", "pages/datasets.py", "pages/planner.py")


def release_count(at: AppTest) -> None:
    at.switch_page("pages/release.py").run()
    at.button(key="release_button").click().run()
    at.button(key="release_confirm").click().run()


def test_a_killed_ledger_server_is_said_and_survived(
    postgres: PostgresServer, pg_ledger_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = budgeted_app(pg_ledger_url, tmp_path, monkeypatch)
    release_count(at)
    assert not at.exception and not at.error, [e.value for e in at.error]

    postgres.stop("immediate")
    try:
        for page in PAGES:
            at.switch_page(page).run()
            assert not at.exception, (page, [e.value for e in at.exception])
            shown = " ".join(e.value for e in [*at.error, *at.warning]).replace("\\", "")
            assert "ledger" in shown.lower(), (page, shown)
            assert PG_LEDGER_PASSWORD not in shown  # the password never shows
    finally:
        postgres.start()

    release_count(at)  # the same session, once the server is back
    assert not at.exception and not at.error, [e.value for e in at.error]
    with Ledger(pg_ledger_url) as ledger:
        (dataset,) = ledger.datasets()
        assert ledger.status(dataset).entries == 2
