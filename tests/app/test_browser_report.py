"""Real browser: the stakeholder report as Chromium renders it. What a reader sees first: the released
values with their ±, who is protected, the budget left; the technical details only when opened."""

from __future__ import annotations

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
from dpdash.report import figure, released_values, stakeholder_report
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
        widths = result.accuracy.half_widths
        for label, value, width in zip(result.labels, result.values, widths, strict=True):
            shown = str(value) if isinstance(value, int) else figure(value, 6)
            assert f"{label}: {shown} ± {figure(width, 4)}" in text  # the hostile label is shown as text
            assert "e+" not in shown + figure(width, 4)
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
