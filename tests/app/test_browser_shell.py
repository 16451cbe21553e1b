"""Real browser: every page's URL, opened as the first request of a freshly started server, runs through
app.py (issue 14, the design card's layout).

Until ``st.navigation`` has run once in the server process, Streamlit runs a ``pages/`` folder beside the
main script on its own (its v1 multipage discovery): the first request for ``/budget`` would show
Streamlit's file list ("app", "audit", "budget", ...) and no dpdash sidebar. Each page's guard
(``ui/shell.py``) hands that run to app.py. Here one new server per URL, all started side by side, each
with its own empty ledger and workspace, is asked for its URL first.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.app.conftest import REPO_ROOT, app_pages, stop_process

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

SHELL_CAPTION = "dpdash · differential-privacy budget explorer"
HOME_HEADING = "dpdash"  # the Home page's title; every other page's title is its navigation title
# A fresh server's first page loads the 100 000-row example while eight other servers do the same.
FIRST_LOAD_TIMEOUT_MS = 90_000


PAGES = app_pages()  # what app.py gives st.navigation


def test_app_pages_cover_every_file_in_pages() -> None:
    assert sorted(p.script for p in PAGES) == sorted(
        f"pages/{path.name}" for path in (REPO_ROOT / "pages").glob("*.py")
    )
    assert [p.url_path for p in PAGES].count("") == 1


def test_every_page_url_opened_first_on_a_fresh_server_runs_through_app_py(
    browser: Browser, fresh_servers
) -> None:
    started = time.monotonic()
    servers = fresh_servers(len(PAGES))
    startup_s = time.monotonic() - started
    contexts = [browser.new_context(viewport={"width": 1400, "height": 900}) for _ in PAGES]
    try:
        tabs = []
        outside: list[str] = []
        for context, server, nav_page in zip(contexts, servers, PAGES, strict=True):
            tab = context.new_page()
            own_host = urlsplit(server.url).netloc
            tab.on("request", lambda r, h=own_host: urlsplit(r.url).netloc != h and outside.append(r.url))
            tab.goto(f"{server.url}/{nav_page.url_path}")  # the server's very first request
            tabs.append(tab)
        titles = [p.title for p in PAGES]
        for tab, server, nav_page in zip(tabs, servers, PAGES, strict=True):
            heading = HOME_HEADING if nav_page.url_path == "" else nav_page.title
            where = f"/{nav_page.url_path}"
            main = tab.get_by_test_id("stMain")
            expect(main.get_by_role("heading", name=heading, exact=True, level=1)).to_be_visible(
                timeout=FIRST_LOAD_TIMEOUT_MS
            )
            sidebar = tab.get_by_test_id("stSidebar")
            expect(sidebar.get_by_text(SHELL_CAPTION), where).to_be_visible(timeout=FIRST_LOAD_TIMEOUT_MS)
            # dpdash's navigation, by title, and nothing else: Streamlit's v1 list ("app", "audit", ...)
            # would name the files.
            nav = tab.get_by_test_id("stSidebarNav")
            expect(nav.get_by_role("link"), where).to_have_text(titles)
            expect(tab.get_by_role("link", name="app", exact=True)).to_have_count(0)
            here = nav.get_by_role("link", name=nav_page.title, exact=True)
            expect(here, where).to_have_attribute("aria-current", "page")
            assert tab.locator('[data-testid="stException"]').count() == 0, where
            tab.context.close()
            stop_process(server.process)  # frees the CPU for the servers still loading their first page
        assert outside == []
    finally:
        for context in contexts:
            context.close()
    print(f"\n{len(PAGES)} fresh servers: started in {startup_s:.1f} s, "
          f"all first pages checked after {time.monotonic() - started:.1f} s")  # fmt: skip
