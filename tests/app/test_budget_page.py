"""AppTest of the Budget page: totals under every accountant, group privacy, export and a refused import."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget, event_for
from dpdash.ledger import Ledger
from dpdash.mechanisms import Geometric
from tests.app.conftest import example_identity

if TYPE_CHECKING:
    from tests.servers import PostgresServer

APP = Path(__file__).resolve().parents[2] / "app.py"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(
            name="patients", fingerprint=example_identity(), budget=Budget(2.0, 1e-6)
        )
        for epsilon in (0.1, 0.2, 0.3):
            ledger.spend(ds, event_for(Geometric(epsilon=epsilon, sensitivity=1), query="count"))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page("pages/budget.py").run()
    return at


def test_budget_page_shows_every_accountant_and_the_log(app: AppTest) -> None:
    assert not app.exception, [e.value for e in app.exception]
    totals = app.dataframe[0].value.set_index("accountant")
    assert totals.loc["basic", "total ε"] == pytest.approx(0.6)
    assert totals.loc["tightest", "total ε"] <= totals.loc["basic", "total ε"] + 1e-12
    assert len(app.dataframe[1].value) == 3
    assert [m.value for m in app.metric if m.label == "releases"] == ["3"]


def test_group_privacy_scales_the_totals(app: AppTest) -> None:
    app.number_input(key="budget_group").set_value(3).run()
    totals = app.dataframe[0].value.set_index("accountant")
    assert totals.loc["basic", "total ε"] == pytest.approx(1.8)


def test_session_filter_shows_only_this_sessions_releases(app: AppTest) -> None:
    app.toggle(key="budget_this_session").set_value(True).run()
    assert not app.exception
    assert len(app.dataframe[1].value) == 0  # the fixture's releases were made outside this session
    assert [m.value for m in app.metric if m.label == "releases"] == ["3"]  # totals still cover all


def test_bad_imports_are_refused_and_the_ledger_is_unchanged(app: AppTest) -> None:
    """A file that is not JSON, and this table's own export with its budget edited: each refused with a
    readable message, nothing written to the ledger (the same entries after), the page still there."""
    import json

    with Ledger() as ledger:  # the fixture's, named by DPDASH_LEDGER
        (record,) = ledger.datasets()
        before = ledger.entries(record)
        export = json.loads(ledger.export_json(record))
    export["dataset"]["budget"]["epsilon"] = 1000.0  # tampered: a bigger budget than registered
    uploads = [
        ("notes.json", b"these are not the releases you are looking for", "the export is not JSON"),
        ("tampered.json", json.dumps(export).encode(), "it was changed after it was signed"),
    ]
    for name, content, why in uploads:
        app.file_uploader(key="budget_import").set_value((name, content, "application/json")).run()
        assert not app.exception, [e.value for e in app.exception]
        (error,) = [e.value.replace("\\", "") for e in app.error]
        assert error.startswith("Not imported (the ledger is unchanged): ") and why in error, (name, error)
        with Ledger() as ledger:
            assert ledger.entries(record) == before, name
    assert [m.value for m in app.metric if m.label == "releases"] == ["3"]


def test_the_signing_keys_section_shows_this_ledgers_key_and_trusts_another(
    app: AppTest, tmp_path: Path
) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        own = ledger.public_key
    assert any(c.value == own for c in app.code)
    app.text_input(key="budget_trust_key").set_value("ed25519:not-a-key").run()
    app.button(key="budget_trust_button").click().run()
    assert not app.exception
    assert any("Not trusted" in e.value and "64 hex digits" in e.value for e in app.error)
    other = "ed25519:" + "ab" * 32
    app.text_input(key="budget_trust_key").set_value(other).run()
    app.text_input(key="budget_trust_label").set_value("the other office").run()
    app.button(key="budget_trust_button").click().run()
    assert not app.exception and not app.error
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        assert ledger.trusted_keys() == {other: "the other office"}


def test_the_budget_page_on_a_postgresql_ledger(
    postgres: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DPDASH_LEDGER=postgresql://... (issue 16): the same page, the ledger named without its password."""
    from psycopg import sql

    password = "budget-page:secret/%"
    postgres.execute("DROP DATABASE IF EXISTS budget_page WITH (FORCE)")
    postgres.execute("DROP ROLE IF EXISTS budget_page")
    postgres.execute(sql.SQL("CREATE ROLE budget_page LOGIN PASSWORD {}").format(sql.Literal(password)))
    postgres.execute("CREATE DATABASE budget_page OWNER budget_page")
    url = postgres.url("budget_page", password, "budget_page")
    monkeypatch.setenv("DPDASH_LEDGER", url)
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "workspace"))
    with Ledger(url) as ledger:
        ds = ledger.add_dataset(
            name="patients", fingerprint=example_identity(), budget=Budget(2.0, 1e-6)
        )
        ledger.spend(ds, event_for(Geometric(epsilon=0.25, sensitivity=1), query="count"))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page("pages/budget.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.dataframe[0].value.set_index("accountant").loc["basic", "total ε"] == pytest.approx(0.25)
    shown = " ".join(str(c.value) for c in at.caption)
    assert "ledger: `postgresql://budget_page@127.0.0.1:" in shown
    assert "secret" not in shown and "secret" not in " ".join(str(c.value) for c in at.code)


def test_who_did_what_lists_the_actions_newest_first_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Budget page lists the table's actions (newest first, who, what, a summary), every user text
    escaped; the page's own writes are recorded by the acting user ("local owner"), and showing the page
    records nothing (the export is made, and recorded, only on the click)."""
    from tests.app.test_hostile_names import active_markup
    from ui.text import md

    hostile = "![x](http://127.0.0.1:9/who.png) <img src=x> :red[boss]"
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(name="patients", fingerprint=example_identity(),
                                budget=Budget(2.0, 1e-6), user="ana@example.org")  # fmt: skip
        ledger.spend(ds, event_for(Geometric(epsilon=0.1, sensitivity=1), query="count"), user=hostile)
        ledger.record_action("load", user="bo", dataset=ds, details={"name": "[n](http://127.0.0.1:9/n)"})
        export = ledger.export_json(ds)  # signed by this ledger: its import is trusted
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page("pages/budget.py").run()
    assert not at.exception, [e.value for e in at.exception]
    (listing,) = [m.value for m in at.markdown if " UTC · " in m.value]
    lines = listing.splitlines()
    assert len(lines) == 4 and [line.split("·")[2].split(":")[0].strip() for line in lines] == [
        "export", "load", "release", "budget"
    ]  # fmt: skip
    assert f"**{md(hostile)}**" in lines[2] and md("ana@example.org") in lines[3]
    assert active_markup(listing) == []
    at.file_uploader(key="budget_import").set_value(("e.json", export.encode(), "application/json")).run()
    assert not at.exception and not at.error
    at.text_input(key="budget_trust_key").set_value("ed25519:" + "cd" * 32).run()
    at.button(key="budget_trust_button").click().run()
    with Ledger(path) as ledger:
        assert [(a.action, a.user) for a in ledger.actions()[4:]] == [("import", "local owner"),
                                                                     ("trust", "local owner")]  # fmt: skip
    (listing,) = [m.value for m in at.markdown if " UTC · " in m.value]
    assert "**local owner** · import" in listing.splitlines()[0]


def test_an_export_that_cannot_be_signed_says_why_before_the_click(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger whose signing key lives in a file (set up by an administrator) with no key file given: the
    owner reads what to set instead of an export button that would fail on the click."""
    import sqlite3

    from dpdash.ledger.signing import KEY_FILE_VARIABLE
    from dpdash.ledger.storage.base import PUBLIC_KEY

    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    monkeypatch.delenv(KEY_FILE_VARIABLE, raising=False)
    with Ledger(path) as ledger:
        ledger.add_dataset(
            name="patients", fingerprint=example_identity(), budget=Budget(2.0, 1e-6)
        )
        own = ledger.public_key
    with sqlite3.connect(path) as conn:  # what the setup leaves: the public key only
        conn.execute("DELETE FROM meta WHERE key = 'signing_key'")
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (PUBLIC_KEY, own))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page("pages/budget.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(KEY_FILE_VARIABLE in w.value.replace("\\", "") and "No export" in w.value for w in at.warning)
    assert not [b for b in at.get("download_button") if b.proto.label.startswith("Export")]



def test_the_report_downloads_as_html_and_pdf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: AppTest
) -> None:
    """Both are made on the click: AppTest sees the buttons (the PDF itself: test_browser_report.py)."""
    chromium = tmp_path / "chromium"  # an executable is all the page looks for; it runs only on a click
    chromium.write_text("#!/bin/sh\nexit 1\n")
    chromium.chmod(0o755)
    monkeypatch.setenv("DPDASH_CHROMIUM", str(chromium))
    app.run()
    assert not app.exception
    labels = {b.key: b.label for b in app.download_button}
    assert labels["budget_report"] == "Stakeholder report (one-page HTML)"
    assert labels["budget_report_pdf"] == "Download PDF"


def test_without_chromium_the_pdf_button_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: AppTest
) -> None:
    missing = tmp_path / "no-chromium"
    monkeypatch.setenv("DPDASH_CHROMIUM", str(missing))
    app.run()
    assert not app.exception
    assert "budget_report_pdf" not in {b.key for b in app.download_button}
    button = app.button(key="budget_report_pdf")
    assert button.disabled and button.label == "Download PDF (no Chromium on this server)"
    said = " ".join(c.value for c in app.caption).replace("\\", "")
    assert f"No PDF: Chromium was not found at {missing}" in said and "DPDASH_CHROMIUM" in said
    assert "budget_report" in {b.key for b in app.download_button}  # the HTML report is still there
