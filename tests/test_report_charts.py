"""The stakeholder report's charts: one per release, drawing exactly the values and ± the report prints;
the budget bar drawing the ledger's totals; text alternatives; WCAG AA colours; the one-page print
layout; and a clear error when there is no Chromium to print the PDF with."""

from __future__ import annotations

import html
import itertools
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from dpdash.accounting import Budget
from dpdash.errors import RenderError
from dpdash.facts import Facts
from dpdash.ledger import Ledger, fingerprint
from dpdash.mechanisms import Geometric, Laplace, ReportNoisyMax
from dpdash.queries import Count, Histogram, Mean, Mode
from dpdash.release import Release, release
from dpdash.report import print_zoom, released_values, stakeholder_report
from dpdash.report_charts import COLOURS, half_width_definition
from dpdash.report_pdf import render_pdf
from dpdash.rounding import published_figures

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<b>B&amp;</b>"


def _ledger_report(tmp_path: Path, *, mode: bool = False) -> tuple[str, list[Release], Ledger, object]:
    df = pd.DataFrame({"ward": ["A", "A", "B", "C", HOSTILE] * 40, "age": [34, 51, 67, 22, 45] * 40})
    queries = [
        (Count(), Geometric, 0.2),
        (Histogram(column="ward", categories=["A", "B", "C", HOSTILE]), Laplace, 0.3),
        (Mean(column="age", bounds=(0, 100)), Laplace, 0.2),
    ]
    if mode:
        queries.append((Mode(column="ward", categories=["A", "B", "C"]), ReportNoisyMax, 0.1))
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ds = ledger.add_dataset(name="wards", fingerprint=fingerprint(df), budget=Budget(2.0, 1e-6),
                            accountant="basic")  # fmt: skip
    made = []
    for query, mechanism, epsilon in queries:
        made.append(release(query, mechanism, df, epsilon=epsilon, identity=fingerprint(df)))
        ledger.spend_release(ds, made[-1])
    page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=Facts(),
                              released=released_values(ledger.published(ds)))  # fmt: skip
    return page, made, ledger, ds


def _charts(page: str) -> list[ET.Element]:
    return [ET.fromstring(svg) for svg in re.findall(r"<svg .*?</svg>", page, flags=re.S)]


def _text(element: ET.Element) -> str:
    return "".join(element.itertext())


def test_one_chart_per_release_draws_the_printed_values_and_their_plus_minus(tmp_path: Path) -> None:
    page, made, ledger, _ = _ledger_report(tmp_path)
    ledger.close()
    flat = " ".join(page.split())
    charts = [c for c in _charts(page) if c.get("class") == "chart"]
    assert len(charts) == len(made) == 3
    for number, (chart, result) in enumerate(zip(charts, made, strict=True), start=1):
        assert chart.get("role") == "img"
        assert chart.get("aria-labelledby") == f"release-{number}-t release-{number}-d"
        low, high = float(chart.get("data-low")), float(chart.get("data-high"))
        left, right = float(chart.get("data-left")), float(chart.get("data-right"))
        dots = chart.findall(f"{SVG}circle")
        bars = [line for line in chart.findall(f"{SVG}line") if line.get("class") == "pm"]
        assert len(dots) == len(bars) == len(result.values)
        described = _text(chart.find(f"{SVG}desc"))
        shown = published_figures(result)
        texts = (shown.texts, shown.half_width_texts)
        figures = zip(result.labels, result.values, *texts, dots, bars, strict=True)
        for label, value, printed, plus_minus, dot, bar in figures:
            # What the chart states is what the report's text states (escaped the same way) ...
            assert (dot.get("data-value"), dot.get("data-pm")) == (printed, plus_minus)
            assert f"{html.escape(label)}: <b>{printed} ± {plus_minus}</b>" in flat
            assert f"{label}: {printed} ± {plus_minus}" in described
            # ... and what it draws is that printed figure, measured on its axis.
            drawn = low + (float(dot.get("cx")) - left) / (right - left) * (high - low)
            assert drawn == pytest.approx(float(printed.replace(",", "")), abs=(high - low) * 1e-3)
            half = (float(bar.get("x2")) - float(bar.get("x1"))) / (right - left) * (high - low) / 2
            assert half == pytest.approx(float(plus_minus.replace(",", "")), abs=(high - low) * 1e-3)
            # rounding only: at most half a unit of the ±'s second significant digit
            assert abs(value - float(printed)) <= float(plus_minus) * 0.05 + 1e-12
        # The ± is labelled with its definition: scope, confidence, exact or simulated.
        definition = half_width_definition(result.accuracy)
        assert definition in described
        assert definition.split(": ")[1] in _text(chart)
    assert "95% confidence, simulated" in _text(charts[2])  # the mean's ± is simulated
    assert "95% confidence, exact" in _text(charts[0])
    assert "<img" not in page and "<b>B&amp;</b>" not in page  # the hostile label stays text in the chart


