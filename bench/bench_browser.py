"""Benchmark: what a person waits for in Chromium, from a click (or Enter) to a settled page, on the app's
100 000-row example, against an empty Streamlit app with two pages measured in the same run.

"Settled": the browser has received the server's ``script_finished`` message for the run the action
started (read from the websocket: Streamlit's ForwardMsg protobuf), Streamlit's running indicator is gone
and no element is still a placeholder. Targets (issue 14): every page switch and every preview ≤ 1 s.
Each figure is the median of ``REPEATS`` (page switches: visits alternating with the Home page; the first
visit of a page in a fresh server session is reported apart, as "first").

Run: ``.venv/bin/python bench/bench_browser.py`` (Debian's chromium; starts and stops its own servers on
127.0.0.1 with a scratch ledger and workspace).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import Page, sync_playwright
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.app.conftest import CHROMIUM, CHROMIUM_ARGS, find_free_port, start_streamlit, stop_process

REPEATS = 5
TARGET_S = 1.0
EMPTY_APP = """import streamlit as st
pages = [st.Page(lambda: st.write("page one"), title="One", url_path="one", default=True),
         st.Page(lambda: st.write("page two"), title="Two", url_path="two")]
st.navigation(pages).run()
"""


class Settle:
    """Counts the ``script_finished`` messages a page receives, to wait for the run an action starts."""

    def __init__(self, page: Page) -> None:
        self.page, self.finished = page, 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            message = ForwardMsg()
            try:
                message.ParseFromString(payload)
            except Exception:  # not a ForwardMsg: not ours to read
                return
            if message.WhichOneof("type") == "script_finished":
                self.finished += 1

    def timed(self, action: Callable[[], None], marker: str | None = None) -> float:
        """Seconds from ``action`` to the end of the run it started, the page settled (``marker`` shown)."""
        before = self.finished
        start = time.perf_counter()
        action()
        while self.finished == before:
            self.page.wait_for_timeout(5)
        if marker is not None:
            self.page.get_by_text(marker, exact=True).first.wait_for(timeout=60_000)
        self.page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=60_000)
        self.page.locator('[data-testid="stSkeleton"]').first.wait_for(state="detached", timeout=60_000)
        return time.perf_counter() - start


def nav(page: Page, title: str) -> Callable[[], None]:
    return lambda: page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()


def typed(page: Page, label: str, text: str) -> Callable[[], None]:
    def action() -> None:
        box = page.get_by_role("textbox", name=label)
        box.fill(text)
        box.press("Enter")

    return action


def chosen(page: Page, label: str, option: str) -> Callable[[], None]:
    def action() -> None:
        page.get_by_role("combobox", name=label).click()
        page.get_by_role("option", name=option, exact=True).first.click()

    return action


def median_switch(settle: Settle, page: Page, title: str, marker: str, home: tuple[str, str]) -> float:
    times = []
    for _ in range(REPEATS):
        settle.timed(nav(page, home[0]), home[1])
        times.append(settle.timed(nav(page, title), marker))
    return statistics.median(times)


def open_page(browser, url: str) -> tuple[Page, Settle, float]:  # type: ignore[no-untyped-def]
    page = browser.new_context(viewport={"width": 1400, "height": 1600}).new_page()
    page.set_default_timeout(60_000)
    settle = Settle(page)
    first = settle.timed(lambda: page.goto(url))
    return page, settle, first


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="dpdash-bench-browser-"))
    (scratch / "empty.py").write_text(EMPTY_APP)
    env = {"DPDASH_LEDGER": str(scratch / "ledger.sqlite"), "DPDASH_WORKSPACE": str(scratch / "workspace")}
    servers = []
    rows: list[tuple[str, float]] = []
    try:
        empty = start_streamlit(find_free_port(), script=str(scratch / "empty.py"), env=env)
        servers.append(empty)
        app = start_streamlit(find_free_port(), env=env)
        servers.append(app)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page, settle, _ = open_page(browser, empty.url)
            baseline_first = open_page(browser, empty.url)[2]
            baseline = median_switch(settle, page, "Two", "page two", ("One", "page one"))

            page, settle, first_load = open_page(browser, app.url)
            rows.append(("first load (Home, loads the example)", first_load))
            rows.append(("first load, another browser session", open_page(browser, app.url)[2]))
            home = ("Home", "dpdash")
            settle.timed(nav(page, "Data"), "Data")  # the example gets its budget, as a user would set it
            for button in ("Set this budget (it cannot be changed later)", "Confirm: set this budget"):
                settle.timed(lambda name=button: page.get_by_role("button", name=name).click())
            settle.timed(nav(page, home[0]), home[1])
            for title in ["Data", "Datasets", "Mechanism explorer", "Query & release", "Budget", "Planner",
                          "What does ε mean?", "Audit"]:  # fmt: skip
                rows.append((f"switch to {title} (first)", settle.timed(nav(page, title), title)))
                settle.timed(nav(page, home[0]), home[1])
                rows.append((f"switch to {title}", median_switch(settle, page, title, title, home)))
            settle.timed(nav(page, "Query & release"), "Query & release")
            for name, action in [
                ("preview: type ε", lambda: typed(page, "…or type an exact ε", "0.7")()),
                ("preview: query → Histogram", chosen(page, "Query", "Histogram")),
                ("preview: mechanism → Gaussian", chosen(page, "Mechanism", "Gaussian (analytic)")),
                ("preview: type ε again", typed(page, "…or type an exact ε", "0.3")),
                ("preview: query → Mean", chosen(page, "Query", "Mean")),
                ("preview: query → Count", chosen(page, "Query", "Count")),
            ]:
                rows.append((name, settle.timed(action)))
            browser.close()
    finally:
        for server in servers:
            stop_process(server.process)
    print(f"empty Streamlit app: first load {baseline_first * 1000:.0f} ms, page switch "
          f"{baseline * 1000:.0f} ms (median of {REPEATS}): the baseline below")  # fmt: skip
    print(f"{'dpdash, 100 000-row example':44} {'time':>8} {'× empty switch':>15}  target ≤ {TARGET_S:g} s")
    for name, seconds in rows:
        mark = "" if name.startswith("first load") or seconds <= TARGET_S else "  over target"
        print(f"{name:44} {seconds * 1000:6.0f} ms {seconds / baseline:14.1f}×{mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
