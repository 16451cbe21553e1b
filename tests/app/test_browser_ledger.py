"""Real browser: two tabs, outside processes and a server restart on one ledger (issue 12, item 1).

What broke in the live app: after a few page loads (one ledger handle per browser session in the server
process), one outside read of the ledger with the ``sqlite3`` tool left new sessions showing "ledger is
corrupted (disk I/O error)", and spends could go to a deleted write-ahead log. Here a server of its own, on
its own ledger, serves two tabs while other processes read and spend; then it is restarted.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from dpdash.accounting import Budget
from dpdash.ledger import Ledger
from tests.accounting.test_shared_file import outside_reader, outside_spend
from tests.app.conftest import (
    example_identity,
    find_free_port,
    start_streamlit,
    stop_process,
    wait_until_idle,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.browser, pytest.mark.walk(45)]


def new_tab(browser: Browser) -> Page:
    """A tab of its own (its own browser context); the steps below load each page into it."""
    page = browser.new_context(viewport={"width": 1400, "height": 1800}).new_page()
    page.set_default_timeout(30_000)
    return page


def release_count(page: Page, url: str, epsilon: str) -> None:
    """On the Query & release page: count of rows with Laplace at ``epsilon``, released for real."""
    page.goto(f"{url}/release")
    expect(page.get_by_text("Simulated preview · spends no budget")).to_be_visible(timeout=60_000)
    wait_until_idle(page)
    box = page.get_by_role("textbox", name="…or type an exact ε")
    box.fill(epsilon)
    box.press("Enter")
    wait_until_idle(page)
    # The rerun the typed ε starts may not have begun when the page first looks idle: wait until the
    # page states this release's guarantee at that ε before releasing.
    expect(page.get_by_text(f"factor of e^{epsilon} ≈").first).to_be_visible(timeout=60_000)
    wait_until_idle(page)
    page.get_by_role("button", name="Release… (spends budget)").click()
    page.get_by_role("button", name="Release now").click()
    expect(page.get_by_text("Released · count")).to_be_visible(timeout=60_000)
    wait_until_idle(page)


def budget_page_says(page: Page, url: str, releases: int) -> None:
    page.goto(f"{url}/budget")
    expect(page.get_by_text("Every accountant, side by side")).to_be_visible(timeout=60_000)
    wait_until_idle(page)
    expect(page.get_by_test_id("stMetric").filter(has_text="releases")).to_contain_text(str(releases))
    assert page.get_by_test_id("stAlert").filter(has_text="cannot be read").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0


def test_two_tabs_outside_processes_and_a_restart(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledger.sqlite"
    fp = example_identity()
    with Ledger(path) as ledger:
        ledger.add_dataset(name="patients", fingerprint=fp, budget=Budget(1.0), accountant="basic")
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    server = start_streamlit(find_free_port())
    tabs: list[Page] = []
    try:
        url = server.url
        first, second = new_tab(browser), new_tab(browser)
        tabs += [first, second]
        for tab in (first, second):
            budget_page_says(tab, url, 0)
        outside_reader(path)  # what `sqlite3 ledger.sqlite 'select ...'` does
        assert outside_spend(path, 0.05, fp) == "spent"

        release_count(first, url, "0.9")
        outside_reader(path)
        assert outside_spend(path, 0.9, fp) == "refused"  # 0.05 + 0.9 spent of 1.0

        budget_page_says(second, url, 2)
        third = new_tab(browser)  # a new session after the outside reads
        tabs.append(third)
        budget_page_says(third, url, 2)
        second.goto(f"{url}/release")
        wait_until_idle(second)
        expect(second.get_by_test_id("stSidebar")).to_contain_text("2 releases;")
        stop_process(server.process)

        server = start_streamlit(find_free_port())  # a restart: the same ledger, new sessions
        budget_page_says(first, server.url, 2)
    finally:
        stop_process(server.process)
        for tab in tabs:
            tab.context.close()
    with Ledger(path) as ledger:
        assert [e.query for e in ledger.entries(fp)] == ["outside", "count of rows"]
        assert ledger.spent(fp).epsilon == pytest.approx(0.95)