def test_the_budget_chart_draws_the_ledgers_totals(tmp_path: Path) -> None:
    page, _, ledger, ds = _ledger_report(tmp_path)
    with ledger:
        spent = ledger.totals(ds)["basic"].epsilon
        status = ledger.status(ds)
    (chart,) = [c for c in _charts(page) if c.get("class") == "chart budget"]
    assert spent == pytest.approx(0.7) and status.spent.epsilon == pytest.approx(spent)
    assert chart.get("data-spent") == f"{spent:.4g}" == "0.7"
    assert chart.get("data-remaining") == f"{status.remaining_epsilon:.4g}" == "1.3"
    assert chart.get("data-budget") == "2"
    flat = " ".join(page.split())
    assert "Budget remaining: ε = 1.3 of 2.</b> Spent so far: ε = 0.7" in flat
    outline, bar = chart.findall(f"{SVG}rect")
    assert float(bar.get("width")) / float(outline.get("width")) == pytest.approx(0.7 / 2, abs=1e-4)
    described = _text(chart.find(f"{SVG}desc"))
    assert described == ("Budget ε = 2 (δ = 1e-06) under the basic accountant: spent ε = 0.7; "
                         "remaining ε = 1.3.")  # fmt: skip
    assert "as the basic accountant counts it" in _text(chart)


def test_a_release_of_a_category_is_listed_without_a_chart(tmp_path: Path) -> None:
    page, made, ledger, _ = _ledger_report(tmp_path, mode=True)
    ledger.close()
    assert isinstance(made[-1].values[0], str)
    assert len([c for c in _charts(page) if c.get("class") == "chart"]) == 3  # the mode has none
    assert "What was released (4)" in page


def _luminance(colour: str) -> float:
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(a: str, b: str = "#ffffff") -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_chart_colours_pass_wcag_aa(tmp_path: Path) -> None:
    """Text 4.5:1 against white (WCAG 1.4.3), marks 3:1 (1.4.11); the report's box is #f3f5f8, checked
    too, since the budget chart sits on it."""
    assert _contrast("#000000") == pytest.approx(21.0)  # the formula, on a known pair
    assert _contrast("#767676") == pytest.approx(4.54, abs=0.01)
    page, _, ledger, _ = _ledger_report(tmp_path)
    ledger.close()
    seen = 0
    for chart in _charts(page):
        for element in chart.iter():
            for attribute in ("fill", "stroke"):
                colour = element.get(attribute)
                if colour is None or colour == "#ffffff":
                    continue
                need = 4.5 if element.tag == f"{SVG}text" else 3.0
                assert min(_contrast(colour), _contrast(colour, "#f3f5f8")) >= need, (element.tag, colour)
                seen += 1
    assert seen > 20 and set(COLOURS.values()) <= set(re.findall(r"#[0-9a-f]{6}", page))


def test_the_print_layout_fits_one_page() -> None:
    """The printed report zooms to its estimated height; the technical details are not printed."""
    assert print_zoom([]) == 1.0 and print_zoom([1, 3]) == 1.0
    zooms = [print_zoom([12] * n) for n in (2, 4, 8, 16)]
    assert zooms == sorted(zooms, reverse=True) and zooms[-1] < 0.25


def test_print_stylesheet_in_the_report(tmp_path: Path) -> None:
    page, made, ledger, _ = _ledger_report(tmp_path)
    ledger.close()
    zoom = print_zoom([len(r.values) for r in made])
    assert f"zoom:{zoom}" in page and "@page{margin:12mm}" in page
    assert "details{display:none}" in page.split("@media print")[1]
    assert "<script" not in page and "http" not in page.split("<body>")[0]  # nothing fetched


def test_no_chromium_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "no-chromium"
    monkeypatch.setenv("DPDASH_CHROMIUM", str(missing))
    with pytest.raises(RenderError, match=f"Chromium was not found at {re.escape(str(missing))}"):
        render_pdf("<html><head></head><body>x</body></html>")
    with pytest.raises(RenderError, match="paper must be one of A4, Letter, got paper='A3'"):
        render_pdf("<html></html>", paper="A3")


@pytest.mark.parametrize(
    "low, high", [(-1900, 1900), (-60, 60), (0.01, 0.02), (44, 46), (-2.6, 48), (1e5, 1.3e5)]
)
def test_axis_ticks_are_few_round_and_inside(low: float, high: float) -> None:
    from dpdash.report_charts import _ticks

    ticks = _ticks(low, high)
    assert 2 <= len(ticks) <= 4 and low <= ticks[0] and ticks[-1] <= high
    steps = {round(b - a, 12) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1 and f"{steps.pop():.3g}".lstrip("0.")[0] in "125"
