"""A real server: every page's URL, opened as the first request of a freshly started server, runs through
app.py (issue 14, the design card's layout), also with four bookmarks opened at once (issue 26).

Until ``st.navigation`` has run once in the server process, Streamlit runs a ``pages/`` folder beside the
main script on its own (its v1 multipage discovery): the first request for ``/budget`` would show
Streamlit's file list ("app", "audit", "budget", ...) and no dpdash sidebar. Each page's guard
(``ui/shell.py``) hands that run to app.py. Here ten new servers, started side by side, each with its own
empty ledger and workspace, are each asked for four pages, each page first on at least one server. The
sessions speak the websocket protocol a browser tab speaks (``ws_client``); what a browser draws of the
shell is checked by the walks of ``test_browser.py`` and ``test_browser_a11y.py``.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.app import ws_client
from tests.app.conftest import REPO_ROOT, NavPage, app_pages, stop_process

pytestmark = [pytest.mark.browser, pytest.mark.alone]

SHELL_CAPTION = "dpdash · differential-privacy budget explorer"
HOME_HEADING = "dpdash"  # the Home page's title; every other page's title is its navigation title


PAGES = app_pages()  # what app.py gives st.navigation


def test_app_pages_cover_every_file_in_pages() -> None:
    assert sorted(p.script for p in PAGES) == sorted(
        f"pages/{path.name}" for path in (REPO_ROOT / "pages").glob("*.py")
    )
    assert [p.url_path for p in PAGES].count("") == 1


STRESS_SERVERS = 10
STRESS_TABS = 4
STRESS_RUN_TIMEOUT_S = 120.0
STRESS_AT_ONCE = 2  # servers asked at the same time
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
    firsts = {PAGES[number % len(PAGES)].url_path for number in range(STRESS_SERVERS)}
    assert firsts == {page.url_path for page in PAGES}  # every page is a fresh server's very first request
    servers = fresh_servers(STRESS_SERVERS)

    def four_tabs(number: int) -> list[str]:
        server = servers[number]
        chosen = [PAGES[(number + i) % len(PAGES)] for i in range(STRESS_TABS)]
        gap = STRESS_GAPS_S[number % len(STRESS_GAPS_S)]
        with ThreadPoolExecutor(max_workers=STRESS_TABS) as pool:
            runs = [pool.submit(first_run, server.url, page, i * gap) for i, page in enumerate(chosen)]
            results = [run.result() for run in runs]
        stop_process(server.process)  # the CPU goes to the next server
        return [
            f"server {number}, /{page.url_path}: {problem}"
            for page, problems in zip(chosen, results, strict=True)
            for problem in problems
        ]

    # STRESS_AT_ONCE servers at a time, one per core: each server's four first runs are still one burst.
    with ThreadPoolExecutor(max_workers=STRESS_AT_ONCE) as pool:
        failures = [f for found in pool.map(four_tabs, range(STRESS_SERVERS)) for f in found]
    assert not failures, failures
