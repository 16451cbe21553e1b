"""Real-browser walk: Debian's Chromium, driven by Playwright, against a live server."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from dpdash.ledger import Ledger
from dpdash.report import figure, released_values
from dpdash.report_pdf import page_count
from tests.app.conftest import wait_until_idle

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.walk(45)]


def _sidebar(page: Page) -> str:
    return page.get_by_test_id("stSidebar").inner_text()


def _choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` in the selectbox labelled ``label``. Right after a release the first click can
    open the list while the page is still settling, which closes it again: then it is opened again."""
    box = page.get_by_test_id("stSelectbox").filter(has_text=label).first
    wanted = page.get_by_role("option", name=option, exact=True)
    for _ in range(3):
        box.click()
        try:
            wanted.wait_for(state="visible", timeout=3_000)
            break
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
    wanted.click()
    wait_until_idle(page)


def test_release_walk_spends_the_budget_and_survives_a_reload(
    page: Page, streamlit_server, screenshot_dir: Path
) -> None:
    """Load the example (the default), set its budget, preview a histogram, release it, see the
    sidebar's spent budget change, reload the browser and see it kept (the ledger persists)."""
    page_errors: list[str] = []
    page.on("pageerror", lambda exc: page_errors.append(str(exc)))
    page.set_viewport_size({"width": 1400, "height": 2400})

    page.goto(f"{streamlit_server.url}/data")
    expect(page.get_by_text("1. Load a table")).to_be_visible()
    wait_until_idle(page)
    expect(page.get_by_test_id("stSidebar")).to_contain_text("No budget set")
    page.get_by_role("button", name="Set this budget (it cannot be changed later)").click()
    page.get_by_role("button", name="Confirm: set this budget").click()
    expect(page.get_by_text("A budget cannot be changed once set")).to_be_visible()
    wait_until_idle(page)
    expect(page.get_by_test_id("stSidebar")).to_contain_text("0 releases;")
    page.screenshot(path=str(screenshot_dir / "data.png"))

    page.goto(f"{streamlit_server.url}/release")
    expect(page.get_by_text("Simulated preview · spends no budget")).to_be_visible()
    wait_until_idle(page)
    epsilon_box = page.get_by_role("textbox", name="…or type an exact ε")
    epsilon_box.fill("0.3")
    epsilon_box.press("Enter")
    wait_until_idle(page)
    _choose(page, "Query", "Histogram")
    _choose(page, "Mechanism", "Geometric")
    expect(page.get_by_text("Possible releases (simulated: spends no budget)").first).to_be_visible()
    page.screenshot(path=str(screenshot_dir / "release-preview.png"))
    page.get_by_role("button", name="Release… (spends budget)").click()
    expect(page.get_by_text("This cannot be undone")).to_be_visible()
    page.get_by_role("button", name="Release now").click()
    expect(page.get_by_text("Released · histogram")).to_be_visible()
    wait_until_idle(page)
    expect(page.get_by_test_id("stSidebar")).to_contain_text("1 release;")
    assert "spent ε = 0 " not in _sidebar(page)
    page.screenshot(path=str(screenshot_dir / "release-done.png"))

    # A second release: the count of patients.
    _choose(page, "Query", "Count")
    page.get_by_role("button", name="Release… (spends budget)").click()
    page.get_by_role("button", name="Release now").click()
    expect(page.get_by_text("Released · count")).to_be_visible()
    wait_until_idle(page)
    expect(page.get_by_test_id("stSidebar")).to_contain_text("2 releases;")

    page.reload()
    expect(page.get_by_text("Simulated preview · spends no budget")).to_be_visible()
    wait_until_idle(page)
    expect(page.get_by_test_id("stSidebar")).to_contain_text("2 releases;")

    page.goto(f"{streamlit_server.url}/budget")
    expect(page.get_by_text("Every accountant, side by side")).to_be_visible()
    wait_until_idle(page)
    expect(page.get_by_test_id("stMetric").filter(has_text="releases")).to_contain_text("2")
    with page.expect_download() as download:
        page.get_by_role("button", name="Stakeholder report (one-page HTML)").click()
    report = download.value.path().read_text()
    assert "What was released (2)" in report and "histogram of diabetes" in report
    # Made in a later browser session (reload and goto each start one): the values come from the ledger.
    assert "Values not in the ledger" not in report
    with Ledger() as ledger:  # the server's ledger ($DPDASH_LEDGER), shared by this test session's server
        title = "<title>Privacy report: {}</title>"
        (dataset,) = [d for d in ledger.datasets() if title.format(html.escape(d.name)) in report]
        released = released_values(ledger.published(dataset))
    assert len(released) == 2
    for made in released.values():
        for value, width in zip(made.values, made.accuracy.half_widths, strict=True):
            shown = str(value) if isinstance(value, int) else figure(value, 6)
            assert f"{shown} ± {figure(width, 4)}</b>" in report
    # The same report as a PDF, printed by the server's Chromium on the click: one page.
    wait_until_idle(page)
    with page.expect_download() as download:
        page.get_by_role("button", name="Download PDF").click()
    pdf = download.value.path().read_bytes()
    assert pdf.startswith(b"%PDF-") and page_count(pdf) == 1 and b"/Title (Privacy report: " in pdf

    page.screenshot(path=str(screenshot_dir / "budget.png"))
    for title, marker, name in [
        ("Planner", "What if?", "planner"),
        ("Mechanism explorer", "What ε does an accuracy cost?", "explorer"),
        ("What does ε mean?", "Worked examples from the textbook", "risk"),
    ]:
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()
        expect(page.get_by_text(marker)).to_be_visible()
        wait_until_idle(page)
        page.screenshot(path=str(screenshot_dir / f"{name}.png"))

    assert page.locator('[data-testid="stException"]').count() == 0
    assert page_errors == []


