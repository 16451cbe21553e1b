"""Real browser: the element code of every page is loaded while the first page is idle (ui/preload.py), so
the first visit of a page loads no script (issue 14: the Explorer's first visit waited ~1 s for Plotly)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from tests.app.conftest import app_pages
from ui.preload import CHUNKS, chunk_files

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.app.conftest import StreamlitServer

SCRIPTS = "() => performance.getEntriesByType('resource').map(r => r.name).filter(n => n.endsWith('.js'))"


def test_every_chunk_named_is_in_the_installed_streamlit() -> None:
    """A Streamlit upgrade that renames a chunk fails here, not silently in the browser."""
    found = chunk_files()
    assert sorted(name.split(".")[0] for name in found) == sorted(CHUNKS), found


@pytest.mark.browser
def test_the_first_visit_of_every_page_loads_no_script(page: Page, streamlit_server: StreamlitServer) -> None:
    page.goto(streamlit_server.url)
    expect(page.get_by_role("heading", name="dpdash", exact=True)).to_be_visible(timeout=60_000)
    # The preload's promise settles once every chunk and its imports have loaded (no sleep-and-hope).
    page.wait_for_function("() => window.dpdashPreloaded === 'done'", timeout=30_000)
    plotly = next(name for name in chunk_files() if name.startswith("PlotlyChart."))
    assert any(name.endswith(plotly) for name in page.evaluate(SCRIPTS)), "the Plotly chunk was not preloaded"
    before = set(page.evaluate(SCRIPTS))
    nav = page.get_by_test_id("stSidebarNav")
    for nav_page in app_pages()[1:]:
        nav.get_by_role("link", name=nav_page.title, exact=True).click()
        expect(page.get_by_role("heading", name=nav_page.title, exact=True)).to_be_visible(timeout=60_000)
        page.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=60_000)
    later = sorted(name.rsplit("/", 1)[-1] for name in set(page.evaluate(SCRIPTS)) - before)
    assert later == [], f"scripts loaded on a first visit (add their element to ui.preload.CHUNKS): {later}"
