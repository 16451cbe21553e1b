"""Real browser: every page fetches nothing from outside and passes axe-core (WCAG 2.2 AA), issue 14.

One server of its own (its own ledger: the default example with a budget and one release, so that the
Budget and Release pages show their charts and tables) is walked page by page in Chromium. On each page:
every request and websocket is recorded, axe-core (shipped inside the ``axe-playwright-python`` package,
injected into the page; it fetches nothing) is run, and the text of every chart is measured, which axe
does not check (Plotly draws it as SVG).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect

from dpdash.accounting import Budget, event_for
from dpdash.ledger import Ledger
from dpdash.mechanisms import Geometric
from tests.app.conftest import (
    NavPage,
    app_pages,
    example_identity,
    find_free_port,
    own_files_env,
    start_streamlit,
    stop_process,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser, Page

    from tests.app.conftest import StreamlitServer

pytestmark = [pytest.mark.browser, pytest.mark.walk(40)]

PAGES = app_pages()

BLOCKING_IMPACTS = ("serious", "critical")
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
AXE_OPTIONS = {"runOnly": {"type": "tag", "values": WCAG_TAGS}}
AA_TEXT, AA_LARGE_TEXT = 4.5, 3.0  # WCAG 2.2 SC 1.4.3; large: ≥ 24 px, or ≥ 18.66 px bold

# Serious or critical findings inside page content that other parts of issue 14 fix (charts: ui/charts.py
# and the chart pages; words: the text pages). Each is (url path, rule id) → where and the fix. The test
# fails if one of them is no longer found, so that this list shrinks as they are fixed.
# Violations known and not yet fixed, as {(page url path, rule id): what}; empty: every page passes.
KNOWN: dict[tuple[str, str], str] = {}

# Every text of a Plotly chart (axis ticks and titles, legend, annotations, chart title) with its colour,
# size and weight; Plotly draws on a transparent background over the page's white.
CHART_TEXT_JS = """() => [...document.querySelectorAll('.js-plotly-plot .main-svg text')]
  .filter(t => t.textContent.trim() && t.getBBox().width > 0)
  .map(t => { const s = getComputedStyle(t);
    return {text: t.textContent.trim().slice(0, 40), fill: s.fill, opacity: s.fillOpacity,
            size: parseFloat(s.fontSize), bold: parseInt(s.fontWeight) >= 700}; })"""


@dataclass(slots=True)
class PageVisit:
    """What one page showed: its axe violations and its chart texts."""

    nav_page: NavPage
    violations: list[dict[str, Any]] = field(default_factory=list)
    chart_texts: list[dict[str, Any]] = field(default_factory=list)
    exceptions: int = 0  # Streamlit's exception boxes on the page
    script_errors: list[str] = field(default_factory=list)  # uncaught JavaScript errors while it showed


@dataclass(slots=True)
class Walk:
    """Every page visited once on the server at ``url``, and every URL the browser asked for."""

    url: str
    visits: dict[str, PageVisit] = field(default_factory=dict)
    requested: list[str] = field(default_factory=list)
    favicon: str = ""
    deploy_buttons: int = 0
    nav_texts: list[str] = field(default_factory=list)
    nav_links_named: dict[str, int] = field(default_factory=dict)
    title: str = ""


def srgb_luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG relative luminance of an sRGB colour with 0–255 channels."""
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_on_white(css_color: str, opacity: float = 1.0) -> float:
    """WCAG contrast ratio of an ``rgb()``/``rgba()`` CSS colour, drawn at ``opacity``, on white."""
    parts = [float(v) for v in css_color[css_color.index("(") + 1 : -1].split(",")]
    alpha = (parts[3] if len(parts) == 4 else 1.0) * opacity
    rgb = tuple(round(alpha * c + (1 - alpha) * 255) for c in parts[:3])  # as the browser composites
    return 1.05 / (srgb_luminance(rgb) + 0.05)  # type: ignore[arg-type]


def test_contrast_on_white_matches_the_wcag_examples() -> None:
    assert contrast_on_white("rgb(0, 0, 0)") == pytest.approx(21.0)
    assert contrast_on_white("rgb(128, 132, 149)") == pytest.approx(3.72, abs=0.01)  # Plotly's axis grey
    assert contrast_on_white("rgba(27, 31, 36, 0.6)") == pytest.approx(4.37, abs=0.01)  # old captions


def wait_until_settled(page: Page) -> None:
    """The script run is over, no element is still arriving, and every chart is drawn."""
    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(
        1, timeout=90_000
    )
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0)
    charts = page.get_by_test_id("stPlotlyChart")
    for index in range(charts.count()):
        expect(charts.nth(index).locator(".main-svg").first).to_be_attached()
    page.wait_for_timeout(300)  # stale elements fade out over 300 ms after a run


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    """A server of its own; its ledger has the default example with a budget and one release."""
    folder = tmp_path_factory.mktemp("a11y")
    env = own_files_env(folder)
    with Ledger(env["DPDASH_LEDGER"]) as ledger:
        dataset = ledger.add_dataset(
            name="patients", fingerprint=example_identity(), budget=Budget(2.0, 1e-6)
        )
        ledger.spend(dataset, event_for(Geometric(epsilon=0.5, sensitivity=1), query="count"))
    started = start_streamlit(find_free_port(), env=env)
    try:
        yield started
    finally:
        stop_process(started.process)


