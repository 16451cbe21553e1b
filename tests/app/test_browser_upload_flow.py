"""Real browser, issue 13's whole flow: an uploaded table's bounds, categories and unit of privacy, its
budget (confirmed, then the unit locked), a mean's ± before release, a mean and a numeric histogram
released, the downloaded script spending from the same ledger (and refused when the budget is short), a
reload and a server restart on the same ledger and workspace, a re-upload with another type choice,
switching to an example and back, and a new version flagged.

The table is written here (not an example): a person id column with people having one to four rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from dpdash.accounting import LaplaceEvent
from dpdash.ledger import Ledger, fingerprint
from dpdash.ledger.releases import release_count
from dpdash.loading import load_table
from tests.app.conftest import find_free_port, start_streamlit, stop_process, wait_until_idle

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

pytestmark = [pytest.mark.browser, pytest.mark.walk(60)]

NO_ID = "(none: each row is a person)"


def people(extra: int = 0) -> pd.DataFrame:
    """Twelve people with 1 to 4 visits each (``extra`` more people: a new version)."""
    rows = []
    for person in range(1, 13 + extra):
        for visit in range(1 + person % 4):
            rows.append({"person_id": person, "age": 20 + 3 * person, "city": ["Oslo", "Bergen"][person % 2],
                         "cost": 100 + 10 * visit})  # fmt: skip
    return pd.DataFrame(rows)


def keyed(page: Page, prefix: str) -> Locator:
    """The element of the widget whose key starts with ``prefix`` (Streamlit gives it an st-key- class)."""
    element = f"[data-testid='stElementContainer'][class*='st-key-{prefix}']"
    return page.locator(f"{element}:not([data-stale='true'])")


def edit_grid(page: Page, prefix: str, row: int, column: int, text: str, *, columns: int) -> None:
    """Type ``text`` into a cell of a data editor (a canvas grid: click the cell, type, Enter)."""
    grid = keyed(page, prefix).locator('[data-testid="stDataFrame"]')
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    header = row_height = 35
    width = box["width"] / columns  # the grids here stretch their columns evenly
    x = box["x"] + width * column + min(40, width / 2)
    y = box["y"] + header + row_height * row + row_height / 2
    editor = page.locator("#portal textarea, #portal input")
    page.mouse.click(x, y)  # focuses the grid and selects the cell
    page.wait_for_timeout(600)
    if not editor.count():
        page.keyboard.press("Enter")  # opens the selected cell's editor
        page.wait_for_timeout(300)
    if not editor.count():
        page.mouse.dblclick(x, y)
        page.wait_for_timeout(300)
    expect(editor.first).to_be_visible()
    page.keyboard.press("Control+a")
    page.keyboard.type(text, delay=30)
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)


def go(page: Page, title: str, marker: str) -> None:
    """To another page through the sidebar (the same browser session)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()
    expect(page.get_by_text(marker).first).to_be_visible(timeout=60_000)
    wait_until_idle(page)


def choose(page: Page, label: str, option: str) -> None:
    """Open the selectbox and type the option's name (a long list shows only its first options). If the
    option is not there, the list was that of a selectbox the last choice's rerun is replacing (its
    status widget had not yet appeared): close it, wait for the rerun, and open the new one once more."""
    for attempt in range(2):
        page.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
        page.keyboard.type(option, delay=20)
        try:
            page.get_by_role("option", name=option, exact=True).click(timeout=15_000)
            break
        except PlaywrightTimeout:
            if attempt:
                raise
            page.keyboard.press("Escape")
            wait_until_idle(page)
    wait_until_idle(page)


def release_now(page: Page, done: str) -> None:
    """Release… then Release now, once the run that shows the query is over (a click on a button that
    run replaces is lost); wait for the released result."""
    wait_until_idle(page)
    page.get_by_role("button", name="Release… (spends budget)").click()
    page.get_by_role("button", name="Release now").click()
    expect(page.get_by_text(done).first).to_be_visible(timeout=60_000)
    wait_until_idle(page)


def open_expander(page: Page, title: str) -> None:
    """Open the expander titled ``title``: a rerun that adds an element above it (an upload's "Same rows
    as …" notice comes with the rerun after the upload) mounts it anew, closed, so click until it stays
    open."""
    details = page.get_by_test_id("stExpander").filter(has_text=title).locator("details").first
    for _ in range(5):
        if details.get_attribute("open") is None:
            details.locator("summary").click()
        page.wait_for_timeout(800)
        wait_until_idle(page)
        if details.get_attribute("open") is not None:
            return
    expect(details).to_have_attribute("open", "")


