"""Real browser, issue 15's Connect section: a Parquet folder the test writes is connected by typing its
path, its unit of privacy declared, its budget set and a count released under the source's fingerprint; a
second tab, a reload and a server restart open the same connected table with its budget spent. Nothing of
the table is uploaded or copied into the workspace (the true answers: tests/app/test_data_connect.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import expect

from dpdash.engines import open_files
from dpdash.ledger import Ledger
from tests.app.conftest import find_free_port, start_streamlit, stop_process
from tests.app.test_browser_upload_flow import keyed, release_now, wait_until_idle

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.browser, pytest.mark.walk(36)]


def write_folder(folder: Path) -> None:
    """3 000 rows of about 1 000 people in two Parquet files."""
    rng = np.random.default_rng(15)
    df = pd.DataFrame({"person_id": rng.integers(0, 1000, 3000), "age": rng.integers(0, 100, 3000)})
    folder.mkdir()
    df.iloc[:1700].to_parquet(folder / "part-1.parquet")
    df.iloc[1700:].to_parquet(folder / "part-2.parquet")


def open_data(page: Page, url: str) -> None:
    page.goto(f"{url}/data")
    expect(page.get_by_text("1. Load a table")).to_be_visible(timeout=60_000)
    wait_until_idle(page)


def test_a_connected_parquet_folder_through_tabs_reloads_and_a_restart(
    browser: Browser, tmp_path: Path
) -> None:
    folder = tmp_path / "visits"
    write_folder(folder)
    env = {"DPDASH_LEDGER": str(tmp_path / "ledger.sqlite"), "DPDASH_WORKSPACE": str(tmp_path / "workspace")}
    server = start_streamlit(find_free_port(), env=env)
    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sidebar = page.get_by_test_id("stSidebar")
    try:
        open_data(page, server.url)
        page.get_by_text("…or connect a table where it lives").click()
        path = page.get_by_label("Path, folder or glob")
        path.fill(str(folder))
        path.press("Tab")  # the path's own rerun ends before the click, so the click is never lost to it
        wait_until_idle(page)
        page.get_by_role("button", name="Connect", exact=True).click()
        wait_until_idle(page)
        # The first Connect of a server imports the engine (Ibis, DuckDB) and reads both files' footers.
        expect(sidebar).to_contain_text("3,000 rows × 2 columns", timeout=60_000)
        expect(page.get_by_text("in no particular order (owner only)")).to_be_visible()

        keyed(page, "data_id_column_").click()
        page.get_by_role("option", name="person_id", exact=True).click()
        keyed(page, "data_rows_per_person_").locator("input").fill("2")
        page.get_by_role("button", name="Save the public facts").click()
        wait_until_idle(page)
        expect(sidebar).to_contain_text("up to 2 rows each")
        page.get_by_role("button", name="Set this budget (it cannot be changed later)").click()
        page.get_by_role("button", name="Confirm: set this budget").click()
        expect(page.get_by_text("A budget cannot be changed once set")).to_be_visible()

        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Query & release", exact=True).click()
        expect(page.get_by_text("Simulated preview · spends no budget")).to_be_visible(timeout=60_000)
        wait_until_idle(page)
        release_now(page, "Released ·")

        identity = open_files(folder).fingerprint()
        ledger = Ledger(tmp_path / "ledger.sqlite")
        record = ledger.find_dataset(identity)
        assert record is not None and ledger.status(record).entries == 1
        (published,) = ledger.published(record).values()
        assert published["dataset_identity"] == identity

        # A second tab is a new session: it connects the workspace's table again, budget spent.
        other = context.new_page()
        open_data(other, server.url)
        expect(other.get_by_test_id("stSidebar")).to_contain_text("3,000 rows × 2 columns")
        expect(other.get_by_test_id("stSidebar")).to_contain_text("1 release")
        other.close()
        page.reload()
        wait_until_idle(page)
        expect(sidebar).to_contain_text("3,000 rows × 2 columns")

        stop_process(server.process)
        server = start_streamlit(find_free_port(), env=env)
        open_data(page, server.url)
        expect(sidebar).to_contain_text("3,000 rows × 2 columns")
        expect(sidebar).to_contain_text("1 release")
        assert not list((tmp_path / "workspace").rglob("source.bin"))  # nothing of the table was copied
        assert errors == []
    finally:
        context.close()
        stop_process(server.process)