def test_a_large_upload_says_which_step_is_running(page: Page, streamlit_server, tmp_path: Path) -> None:
    """An 18 MB CSV the test writes: while it is parsed the page says so (not only Streamlit's corner
    icon), then it becomes the active table with its row count."""
    import numpy as np
    import pandas as pd

    rows = 1_000_000
    generator = np.random.default_rng(14)
    big = tmp_path / "large visits.csv"
    pd.DataFrame({
        "person": generator.integers(0, 300_000, rows), "age": generator.integers(18, 95, rows),
        "cost": generator.normal(250, 80, rows).round(2), "ward": generator.choice(["A", "B", "C"], rows),
    }).to_csv(big, index=False)  # fmt: skip
    assert big.stat().st_size > 15e6
    # What the server sends, frame by frame: the parsing step's label may be on screen for less time than
    # the browser takes to paint it on a busy machine, but it must have been sent while parsing.
    frames: list[bytes] = []

    def record(frame: bytes | str) -> None:
        frames.append(frame if isinstance(frame, bytes) else frame.encode())

    page.on("websocket", lambda ws: ws.on("framereceived", record))
    page.goto(f"{streamlit_server.url}/data")
    expect(page.get_by_text("1. Load a table")).to_be_visible()
    wait_until_idle(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(big))
    expect(page.get_by_test_id("stSidebar")).to_contain_text("large visits.csv", timeout=120_000)
    steps = [re.search(rb"Reading large visits\\?\.csv: (parsing \d+(\.\d+)? MB|[\d,]+ rows; computing its "
                       rb"fingerprint|keeping it in the workspace)", frame) for frame in frames]  # fmt: skip
    shown = [m.group(1).split(b" ")[0] for m in steps if m]
    assert shown[:1] == [b"parsing"] and b"keeping" in shown, shown  # each step said in order
    wait_until_idle(page)
    expect(page.get_by_text("1,000,000 rows").first).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0


def test_audit_page_runs_the_default_audit(page: Page, streamlit_server, screenshot_dir: Path) -> None:
    """Open the Audit page, run the default audit (Laplace, ε = 1, 100 000 trials per side, 99%), and
    see the verdict, the bound and the charts, with no exception."""
    page_errors: list[str] = []
    page.on("pageerror", lambda exc: page_errors.append(str(exc)))
    page.set_viewport_size({"width": 1400, "height": 2250})

    page.goto(f"{streamlit_server.url}/audit")
    expect(page.get_by_text("Every trial is a real release")).to_be_visible()
    wait_until_idle(page)
    page.get_by_role("button", name="Run audit").click()
    expect(page.get_by_text("Consistent with the claim: with 99% confidence")).to_be_visible(timeout=60_000)
    wait_until_idle(page)
    expect(page.get_by_test_id("stMetric").filter(has_text="ε lower bound (99% confidence)")).to_be_visible()
    expect(page.get_by_test_id("stMetric").filter(has_text="trials per side")).to_contain_text("100 000")
    expect(page.get_by_text("Where the outputs fall").first).to_be_visible()
    expect(page.get_by_text("The bound as the evidence accumulates").first).to_be_visible()
    expect(page.get_by_role("button", name="Add 100 000 more trials")).to_be_enabled()
    page.screenshot(path=str(screenshot_dir / "audit.png"), full_page=True)

    assert page.locator('[data-testid="stException"]').count() == 0
    assert page_errors == []
