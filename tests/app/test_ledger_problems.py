"""AppTest: a broken ledger is a message on every page, never a traceback (issue 12, items 8 and 9).

Each case damages the ledger the way a person or another program does (a path under a regular file, an
entry another SQLite client wrote badly, a read-only file, a ledger deleted while the app has it open), then
visits the pages: no exception, a message that says what is wrong, and nothing recorded.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget, event_for
from dpdash.ledger import Ledger
from dpdash.mechanisms import Geometric
from tests.accounting.test_ledger_file import remove_ledger_files, unwritable
from tests.app.conftest import example_identity
from ui.text import md

APP = Path(__file__).resolve().parents[2] / "app.py"
PAGES = [
    "pages/home.py",
    "pages/data.py",
    "pages/explorer.py",
    "pages/release.py",
    "pages/budget.py",
    "pages/planner.py",
    "pages/risk.py",
    "pages/audit.py",
]


def messages(app: AppTest) -> str:
    return " ".join(e.value for e in [*app.error, *app.warning, *app.info])


def visit_every_page(app: AppTest) -> dict[str, str]:
    """Each page's error/warning/info text; fails on any exception."""
    seen = {}
    for page in PAGES:
        app.switch_page(page).run()
        assert not app.exception, (page, [e.value for e in app.exception])
        seen[page] = messages(app)
    return seen


@pytest.fixture
def ledger_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ledger with the patients example registered and one release; DPDASH_LEDGER points at it."""
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(
            name="patients", fingerprint=example_identity(), budget=Budget(2.0, 1e-6)
        )
        ledger.spend(ds, event_for(Geometric(epsilon=0.1, sensitivity=1), query="count"))
    return path


def start() -> AppTest:
    app = AppTest.from_file(str(APP), default_timeout=90)
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_a_ledger_path_under_a_regular_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "plain").write_text("a file")
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "plain" / "ledger.sqlite"))
    seen = visit_every_page(start())
    for page in ("pages/data.py", "pages/release.py", "pages/budget.py", "pages/planner.py"):
        assert md("is a file, not a folder") in seen[page], page


def test_an_entry_written_badly_by_another_client(ledger_path: Path) -> None:
    with sqlite3.connect(ledger_path) as conn:
        conn.execute(
            "INSERT INTO entries (uid, dataset_id, session_id, created_at, query, mechanism, event) "
            "VALUES ('bad-entry', 1, NULL, '2026-01-01', 'q', 'm', '{broken')"
        )
    seen = visit_every_page(start())
    for page in ("pages/release.py", "pages/budget.py", "pages/planner.py", "pages/risk.py"):
        assert md("unreadable entry bad-entry") in seen[page], page


@contextlib.contextmanager
def released_setup(app: AppTest) -> Iterator[None]:
    """Walk the Query & release page up to the confirmation of a count release."""
    app.switch_page("pages/release.py").run()
    app.button(key="release_button").click().run()
    assert not app.exception
    yield


def test_a_read_only_ledger_shows_the_budget_and_refuses_the_release(ledger_path: Path) -> None:
    with unwritable(ledger_path):
        app = start()
        app.switch_page("pages/budget.py").run()
        assert not app.exception and not app.error
        with released_setup(app):
            app.button(key="release_confirm").click().run()
        assert not app.exception
        assert any("Not released" in e.value and md("read-only") in e.value for e in app.error)
    with Ledger(ledger_path) as ledger:
        assert len(ledger.datasets()) == 1
        assert ledger.status(ledger.datasets()[0]).entries == 1


def test_a_ledger_deleted_while_the_app_has_it_open(ledger_path: Path) -> None:
    app = start()
    app.switch_page("pages/budget.py").run()
    assert not app.error
    with released_setup(app):
        remove_ledger_files(ledger_path)
        app.button(key="release_confirm").click().run()
    assert not app.exception
    assert any("was deleted while it was open" in e.value for e in app.error)
    seen = visit_every_page(app)
    assert "was deleted while it was open" in seen["pages/budget.py"]
    assert not ledger_path.exists()  # nothing was written to a new, empty ledger either