def unit_shown(page: Page) -> tuple[str, str, bool]:
    """(person id column, c, locked) as the Data page shows them."""
    id_box = keyed(page, "data_id_column_")
    c_box = keyed(page, "data_rows_per_person_").locator("input")
    locked = c_box.is_disabled()
    id_input = id_box.locator("input")
    locked = locked and id_input.is_disabled()
    shown = id_input.input_value()
    return shown, c_box.input_value(), locked


def eventually(check, timeout_s: float = 30.0):  # type: ignore[no-untyped-def]
    """``check()``'s value once it is truthy (a rerun may still be on its way), polled for ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def stored_record(workspace: Path) -> dict:  # type: ignore[type-arg]
    """The workspace's record of its active table, read from disk."""
    active = json.loads((workspace / "active.json").read_text())["identity"]
    return json.loads((workspace / "tables" / active.split(":")[-1] / "table.json").read_text())


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "workspace"))
    return tmp_path


def test_an_upload_keeps_its_facts_and_budget_through_reloads_restarts_and_reuploads(
    browser: Browser, env: Path
) -> None:
    csv = env / "visits.csv"
    people().to_csv(csv, index=False)
    server = start_streamlit(find_free_port())
    context = browser.new_context(viewport={"width": 1400, "height": 2600}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sidebar = page.get_by_test_id("stSidebar")
    try:
        page.goto(f"{server.url}/data")
        expect(page.get_by_text("1. Load a table")).to_be_visible(timeout=60_000)
        wait_until_idle(page)
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(csv))
        wait_until_idle(page)
        expect(sidebar).to_contain_text("visits.csv")
        # The upload's facts, not the example's (c = 5).
        assert eventually(lambda: unit_shown(page) == (NO_ID, "1", False)), unit_shown(page)

        # The unit of privacy first (then the id column leaves the bounds grid), then bounds and categories.
        keyed(page, "data_id_column_").click()
        page.get_by_role("option", name="person_id", exact=True).click()
        c_box = keyed(page, "data_rows_per_person_").locator("input")
        c_box.fill("4")
        page.get_by_role("button", name="Save the public facts").click()
        wait_until_idle(page)
        expect(sidebar).to_contain_text("up to 4 rows each, identified by “person_id”")
        # The grids are canvases typed into by mouse and keyboard; on a busy machine a keystroke can land
        # before the cell's editor opens, so the typing (not what is checked) is tried up to three times.
        for _attempt in range(3):
            edit_grid(page, "data_bounds_editor_", 0, 1, "18", columns=3)  # age: lower
            edit_grid(page, "data_bounds_editor_", 0, 2, "90", columns=3)  # age: upper
            edit_grid(page, "data_categories_editor_", 0, 1, "Oslo, Bergen", columns=4)
            page.get_by_role("button", name="Save the public facts").click()
            wait_until_idle(page)
            if eventually(lambda: stored_record(env / "workspace")["facts"]["bounds"], 10.0):
                break
        expect(page.get_by_text("Saved. Queries now use these facts.")).to_be_visible()
        facts = stored_record(env / "workspace")["facts"]
        assert facts["bounds"] == {"age": [18.0, 90.0]}
        assert facts["categories"] == {"city": ["Oslo", "Bergen"]}
        assert facts["unit"] == {"neighbours": "add_remove", "rows_per_person": 4, "id_column": "person_id"}

        # The budget asks first, stating the unit it locks.
        expect(sidebar).to_contain_text("No budget set")
        page.get_by_role("button", name="Set this budget (it cannot be changed later)").click()
        expect(page.get_by_text("lock its unit of privacy")).to_be_visible()
        page.get_by_role("button", name="Confirm: set this budget").click()
        expect(page.get_by_text("A budget cannot be changed once set")).to_be_visible()
        wait_until_idle(page)
        assert eventually(lambda: unit_shown(page) == ("person_id", "4", True)), unit_shown(page)
        expect(page.get_by_text("The unit of privacy is locked")).to_be_visible()

        # Query & release on the upload: the mean's ± before anything is spent, then a mean and a numeric
        # histogram released (each confirmed), and the downloaded script spends only through the ledger.
        go(page, "Query & release", "Simulated preview · spends no budget")
        choose(page, "Query", "Mean")
        main = page.get_by_test_id("stMain")
        expect(main).to_contain_text("± definition (simulated preview)")
        assert "Released ·" not in main.inner_text()
        release_now(page, "Released · mean")
        choose(page, "Query", "Histogram")
        choose(page, "Column", "age (numeric: public bins)")
        expect(main).to_contain_text("public bins over the declared bounds [18, 90] of age")
        release_now(page, "Released · histogram")
        expect(sidebar).to_contain_text("2 releases;")
        with page.expect_download() as download:
            page.get_by_role("button", name="Python script (dpdash)").click()
        script = env / "reproduce_release.py"
        script.write_bytes(download.value.path().read_bytes())
        ledger_path = env / "ledger.sqlite"
        identity = fingerprint(load_table(csv.read_bytes(), csv.name).data)
        # Run as downloaded: the command its first line names (the server's Python), no PYTHONPATH, and no
        # DPDASH_LEDGER: the script names the ledger it was spent from.
        first_line = script.read_text().splitlines()[0]
        assert first_line == f"# Run it with: {sys.executable} reproduce_release.py {csv.name}"
        run = [sys.executable, str(script), str(csv)]
        environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DPDASH_LEDGER")}
        spent = subprocess.run(run, capture_output=True, text=True, env=environment, timeout=120)
        assert spent.returncode == 0, spent.stderr
        with Ledger(ledger_path) as ledger:
            assert release_count(ledger.entries(identity)) == 3
            left = ledger.remaining(identity)
            ledger.spend(identity, LaplaceEvent(epsilon=left * 0.999, sensitivity=1.0, query="the rest"))
            before = ledger.entries(identity)
        short = subprocess.run(run, capture_output=True, text=True, env=environment, timeout=120)
        assert short.returncode == 1 and "Released" not in short.stdout, (short.stdout, short.stderr)
        with Ledger(ledger_path) as ledger:
            assert ledger.entries(identity) == before  # refused: nothing recorded
        go(page, "Data", "1. Load a table")

        # A reload, then a restarted server on the same ledger and workspace: all still there.
        for restart in (False, True):
            if restart:
                stop_process(server.process)
                server = start_streamlit(find_free_port())
            page.goto(f"{server.url}/data")
            expect(page.get_by_text("3. Set the privacy budget")).to_be_visible(timeout=60_000)
            wait_until_idle(page)
            expect(sidebar).to_contain_text("visits.csv")
            expect(sidebar).to_contain_text("up to 4 rows each, identified by “person_id”")
            expect(sidebar).not_to_contain_text("No budget set")
            expect(sidebar).to_contain_text("4 releases;")  # the app's two, the script's, "the rest"
            expect(page.get_by_text("A budget cannot be changed once set")).to_be_visible()
            assert eventually(lambda: unit_shown(page) == ("person_id", "4", True)), unit_shown(page)

        # The same file with a column's type changed in the app: the same budget.
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(csv))
        expect(page.get_by_text("Same rows as visits.csv").first).to_be_visible(timeout=60_000)
        wait_until_idle(page)
        open_expander(page, "Column types (as read; change them here)")
        edit_grid(page, "data_types_editor_", 3, 1, "text", columns=2)  # cost: integer → text
        page.get_by_role("button", name="Apply the types").click()
        wait_until_idle(page)
        if not eventually(lambda: stored_record(env / "workspace")["coercions"] == [["cost", "text"]]):
            page.screenshot(path=str(env / "types.png"), full_page=True)
        assert stored_record(env / "workspace")["coercions"] == [["cost", "text"]]
        expect(page.get_by_text("A budget cannot be changed once set")).to_be_visible()
        expect(sidebar).not_to_contain_text("No budget set")

        # An example and back: the unit controls always show the active table's facts.
        page.get_by_role("button", name="Example: tips").click()
        expect(sidebar).to_contain_text("Restaurant tips")
        wait_until_idle(page)
        assert eventually(lambda: unit_shown(page) == (NO_ID, "1", False)), unit_shown(page)
        page.get_by_role("button", name="Example: patients").click()
        expect(sidebar).to_contain_text("Synthetic patients", timeout=60_000)
        wait_until_idle(page)
        assert eventually(lambda: unit_shown(page)[:2] == ("person_id", "5")), unit_shown(page)
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Datasets").click()
        wait_until_idle(page)
        choice = keyed(page, "datasets_choice").locator("input")
        assert choice.input_value().startswith("visits.csv · ")
        page.get_by_role("button", name="Make active").click()
        expect(page.get_by_text("is the active table")).to_be_visible()
        wait_until_idle(page)
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Data", exact=True).click()
        wait_until_idle(page)
        expect(sidebar).to_contain_text("visits.csv")
        assert eventually(lambda: unit_shown(page) == ("person_id", "4", True)), unit_shown(page)

        # Same columns, other rows: flagged, with both choices, and no fresh budget offered.
        newer = env / "visits-v2.csv"
        people(extra=2).to_csv(newer, index=False)
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(newer))
        wait_until_idle(page)
        expect(page.get_by_text("looks like the budgeted dataset")).to_be_visible()
        expect(page.get_by_role("button", name="Continue visits.csv's budget")).to_be_visible()
        expect(page.get_by_role("button", name="It is a different population")).to_be_visible()
        expect(page.get_by_role("button", name="Set this budget (it cannot be changed later)")).to_have_count(
            0
        )
        assert not errors, errors
    finally:
        context.close()
        stop_process(server.process)
