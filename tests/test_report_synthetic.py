"""The stakeholder report's charts of a synthetic release: drawn from the published table only (its bars are
the released table's frequencies, its heatmap the released table's associations), the NOT PRIVATE quality
figures only when the owner's kept data card holds them, and the report still prints on one PDF page."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdash.facts import Facts
from dpdash.ledger import Budget, Ledger, fingerprint
from dpdash.report import stakeholder_report, synthetic_records
from dpdash.report_pdf import find_chromium, page_count, render_pdf
from dpdash.report_synthetic import read_released, released_counts, synthetic_charts
from dpdash.synthetic import quality, synthesize
from dpdash.synthetic.quality import QUALITY_LABEL, association
from dpdash.workspace import Workspace
from tests.synthetic.helpers import facts, table
from ui.synthetic_card import card_dict

COLUMNS = ["colour", "shape", "size"]
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return table(5, rows=2000)


@pytest.fixture(scope="module")
def made(df: pd.DataFrame):  # type: ignore[no-untyped-def]
    """A ledger with one synthetic release, its record, its CSV and the preview's quality figures."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="dpdash-report-synthetic-"))
    ledger = Ledger(folder / "ledger.sqlite")
    ds = ledger.add_dataset(name="t", fingerprint=fingerprint(df), budget=Budget(3.0, 1e-6),
                            accountant="zcdp")  # fmt: skip
    s = synthesize(df, facts(), epsilon=1.0, delta=1e-6, columns=COLUMNS, identity=fingerprint(df))
    ledger.spend_release(ds, s)
    preview = quality(df, synthesize(df, facts(), epsilon=1.0, delta=1e-6, rng=4, columns=COLUMNS))
    (uid, record), = synthetic_records(ledger.published(ds)).items()
    return ledger, ds, s, uid, record, preview


def _svgs(page: str, css: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(rf'<svg[^>]*class="chart {css}".*?</svg>', page, re.S)]


def test_the_bars_are_the_released_tables_frequencies(made) -> None:  # type: ignore[no-untyped-def]
    _, _, s, _, record, _ = made
    html, _ = synthetic_charts(record, s.to_csv(), None, "x")
    (chart,) = _svgs(html, "synthetic-oneway")
    drawn: dict[str, dict[str, int]] = {}
    for bar in chart.iter(f"{SVG}rect"):
        drawn.setdefault(bar.get("data-column"), {})[bar.get("data-cell")] = int(bar.get("data-count"))
    released = s.table
    for column in s.domain.columns:
        expected = dict(zip(column.labels, [0] * column.size, strict=True))
        codes = column.codes(released[column.name])
        codes = np.where(codes < 0, column.size - 1, codes)  # a numeric "(other)" is written empty
        for code, n in zip(*np.unique(codes, return_counts=True), strict=True):
            expected[column.labels[code]] = int(n)
        assert drawn[column.name] == expected
        assert sum(expected.values()) == len(released)
    # heights proportional to the counts, within each column's panel
    heights = {b.get("data-cell"): float(b.get("height")) for b in chart.iter(f"{SVG}rect")
               if b.get("data-column") == "colour"}  # fmt: skip
    top = max(drawn["colour"].values())
    for label, n in drawn["colour"].items():
        assert heights[label] == pytest.approx(44 * n / top, abs=0.01)
    assert chart.find(f"{SVG}title") is not None and "red" in chart.find(f"{SVG}desc").text


def test_the_heatmap_is_the_released_tables_association(made) -> None:  # type: ignore[no-untyped-def]
    _, _, s, _, record, _ = made
    html, _ = synthetic_charts(record, s.to_csv(), None, "x")
    (chart,) = _svgs(html, "synthetic-association")
    cells = {c.get("data-pair"): float(c.get("data-value")) for c in chart.iter(f"{SVG}rect")}
    codes = s.domain.codes(s.table)
    colour, shape = s.domain.column("colour"), s.domain.column("shape")
    both = (codes["colour"] >= 0) & (codes["shape"] >= 0)
    counts = np.zeros((colour.size, shape.size))
    np.add.at(counts, (codes["colour"][both], codes["shape"][both]), 1)
    assert cells["colour × shape"] == pytest.approx(association(counts, None, None), abs=1e-12)
    assert cells["colour × shape"] > 0.5  # the helper's table: shape follows colour
    assert cells["colour × colour"] == 1.0 and len(cells) == 9


