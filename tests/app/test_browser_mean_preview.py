"""Real-browser check (Debian's Chromium) that the Query & release page shows, before any release, the
± of a mean (with its definition) and the preview of a numeric histogram, on a table of our own.

The CSV is written by the test and uploaded on the Data page. Its public facts (bounds and categories)
are then declared by a test helper through the library (``ui.state.use_table`` with a ``PublicFacts``),
not through the Data page's bounds grid: for an uploaded table that grid currently hands the page its
numbers as text ("lower bound must be a real number, got '100' (str)"), which another branch is
fixing. The helper runs in the app's own process, as a thin entry point beside ``app.py`` that declares
the facts once the upload is the active table and then runs ``app.py`` unchanged.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import expect

from tests.app.conftest import (
    REPO_ROOT,
    StreamlitServer,
    find_free_port,
    start_streamlit,
    stop_process,
    wait_until_idle,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.browser

FILE_NAME = "heights-of-our-own.csv"
FACTS = {"table": FILE_NAME, "bounds": {"height": [140, 210]}, "categories": {"clinic": ["north", "south"]}}
ENTRY = f"""\
# Test-only entry point written by {Path(__file__).name}: declares the public facts of the uploaded
# table through the library, then runs app.py unchanged.
import json
import os
import runpy

import streamlit as st

from dpdash.datasets import PublicFacts
from dpdash.facts import Facts
from ui.state import use_table

spec = json.loads(os.environ["DPDASH_TEST_FACTS"])
table = st.session_state.get("dpdash_dataset")
if table is not None and table.name == spec["table"] and not table.facts.bounds:
    facts = PublicFacts(
        bounds={{k: tuple(v) for k, v in spec["bounds"].items()}},
        categories={{k: tuple(v) for k, v in spec["categories"].items()}},
        unit=Facts(),
    )
    use_table(table.name, table.source, table.data, facts, identity=table.identity)
runpy.run_path("app.py", run_name="__main__")
"""


@pytest.fixture
def facts_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[StreamlitServer]:
    entry = REPO_ROOT / "_browser_mean_preview_app.py"  # beside app.py: the pages resolve from there
    entry.write_text(ENTRY)
    monkeypatch.setenv("DPDASH_TEST_FACTS", json.dumps(FACTS))
    try:
        server = start_streamlit(find_free_port(), script=entry.name)
        try:
            yield server
        finally:
            stop_process(server.process)
    finally:
        entry.unlink(missing_ok=True)


def _choose(page: Page, label: str, option: str) -> None:
    page.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_until_idle(page)


def _metric(page: Page, label: str) -> str:
    return (
        page.get_by_test_id("stMetric")
        .filter(has_text=label)
        .first.get_by_test_id("stMetricValue")
        .inner_text()
    )


def test_mean_and_numeric_histogram_previews_before_any_release(
    page: Page, facts_server: StreamlitServer, screenshot_dir: Path
) -> None:
    rng = np.random.default_rng(442)
    table = pd.DataFrame(
        {"height": np.round(rng.normal(172, 9, 442), 2), "clinic": rng.choice(["north", "south"], 442)}
    )
    buffer = io.StringIO()
    table.to_csv(buffer, index=False)
    page_errors: list[str] = []
    page.on("pageerror", lambda exc: page_errors.append(str(exc)))
    page.set_viewport_size({"width": 1400, "height": 2400})

    page.goto(f"{facts_server.url}/data")
    expect(page.get_by_text("1. Load a table")).to_be_visible(timeout=60_000)
    wait_until_idle(page)
    page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(
        files=[{"name": FILE_NAME, "mimeType": "text/csv", "buffer": buffer.getvalue().encode()}]
    )
    wait_until_idle(page)
    expect(page.get_by_test_id("stMain")).to_contain_text(f"Active table: {FILE_NAME}")

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Query & release").click()
    wait_until_idle(page)
    expect(page.get_by_text("Simulated preview · spends no budget")).to_be_visible()
    expect(page.get_by_test_id("stMain")).to_contain_text(f"Table: {FILE_NAME}")

    # The mean: its own ±, with what it means, before anything is released.
    _choose(page, "Query", "Mean")
    main = page.get_by_test_id("stMain")
    expect(main).to_contain_text("± definition (simulated preview)")
    text = main.inner_text()
    assert re.search(r"4,000 possible releases \(seeded numpy draws, seed \d+", text)
    assert "Monte Carlo standard error of ±a ≈" in text
    half_width = float(_metric(page, "± each value (95%)"))
    assert 0 < half_width < 70  # a real ± for the mean of heights in [140, 210], not a piece's
    assert _metric(page, "relative error").endswith("%")
    expect(
        page.get_by_text("Possible releases (simulated: spends no budget) · dots: from 4,000").first
    ).to_be_visible()
    assert "Released ·" not in text and "Release now" not in text
    wait_until_idle(page)
    page.screenshot(path=str(screenshot_dir / "release-mean-preview.png"))

    # A histogram of the numeric column over public bins from its declared bounds.
    _choose(page, "Query", "Histogram")
    # The histogram of the first column (the categorical one: 2 declared cells) replaces the mean's
    # preview; wait for it, so that a slow rerun cannot leave the mean's column box under the click.
    expect(page.get_by_test_id("stMetric").filter(has_text="± all 2 at once")).to_be_visible()
    wait_until_idle(page)
    _choose(page, "Column", "height (numeric: public bins)")
    expect(main).to_contain_text("10 public bins over the declared bounds [140, 210] of height")
    expect(main).to_contain_text("± definition (exact)")
    assert float(_metric(page, "± all 10 at once")) > 0
    expect(main).to_contain_text("(other) (values outside the declared categories or bins, shown apart)")
    expect(
        page.get_by_text("Possible releases (simulated: spends no budget) · dots: exact quantiles").first
    ).to_be_visible()
    wait_until_idle(page)
    page.screenshot(path=str(screenshot_dir / "release-numeric-histogram-preview.png"))

    assert page.locator('[data-testid="stException"]').count() == 0
    assert page_errors == []
