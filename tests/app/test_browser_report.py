"""Real browser: the stakeholder report as Chromium renders it. What a reader sees first: the released
values with their ±, who is protected, the budget left; the technical details only when opened."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest

from dpdash.accounting import Budget
from dpdash.facts import Facts
from dpdash.ledger import Ledger, fingerprint
from dpdash.mechanisms import Geometric, Laplace
from dpdash.queries import Count, Histogram, Mean
from dpdash.release import release
from dpdash.report import print_zoom, released_values, stakeholder_report
from dpdash.report_pdf import page_count, render_pdf
from dpdash.rounding import published_figures
from dpdash.wording import guarantee

if TYPE_CHECKING:
    from playwright.sync_api import Page

FACTS = Facts(rows_per_person=3, id_column="patient")


def _report(tmp_path: Path) -> tuple[str, list]:  # type: ignore[type-arg]
    df = pd.DataFrame({
        "patient": [1, 1, 2, 3, 3, 3, 4, 5] * 25,
        "age": [34, 35, 51, 67, 67, 68, 22, 45] * 25,
        "ward": ["A", "A", "B", "C", "C", "C", "A", "<b>B&amp;</b>"] * 25,
    })  # fmt: skip
    queries = [
        (Count(facts=FACTS), Geometric, 0.2),
        (Histogram(column="ward", categories=["A", "B", "C", "<b>B&amp;</b>"], facts=FACTS), Laplace, 0.3),
        (Mean(column="age", bounds=(0, 100), facts=FACTS), Laplace, 0.2),
    ]
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="Ward <survey> 2026", fingerprint=fingerprint(df),
                                budget=Budget(1.0, 1e-5), accountant="tightest", unit=FACTS)  # fmt: skip
        made = []
        for query, mechanism, epsilon in queries:
            result = release(query, mechanism, df, epsilon=epsilon, identity=fingerprint(df))
            made.append(result)
            ledger.spend_release(ds, result)
        released = released_values(ledger.published(ds))
        page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=FACTS, released=released)
        spent = ledger.status(ds).spent.epsilon
    return page, [made, spent]


@pytest.mark.browser
def test_report_reads_right_in_chromium(page: Page, tmp_path: Path, screenshot_dir: Path) -> None:
    html, (made, spent) = _report(tmp_path)
    page.set_content(html)
    page.screenshot(path=str(screenshot_dir / "stakeholder_report.png"), full_page=True)
    text = " ".join(page.inner_text("body").split())
    assert page.title() == "Privacy report: Ward <survey> 2026"
    for result in made:
        shown = published_figures(result)  # rounded as everywhere: to what each ± supports
        for label, value, width in zip(result.labels, shown.texts, shown.half_width_texts, strict=True):
            assert f"{label}: {value} ± {width}" in text  # the hostile label is shown as text
            assert "e+" not in value + width
    assert "With probability at least 95%, the released value is within ± of the true value." in text
    each = "With probability at least 95%, each released value is within its ± of its true value"
    assert f"± each value (95% confidence). {each}; all 5 at once are within ± " in text
    plain = guarantee(FACTS, spent, 1e-5, scope="the 3 releases together", accountant="tightest").plain
    assert f"Who is protected. {plain}" in text
    assert f"Budget remaining: ε = {max(0.0, 1 - spent):.4g} of 1." in text
    assert "What was released (3)" in text
    # The technical block is folded: no accountant table or definition until it is opened.
    assert "zcdp" not in text and "Pr[M(x) ∈ S]" not in text
    page.get_by_text("Technical details").click()
    opened = " ".join(page.inner_text("body").split())
    assert "zcdp" in opened and "Pr[M(x) ∈ S] ≤ e^ε · Pr[M(x′) ∈ S] + δ" in opened
    assert "in force: this is the budget spent" in opened
    assert page.locator("img, script").count() == 0  # the hostile names stayed text
    page.screenshot(path=str(screenshot_dir / "stakeholder_report_details.png"), full_page=True)


def _pdf_title(pdf: bytes) -> str:
    """The document title Chromium writes into the PDF's information dictionary (a literal string, or
    UTF-16 in hex when it is not ASCII)."""
    found = re.search(rb"/Title\s*(\((?:\\.|[^\\)])*\)|<[0-9A-Fa-f]+>)", pdf)
    assert found is not None, "the PDF has no /Title"
    raw = found.group(1)
    if raw.startswith(b"<"):
        return bytes.fromhex(raw[1:-1].decode()).decode("utf-16")
    return re.sub(rb"\\(.)", rb"\1", raw[1:-1]).decode("latin-1")


def _long_report(tmp_path: Path) -> str:
    """Eight releases of twelve values with long labels: far more than one page at full size."""
    categories = [f"a rather long category name {i}" for i in range(12)]
    df = pd.DataFrame({"x": categories * 3})
    with Ledger(tmp_path / "long.sqlite") as ledger:
        ds = ledger.add_dataset(name="Long report", fingerprint=fingerprint(df), budget=Budget(5.0, 0.0),
                                accountant="basic")  # fmt: skip
        for _ in range(8):
            made = release(Histogram(column="x", categories=categories), Laplace, df, epsilon=0.1,
                           identity=fingerprint(df))  # fmt: skip
            ledger.spend_release(ds, made)
        return stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=Facts(),
                                  released=released_values(ledger.published(ds)))  # fmt: skip


@pytest.mark.browser
def test_the_pdf_is_one_page_with_the_reports_title(tmp_path: Path) -> None:
    """render_pdf runs Debian's Chromium headless (as tests/app/conftest.py does): a PDF of one page whose
    title is the report's; a long report shrinks onto one page too, on A4 and on Letter."""
    html, _ = _report(tmp_path)
    pdf = render_pdf(html)
    assert pdf.startswith(b"%PDF-") and page_count(pdf) == 1
    assert _pdf_title(pdf) == "Privacy report: Ward <survey> 2026"
    long = _long_report(tmp_path)
    assert print_zoom([12] * 8) < 0.5  # it would not fit unzoomed
    for paper in ("A4", "Letter"):
        pdf = render_pdf(long, paper=paper)
        assert page_count(pdf) == 1 and _pdf_title(pdf) == "Privacy report: Long report"


@pytest.mark.browser
def test_the_html_report_prints_on_one_page_from_the_browser(page: Page, tmp_path: Path) -> None:
    """Printed from a browser as it is (its own print stylesheet, no retry): one page of A4 or Letter, the
    charts in colour, the technical details left out."""
    for html in (_report(tmp_path)[0], _long_report(tmp_path)):
        page.set_content(html)
        for paper in ("A4", "Letter"):
            assert page_count(page.pdf(format=paper, print_background=True)) == 1
        page.emulate_media(media="print")
        assert not page.get_by_text("Ledger entries").is_visible()
        assert page.locator("svg.chart").first.is_visible()
        page.emulate_media(media="null")  # page.pdf prints with print media again