@pytest.fixture(scope="module")
def walk(browser: Browser, server: StreamlitServer) -> Iterator[Walk]:
    """Visit every page in app.py's navigation, by its link in the sidebar as a person does (one page
    load: each page's first visit by URL is tests/app/test_browser_preload.py's); record requests, axe
    results, chart texts, exceptions and script errors."""
    result = Walk(url=server.url)
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    page = context.new_page()
    page.on("request", lambda request: result.requested.append(request.url))
    page.on("websocket", lambda socket: result.requested.append(socket.url))
    script_errors: list[str] = []
    page.on("pageerror", lambda error: script_errors.append(str(error)))
    axe = Axe()
    try:
        page.goto(server.url)
        for nav_page in PAGES:
            nav = page.get_by_test_id("stSidebarNav")
            nav.get_by_role("link", name=nav_page.title, exact=True).click()
            expect(page).to_have_url(f"{server.url}/{nav_page.url_path}")
            wait_until_settled(page)
            visit = PageVisit(nav_page)
            response = axe.run(page, options=AXE_OPTIONS)
            visit.violations = response.response["violations"]
            visit.chart_texts = page.evaluate(CHART_TEXT_JS)
            visit.exceptions = page.get_by_test_id("stException").count()
            visit.script_errors, script_errors[:] = list(script_errors), []
            result.visits[nav_page.url_path] = visit
        result.title = page.title()
        icon = page.locator('link[rel="shortcut icon"], link[rel="icon"]').first
        result.favicon = icon.get_attribute("href") or ""
        result.deploy_buttons = page.get_by_test_id("stAppDeployButton").count()
        nav = page.get_by_test_id("stSidebarNav")
        result.nav_texts = [text.strip() for text in nav.get_by_role("link").all_inner_texts()]
        result.nav_links_named = {
            p.title: nav.get_by_role("link", name=p.title, exact=True).count() for p in PAGES
        }
        yield result
    finally:
        context.close()


def test_nothing_is_fetched_from_outside(walk: Walk) -> None:
    """Every request and websocket of every page goes to the app's own host and port."""
    own = urlsplit(walk.url).netloc
    assert walk.requested, "no request was recorded"
    assert any(url.startswith("ws://") for url in walk.requested), "the websocket was not recorded"
    outside = sorted({url for url in walk.requested if urlsplit(url).netloc != own})
    assert outside == []


def test_every_page_shows_without_an_exception_or_a_script_error(walk: Walk) -> None:
    """Each page, in Chromium: no Streamlit exception box, no uncaught JavaScript error, the app's title."""
    problems = {
        path: (visit.exceptions, visit.script_errors)
        for path, visit in walk.visits.items()
        if visit.exceptions or visit.script_errors
    }
    assert problems == {} and walk.title == "dpdash", (problems, walk.title)


def test_favicon_is_local_and_there_is_no_deploy_button(walk: Walk) -> None:
    assert walk.favicon.startswith(("data:image/svg+xml", walk.url, "/")), walk.favicon
    assert walk.deploy_buttons == 0


def test_navigation_links_are_named_by_their_titles_alone(walk: Walk) -> None:
    """A screen reader reads "Budget", not "account_balance_wallet Budget": Streamlit 1.67 hides the icon
    from the accessible name, but its ligature stays in the link's text (copy, find, reading modes)."""
    assert walk.nav_texts == [p.title for p in PAGES]
    assert walk.nav_links_named == {p.title: 1 for p in PAGES}


def _blocking(visit: PageVisit) -> dict[str, str]:
    """The serious and critical axe violations of one page: rule id → first targets and message."""
    found = {}
    for violation in visit.violations:
        if violation["impact"] in BLOCKING_IMPACTS:
            nodes = violation["nodes"]
            targets = "; ".join(str(node["target"]) for node in nodes[:3])
            found[violation["id"]] = f"{len(nodes)} × {targets}: {nodes[0]['failureSummary'][:300]}"
    return found


def _chart_text_problems(visit: PageVisit) -> list[str]:
    problems = []
    for text in visit.chart_texts:
        ratio = contrast_on_white(text["fill"], float(text["opacity"] or 1))
        large = text["size"] >= 24 or (text["size"] >= 18.66 and text["bold"])
        if ratio < (AA_LARGE_TEXT if large else AA_TEXT):
            problems.append(f"{text['text']!r} {text['fill']} {ratio:.2f}:1")
    return sorted(set(problems))


@pytest.mark.parametrize("nav_page", PAGES, ids=[p.url_path or "home" for p in PAGES])
def test_page_has_no_serious_accessibility_violation(walk: Walk, nav_page: NavPage) -> None:
    """axe-core's WCAG 2.0–2.2 A/AA and best-practice rules, and 4.5:1 for chart text, on this page."""
    visit = walk.visits[nav_page.url_path]
    found = _blocking(visit)
    if problems := _chart_text_problems(visit):
        found["chart-text-contrast"] = "; ".join(problems[:6])
    known = {rule for (path, rule) in KNOWN if path == nav_page.url_path}
    assert {rule: why for rule, why in found.items() if rule not in known} == {}
    assert known <= found.keys(), f"fixed, remove from KNOWN: {sorted(known - found.keys())}"
