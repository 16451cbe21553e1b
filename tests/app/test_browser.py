"""Real-browser walk: Debian's Chromium, driven by Playwright, against a live server."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Page

pytestmark = pytest.mark.browser


def wait_until_idle(page: Page) -> None:
    """Wait for Streamlit's script run to finish (its 'running' status widget goes away)."""
    expect(page.locator('[data-testid="stApp"]')).to_be_visible()
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0)


def test_home_page_renders(page: Page, streamlit_server, screenshot_dir: Path) -> None:
    page_errors: list[str] = []
    page.on("pageerror", lambda exc: page_errors.append(str(exc)))

    page.goto(streamlit_server.url)
    expect(page).to_have_title("dpdash")
    expect(page.get_by_role("heading", name="dpdash", exact=True)).to_be_visible()
    expect(page.get_by_text("A differential-privacy budget explorer")).to_be_visible()
    expect(page.get_by_text("are coming next")).to_be_visible()
    wait_until_idle(page)

    page.screenshot(path=str(screenshot_dir / "home.png"), full_page=True)

    assert page.locator('[data-testid="stException"]').count() == 0
    assert page_errors == []