def test_a_csv_that_is_not_the_released_one_draws_nothing(made) -> None:  # type: ignore[no-untyped-def]
    _, _, s, _, record, _ = made
    other = s.table.copy()
    other.loc[other.index[0], "colour"] = "blue" if other["colour"].iloc[0] != "blue" else "red"
    assert read_released(record, other.to_csv(index=False).encode()) is None
    assert synthetic_charts(record, other.to_csv(index=False).encode(), None, "x") == ("", 0.0)
    assert read_released(record, s.to_csv()) is not None
    assert [c.name for c in released_counts(*read_released(record, s.to_csv()))] == COLUMNS


def test_the_quality_chart_only_when_the_owner_included_it(made, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ledger, ds, s, uid, record, preview = made
    kept = Workspace(tmp_path / "ws")
    kept.store_synthetic(ds.fingerprint, s.to_csv())
    csv = kept.synthetic_csv(ds.fingerprint, record["table_fingerprint"])
    assert csv == s.to_csv()

    def page() -> str:
        card = kept.synthetic_card(ds.fingerprint, record["table_fingerprint"])
        return stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=Facts(),
                                  synthetic={uid: record}, synthetic_tables={uid: csv},
                                  synthetic_cards={uid: card} if card else {})  # fmt: skip

    without = page()  # no card kept
    assert _svgs(without, "synthetic-oneway") and not _svgs(without, "synthetic-quality")
    assert "NOT PRIVATE: the preview" not in without
    kept.store_synthetic_card(ds.fingerprint, card_dict(s, None))  # the owner left the figures out
    assert not _svgs(page(), "synthetic-quality")
    kept.store_synthetic_card(ds.fingerprint, card_dict(s, preview))  # the owner included them
    included = page()
    (chart,) = _svgs(included, "synthetic-quality")
    bars = {b.get("data-marginal"): float(b.get("data-value")) for b in chart.iter(f"{SVG}rect")}
    pairs = {f"{a} × {b}": v for (a, b), v in preview.two_way.items()}
    assert bars == pytest.approx({**preview.one_way, **pairs})
    assert chart.find(f"{SVG}title").text.startswith("NOT PRIVATE")
    assert QUALITY_LABEL in chart.find(f"{SVG}desc").text
    # a card of another table is not this release's
    other = {**card_dict(s, preview), "table_sha256": "sha256:" + "0" * 64}
    assert synthetic_charts(record, None, other, "x") == ("", 0.0)


def test_a_synthetic_release_without_its_table_is_listed_in_words(made) -> None:  # type: ignore[no-untyped-def]
    ledger, ds, _, uid, record, _ = made
    page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=Facts(),
                              synthetic={uid: record})  # fmt: skip
    assert "A synthetic table of" in page and "class=\"chart synthetic" not in page


@pytest.mark.skipif(find_chromium() is None, reason="no Chromium to print with")
def test_the_report_with_synthetic_charts_prints_on_one_page(made) -> None:  # type: ignore[no-untyped-def]
    ledger, ds, s, uid, record, preview = made
    page = stakeholder_report(ds, ledger.entries(ds), ledger.totals(ds), facts=Facts(),
                              synthetic={uid: record}, synthetic_tables={uid: s.to_csv()},
                              synthetic_cards={uid: card_dict(s, preview)})  # fmt: skip
    pdf = render_pdf(page)
    assert pdf.startswith(b"%PDF") and page_count(pdf) == 1
