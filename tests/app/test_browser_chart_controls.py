"""Browser test of the charts' keyboard access (issue 14): no Plotly toolbar, a "Chart as a table" for
every chart, and the possible releases played, stopped and stepped with the keyboard alone."""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from tests.app.test_browser_ledger import wait_until_idle

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from tests.app.conftest import StreamlitServer

pytestmark = pytest.mark.browser

SHOWN = re.compile(r"Possible release (\d+) of 30")


def _shown(page: Page) -> int:
    text = page.locator(".gtitle", has_text=SHOWN).first.text_content() or ""
    match = SHOWN.search(text)
    assert match, text
    return int(match.group(1))


def test_possible_releases_play_stop_and_step_by_keyboard(
    page: Page, streamlit_server: StreamlitServer
) -> None:
    page.goto(streamlit_server.url)
    wait_until_idle(page)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Query & release").click()
    expect(page.locator(".gtitle", has_text=SHOWN)).to_have_count(1, timeout=90_000)
    wait_until_idle(page)
    charts = page.locator(".js-plotly-plot")
    assert charts.count() >= 2
    expect(page.locator(".modebar-container .modebar")).to_have_count(0)  # no toolbar tab stops
    tables = page.get_by_test_id("stExpander").filter(has_text="Chart as a table")
    expect(tables).to_have_count(charts.count())
    assert _shown(page) == 1

    play = page.get_by_role("switch", name="Play: a new possible release every second")
    play.focus()
    page.keyboard.press("Space")  # play
    expect(
        page.locator(".gtitle", has_text=re.compile(r"Possible release ([2-9]|\d\d) of 30"))
    ).to_have_count(1, timeout=20_000)
    play.focus()
    page.keyboard.press("Space")  # stop
    wait_until_idle(page)
    stopped = _shown(page)
    time.sleep(2.5)  # more than two ticks of a player that did not stop
    assert _shown(page) == stopped

    slider = page.get_by_role("slider", name="Possible release shown")
    slider.focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator(".gtitle", has_text=f"Possible release {stopped % 30 + 1} of 30")).to_have_count(1)
