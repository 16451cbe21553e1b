"""Real browser, issue 13 items 5, 10 and 12b: the ε a release starts from, the warning before spending
almost everything, "Release again…" after a release, a mean counted once, and the downloaded script run
as downloaded on the uploaded file, spending from the same ledger (a server of its own, on its own ledger)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import expect

from dpdash.ledger import Ledger, fingerprint
from dpdash.loading import load_table
from tests.app.conftest import REPO_ROOT, example_identity, find_free_port, start_streamlit, stop_process
from tests.app.test_browser_ledger import wait_until_idle

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser


def _epsilon_shown(page: Page) -> str:
    """The value on the ε slider's thumb."""
    slider = page.get_by_test_id("stSlider").filter(has_text="ε for this release")
    return slider.get_by_test_id("stSliderThumbValue").inner_text()


def _choose(page: Page, label: str, option: str) -> None:
    page.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_until_idle(page)


def _type_epsilon(page: Page, epsilon: str) -> None:
    box = page.get_by_role("textbox", name="…or type an exact ε")
    box.fill(epsilon)
    box.press("Enter")
    wait_until_idle(page)


def _go(page: Page, title: str, marker: str) -> None:
    """To another page through the sidebar's navigation: the same browser session (a page.goto would
    start a new one, with the example table again)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()
    expect(page.get_by_text(marker).first).to_be_visible(timeout=60_000)
    wait_until_idle(page)


def _set_default_budget(page: Page) -> None:
    """On the Data page: the default tier, ε = 1, δ = 1e-5."""
    expect(page.get_by_text("3. Set the privacy budget")).to_be_visible(timeout=60_000)
    wait_until_idle(page)
    page.get_by_role("button", name="Set this budget (it cannot be changed later)").click()
    page.get_by_role("button", name="Confirm: set this budget").click()
    expect(page.get_by_text("A budget cannot be changed once set")).to_be_visible()
    wait_until_idle(page)


def _release(page: Page, button: str, confirm: str, done: str) -> None:
    page.get_by_role("button", name=button).click()
    page.get_by_role("button", name=confirm).click()
    expect(page.get_by_text(done).first).to_be_visible(timeout=60_000)
    wait_until_idle(page)


def _to_release_page(page: Page) -> None:
    _go(page, "Query & release", "Simulated preview · spends no budget")


def test_safe_defaults_no_repeat_and_the_script_through_the_ledger(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ledger_path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(ledger_path))
    csv = tmp_path / "survey.csv"
    csv.write_text(
        "age,answer\n" + "".join(f"{20 + i % 50},{'yes' if i % 3 else 'no'}\n" for i in range(300))
    )
    server = start_streamlit(find_free_port())
    page = browser.new_context(viewport={"width": 1400, "height": 2200}, accept_downloads=True).new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        url = server.url
        # The example table, default tier (ε = 1): the release starts at ε = 0.1, not the whole budget.
        page.goto(f"{url}/data")
        _set_default_budget(page)
        _to_release_page(page)
        assert _epsilon_shown(page) == "0.1"
        expect(page.get_by_text("would leave only")).to_have_count(0)
        _type_epsilon(page, "1")  # the whole budget: warned before any click
        expect(page.get_by_text("would leave only ε = 0.0000199")).to_be_visible()
        page.get_by_role("textbox", name="…or type an exact ε").fill("")
        page.get_by_role("textbox", name="…or type an exact ε").press("Enter")
        wait_until_idle(page)
        # A mean is one release, though the ledger has its sum and count pieces.
        _choose(page, "Query", "Mean")
        _release(page, "Release… (spends budget)", "Release now", "Released · mean")
        expect(page.get_by_test_id("stSidebar")).to_contain_text("1 release;")
        with Ledger(ledger_path) as ledger:
            assert ledger.status(example_identity()).entries == 2

        # An uploaded file: its budget, a count, then the button offers a repeat only as a repeat.
        _go(page, "Data", "1. Load a table")
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv))
        expect(page.get_by_test_id("stSidebar")).to_contain_text("survey.csv")
        wait_until_idle(page)
        _set_default_budget(page)
        _to_release_page(page)
        assert _epsilon_shown(page) == "0.1"
        _release(page, "Release… (spends budget)", "Release now", "Released · count")
        expect(page.get_by_role("button", name="Release… (spends budget)")).to_have_count(0)
        page.get_by_role("button", name="Release again… (spends budget again)").click()
        expect(page.get_by_text("This repeats the release you just made")).to_be_visible()
        expect(page.get_by_text("costs ε = 0.1 again")).to_be_visible()
        page.get_by_role("button", name="Cancel").click()
        wait_until_idle(page)

        with page.expect_download() as download:
            page.get_by_role("button", name="Python script (dpdash)").click()
        script = tmp_path / "reproduce_release.py"
        script.write_bytes(download.value.path().read_bytes())
        identity = fingerprint(load_table(csv.read_bytes(), csv.name).data)
        with Ledger(ledger_path) as ledger:
            before = ledger.status(identity)
        assert before.entries == 1

        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        run = [sys.executable, str(script), str(csv)]
        preview = subprocess.run([*run, "--preview"], capture_output=True, text=True, env=env, timeout=120)
        assert preview.returncode == 0, preview.stderr
        assert preview.stdout.startswith("SIMULATED PREVIEW")
        out = subprocess.run(run, capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=120)
        assert out.returncode == 0, out.stderr
        assert "Released: count of rows" in out.stdout and out.stdout.count(" ± ") == 1
        with Ledger(ledger_path) as ledger:
            after = ledger.status(identity)
        assert after.entries == 2 and after.spent.epsilon > before.spent.epsilon

        _go(page, "Budget", "Every accountant, side by side")  # the app sees the script's spend
        expect(page.get_by_test_id("stSidebar")).to_contain_text("survey.csv")
        expect(page.get_by_test_id("stSidebar")).to_contain_text("2 releases;")
        expect(page.get_by_test_id("stMetric").filter(has_text="releases")).to_contain_text("2")
        assert page.locator('[data-testid="stException"]').count() == 0
        assert errors == []
    finally:
        page.context.close()
        stop_process(server.process)
