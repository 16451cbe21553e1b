"""Real browser: a table whose file name and column names are Markdown images and HTML tags, uploaded
through the file-upload widget, makes Chromium fetch nothing, and the names show as text."""

from __future__ import annotations

import http.server
import io
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pandas as pd
import pytest
from playwright.sync_api import expect

from tests.app.conftest import find_free_port, start_streamlit, stop_process, wait_until_idle

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Page

pytestmark = pytest.mark.browser


class _Beacon(http.server.ThreadingHTTPServer):
    """An HTTP server on 127.0.0.1 that records every request it gets."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        beacon = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                beacon.requests.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def beacon() -> Iterator[_Beacon]:
    server = _Beacon()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def own_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A Streamlit server with a ledger of its own (the hostile table's budget starts unset)."""
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    server = start_streamlit(find_free_port())
    try:
        yield server
    finally:
        stop_process(server.process)


def _shown(page: Page, test_id: str) -> str:
    """The text of an area as a reader sees it (without the invisible word joiners ``md`` adds to URLs)."""
    return page.get_by_test_id(test_id).inner_text().replace("\u2060", "")


def _go(page: Page, title: str) -> None:
    """Open a page through the sidebar navigation (the session, and so the uploaded table, stays)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()
    wait_until_idle(page)


def test_hostile_names_fetch_nothing_and_show_as_text(page: Page, own_server, beacon: _Beacon) -> None:
    image = f"![x]({beacon.url}/beacon.png)"
    tag = f"<img src={beacon.url}/b2.png>"
    # A file's name cannot hold "/" (the loader keeps only the base name); Markdown decodes "&#47;" in a
    # link target, so this name is still an image fetching from the beacon.
    file_name = f"{image.replace('/', '&#47;')}.csv"
    typed = f"![e]({beacon.url}/e.png)"
    buffer = io.StringIO()
    pd.DataFrame({image: [1, 2, 3, 4], tag: ["a", "b", "a", "c"]}).to_csv(buffer, index=False)
    page_errors: list[str] = []
    page.on("pageerror", lambda exc: page_errors.append(str(exc)))
    page.set_viewport_size({"width": 1400, "height": 2400})
    sidebar = page.get_by_test_id("stSidebar")

    page.goto(f"{own_server.url}/data")
    expect(page.get_by_text("1. Load a table")).to_be_visible(timeout=60_000)  # a fresh server
    wait_until_idle(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        files=[{"name": file_name, "mimeType": "text/csv", "buffer": buffer.getvalue().encode()}]
    )
    wait_until_idle(page)
    expect(sidebar).to_contain_text("beacon.png).csv")  # the upload is in
    assert f"Data: {file_name}" in _shown(page, "stSidebar")
    assert f"Active table: {file_name} (upload '{file_name}')" in _shown(page, "stMain")

    # The tag column as the person id: the unit of privacy, shown everywhere, now names it.
    page.get_by_test_id("stSelectbox").filter(has_text="Person id column").click()
    page.get_by_role("option", name=tag, exact=True).click()
    page.get_by_role("button", name="Save the public facts").click()
    expect(sidebar).to_contain_text("b2.png>")
    wait_until_idle(page)
    assert f"identified by “{tag}”" in _shown(page, "stSidebar")
    page.get_by_role("button", name="Set this budget (it cannot be changed later)").click()
    confirm = page.get_by_role("button", name="Confirm: set this budget")
    expect(confirm).to_be_visible(timeout=60_000)  # a rerun that also fingerprints the table: slow under load
    confirm.click()
    expect(page.get_by_text("A budget cannot be changed once set")).to_be_visible()
    wait_until_idle(page)

    _go(page, "Query & release")
    expect(page.get_by_text("Simulated preview · spends no budget")).to_be_visible()
    assert f"Table: {file_name}" in _shown(page, "stMain")
    epsilon_box = page.get_by_role("textbox", name="…or type an exact ε")
    epsilon_box.fill(typed)
    epsilon_box.press("Enter")
    wait_until_idle(page)
    expect(page.get_by_test_id("stAlertContentError")).to_be_visible()
    assert typed in _shown(page, "stAlertContentError")
    epsilon_box.fill("1")
    epsilon_box.press("Enter")
    wait_until_idle(page)
    page.get_by_role("button", name="Release… (spends budget)").click()
    page.get_by_role("button", name="Release now").click()
    expect(page.get_by_text("Released · count of rows")).to_be_visible()
    wait_until_idle(page)
    expect(sidebar).to_contain_text("1 release;")

    _go(page, "Budget")
    expect(page.get_by_text("Every accountant, side by side")).to_be_visible()
    assert f"Table: {file_name}" in _shown(page, "stMain")
    assert f"identified by “{tag}”" in _shown(page, "stMain")  # who is protected, in plain words
    _go(page, "Data")
    expect(page.get_by_test_id("stMain")).to_contain_text("3. Set the privacy budget")
    assert tag in _shown(page, "stMain")  # the id column's name, as text

    page.wait_for_timeout(1000)  # a fetch that an image started would have arrived by now
    assert beacon.requests == []
    assert page.locator(f"img[src^='{beacon.url}']").count() == 0
    assert page.locator(f"a[href^='{beacon.url}']").count() == 0  # no link either
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page_errors == []
