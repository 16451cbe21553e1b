"""Real browser: every page's URL, opened as the first request of a freshly started server, runs through
app.py (issue 14, the design card's layout).

Until ``st.navigation`` has run once in the server process, Streamlit runs a ``pages/`` folder beside the
main script on its own (its v1 multipage discovery): the first request for ``/budget`` would show
Streamlit's file list ("app", "audit", "budget", ...) and no dpdash sidebar. Each page's guard
(``ui/shell.py``) hands that run to app.py. Here one new server per URL, all started side by side, each
with its own empty ledger and workspace, is asked for its URL first.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.app import ws_client
from tests.app.conftest import REPO_ROOT, NavPage, app_pages, stop_process

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

    from tests.app.conftest import StreamlitServer

pytestmark = pytest.mark.browser

SHELL_CAPTION = "dpdash · differential-privacy budget explorer"
HOME_HEADING = "dpdash"  # the Home page's title; every other page's title is its navigation title
# A fresh server's first page loads the 100 000-row example while eight other servers do the same.
FIRST_LOAD_TIMEOUT_S = 90.0


PAGES = app_pages()  # what app.py gives st.navigation


def test_app_pages_cover_every_file_in_pages() -> None:
    assert sorted(p.script for p in PAGES) == sorted(
        f"pages/{path.name}" for path in (REPO_ROOT / "pages").glob("*.py")
    )
    assert [p.url_path for p in PAGES].count("") == 1


def _title(tab: Page, nav_page: NavPage) -> Locator:
    """The page's own title (its level-1 heading) in the main area."""
    name = HOME_HEADING if nav_page.url_path == "" else nav_page.title
    return tab.get_by_test_id("stMain").get_by_role("heading", name=name, exact=True, level=1)


def _shell_drawn(tab: Page, nav_page: NavPage) -> bool:
    """Without waiting: the page's title and the shell's sidebar caption are both on screen."""
    caption = tab.get_by_test_id("stSidebar").get_by_text(SHELL_CAPTION)
    return _title(tab, nav_page).is_visible() and caption.is_visible()


def check_shell(tab: Page, nav_page: NavPage) -> None:
    """The page's title, inside app.py's shell: the sidebar's caption and dpdash's navigation."""
    where = f"/{nav_page.url_path}"
    expect(_title(tab, nav_page), where).to_be_visible()
    expect(tab.get_by_test_id("stSidebar").get_by_text(SHELL_CAPTION), where).to_be_visible()
    # dpdash's navigation, by title, and nothing else: Streamlit's v1 list names the files ("app", "audit").
    nav = tab.get_by_test_id("stSidebarNav")
    expect(nav.get_by_role("link"), where).to_have_text([p.title for p in PAGES])
    expect(tab.get_by_role("link", name="app", exact=True), where).to_have_count(0)
    here = nav.get_by_role("link", name=nav_page.title, exact=True)
    expect(here, where).to_have_attribute("aria-current", "page")
    assert tab.get_by_test_id("stException").count() == 0, where


def test_every_page_url_opened_first_on_a_fresh_server_runs_through_app_py(
    browser: Browser, fresh_servers
) -> None:
    started = time.monotonic()
    servers = fresh_servers(len(PAGES))
    startup_s = time.monotonic() - started
    outside: list[str] = []
    pending: dict[int, tuple[Page, StreamlitServer, NavPage]] = {}
    for index, (server, nav_page) in enumerate(zip(servers, PAGES, strict=True)):
        tab = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
        own_host = urlsplit(server.url).netloc
        tab.on("request", lambda r, h=own_host: urlsplit(r.url).netloc != h and outside.append(r.url))
        tab.goto(f"{server.url}/{nav_page.url_path}")  # the server's very first request
        pending[index] = (tab, server, nav_page)
    try:
        # Check each page as soon as it is drawn and stop its server at once: the CPU goes to the servers
        # still loading. A page whose shell never shows is checked (and fails) after the deadline.
        deadline = time.monotonic() + FIRST_LOAD_TIMEOUT_S
        while pending and time.monotonic() < deadline:
            for index, (tab, server, nav_page) in list(pending.items()):
                if _shell_drawn(tab, nav_page):
                    check_shell(tab, nav_page)
                    tab.context.close()
                    stop_process(server.process)
                    del pending[index]
            time.sleep(0.2)
        for tab, _, nav_page in pending.values():
            check_shell(tab, nav_page)
        assert outside == []
    finally:
        for tab, _, _ in pending.values():
            tab.context.close()
    print(f"\n{len(PAGES)} fresh servers: started in {startup_s:.1f} s, "
          f"all first pages checked after {time.monotonic() - started:.1f} s")  # fmt: skip


STRESS_SERVERS = 10
STRESS_TABS = 4
STRESS_RUN_TIMEOUT_S = 120.0
# Each server's four sessions start this far apart (seconds; one gap per server, in turn). Sessions that
# start together queue behind the first one's imports and never cross it; the half-imported module needs
# one session to start importing while another is deep inside the import graph, as tabs opened one after
# another do.
STRESS_GAPS_S = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1.0)


def first_run(url: str, nav_page: NavPage, delay_s: float = 0.0) -> list[str]:
    """Open a new session on the server at ``url`` as a browser's tab does for the bookmark of
    ``nav_page`` (its first ``rerun_script``, with the page's URL path) and wait for the run to finish;
    returns what is wrong with what the session was sent (nothing when the page ran inside the shell)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    frame = BackMsg(rerun_script=ClientState(page_name=nav_page.url_path)).SerializeToString()
    time.sleep(delay_s)
    try:
        received = asyncio.run(ws_client.replay(url, [frame], timeout_s=STRESS_RUN_TIMEOUT_S))
    except Exception as error:  # a closed socket or no end of run in time: say so, as for any other failure
        return [f"no finished run: {error!r}"]
    problems: list[str] = []
    navigation: list[str] = []
    texts: list[str] = []
    for raw in received:
        msg = ForwardMsg.FromString(raw)
        kind = msg.WhichOneof("type")
        if kind == "navigation":
            navigation = [page.page_name for page in msg.navigation.app_pages]
        elif kind == "page_not_found":
            problems.append("page not found")
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "exception":
                problems.append(f"{element.exception.type}: {element.exception.message}"[:300])
            elif element.WhichOneof("type") in ("markdown", "heading"):
                texts.append(getattr(element, element.WhichOneof("type")).body)
    if navigation != [p.title for p in PAGES]:
        problems.append(f"navigation {navigation}, not dpdash's titles")  # Streamlit's file list: "app", ...
    if not any(SHELL_CAPTION in text for text in texts):
        problems.append("no shell caption in the sidebar")
    title = HOME_HEADING if nav_page.url_path == "" else nav_page.title
    if not any(title in text for text in texts):
        problems.append(f"no title {title!r}")
    return problems


def test_four_first_requests_at_once_on_ten_fresh_servers_never_see_a_half_imported_module(
    fresh_servers,
) -> None:
    """Four sessions open four different bookmarks at once as the first requests of a freshly started
    server, on each of ten servers: every session's page runs inside the shell with no exception. Before
    ``ui.shell.load_modules`` two first runs could import dpdash's and ui's modules at the same time and
    one got a module half-initialised ("cannot import name 'visible_pages' from 'ui.access'"; 17 of 24
    servers failed every first request). The sessions speak the websocket protocol as a tab does
    (``ws_client``) without drawing the page: what matters is the script runs, four at once."""
    servers = fresh_servers(STRESS_SERVERS)
    failures: list[str] = []
    for number, server in enumerate(servers):
        chosen = [PAGES[(number + i) % len(PAGES)] for i in range(STRESS_TABS)]
        gap = STRESS_GAPS_S[number % len(STRESS_GAPS_S)]
        with ThreadPoolExecutor(max_workers=STRESS_TABS) as pool:
            runs = [pool.submit(first_run, server.url, page, i * gap) for i, page in enumerate(chosen)]
            results = [run.result() for run in runs]
        stop_process(server.process)  # the CPU goes to the next server
        failures += [
            f"server {number}, /{page.url_path}: {problem}"
            for page, problems in zip(chosen, results, strict=True)
            for problem in problems
        ]
    assert not failures, failures
