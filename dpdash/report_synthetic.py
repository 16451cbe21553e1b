"""The stakeholder report's charts of a released synthetic table, drawn from the PUBLISHED table only.

- **One-way distributions**: each released column's cells (its declared categories or bins, then
  "(other)") as small bars of their share of the released rows.
- **Associations**: the released table's association matrix (``dpdash.synthetic.quality.association``:
  Pearson's r of bin midpoints for two numeric columns, else Cramér's V) as a heatmap.
- **Quality** (only when the owner put the preview's figures in the table's data card): the total variation
  distance of every marginal, labelled NOT PRIVATE (``QUALITY_LABEL``): those figures read the true table.

The table is the CSV whose SHA-256 the ledger record states (checked here: another file draws nothing);
everything drawn from it is post-processing of the release. Like ``dpdash.report_charts``, each chart is an
``<svg role="img">`` with a ``<title>`` and a ``<desc>`` stating every number it draws, with no script, font
file or network.
"""

from __future__ import annotations

import hashlib
import html
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpdash.report_charts import COLOURS
from dpdash.synthetic.domain import SyntheticDomain
from dpdash.synthetic.quality import QUALITY_LABEL, association_matrix, table_counts

__all__ = [
    "QUALITY_COLOUR", "ColumnCounts", "association_chart", "distribution_chart", "quality_chart",
    "read_released", "released_counts", "synthetic_charts",
]  # fmt: skip

#: The quality figures' bars: apart from the released figures' blue, 3:1 or more on white.
QUALITY_COLOUR = "#b35900"
_NEGATIVE = "#c4361f"  # a negative Pearson r in the heatmap
_FONT = 'font-family="system-ui,sans-serif" font-size="11"'
_SVG = '<svg xmlns="http://www.w3.org/2000/svg" role="img"'


@dataclass(frozen=True, slots=True)
class ColumnCounts:
    """A released column's rows per cell, in the domain's order (the last cell is "(other)")."""

    name: str
    labels: tuple[str, ...]
    counts: tuple[int, ...]

    @property
    def shares(self) -> tuple[float, ...]:
        total = sum(self.counts)
        return tuple(c / total if total else 0.0 for c in self.counts)


def read_released(record: Mapping[str, Any], csv: bytes) -> tuple[SyntheticDomain, pd.DataFrame] | None:
    """The record's domain and the released table read from its CSV, or ``None`` when the CSV is not the
    one the record states (its SHA-256) or the domain cannot be read."""
    if "sha256:" + hashlib.sha256(bytes(csv)).hexdigest() != record.get("table_fingerprint"):
        return None
    try:
        domain = SyntheticDomain.from_dict(record.get("domain") or {}, as_text=True)
        table = pd.read_csv(io.BytesIO(csv), dtype=str, keep_default_na=False, na_values=[""])
        for column in domain.columns:
            if column.bins is not None:
                table[column.name] = pd.to_numeric(table[column.name], errors="coerce")
        domain.codes(table)
    except (ValueError, TypeError, KeyError, pd.errors.ParserError):
        return None
    return (domain, table) if domain.columns else None


def _codes(domain: SyntheticDomain, table: pd.DataFrame) -> pd.DataFrame:
    """The released rows' cells; a numeric column's "(other)" rows are written empty (what lies outside
    its bounds is not public, ``SyntheticColumn.values``), so an empty value counts there."""
    codes = domain.codes(table)
    for column in domain.columns:
        codes[column.name] = np.where(codes[column.name] < 0, column.size - 1, codes[column.name])
    return codes


def released_counts(domain: SyntheticDomain, table: pd.DataFrame) -> tuple[ColumnCounts, ...]:
    """Every released column's rows per cell (the one-way marginals of the published table)."""
    codes = _codes(domain, table)
    return tuple(ColumnCounts(c.name, c.labels, tuple(int(n) for n in table_counts(codes, (c.name,), domain)))
                 for c in domain.columns)  # fmt: skip


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _halves(text: str) -> tuple[str, str]:
    """A sentence cut in two lines at the space nearest its middle."""
    middle = len(text) // 2
    cut = min((i for i, ch in enumerate(text) if ch == " "), key=lambda i: abs(i - middle), default=len(text))
    return text[:cut], text[cut + 1 :]


def _svg(chart_id: str, css: str, width: float, height: float, title: str, desc: str, body: str) -> str:
    e = html.escape
    return (
        f'{_SVG} class="chart {css}" aria-labelledby="{chart_id}-t {chart_id}-d" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" {_FONT}><title id="{chart_id}-t">'
        f'{e(title)}</title><desc id="{chart_id}-d">{e(desc)}</desc>{body}</svg>'
    )


def distribution_chart(columns: tuple[ColumnCounts, ...], chart_id: str) -> tuple[str, float]:
    """Small bars of each column's shares (four panels a row), and the chart's height in pixels."""
    e, per_row, panel_w, panel_h = html.escape, 4, 205.0, 84.0
    parts = []
    for i, column in enumerate(columns):
        x0, y0 = (i % per_row) * panel_w, 4 + (i // per_row) * panel_h
        shares, top = column.shares, max(column.shares) or 1.0
        bar_w, base, x1 = (panel_w - 20) / len(shares), y0 + 60, x0 + panel_w - 20
        small = f'fill="{COLOURS["muted"]}" font-size="9"'
        parts.append(f'<text x="{x0:.0f}" y="{y0 + 11:.0f}" fill="{COLOURS["text"]}" font-weight="600">'
                     f'{e(_short(column.name, 22))}</text><text x="{x1:.0f}" y="{y0 + 11:.0f}" '
                     f'text-anchor="end" {small}>top {top:.0%}</text>')  # fmt: skip
        for j, (label, count, share) in enumerate(zip(column.labels, column.counts, shares, strict=True)):
            h = 44 * share / top
            parts.append(
                f'<rect class="bar" x="{x0 + j * bar_w + 0.5:.2f}" y="{base - h:.2f}" '
                f'width="{max(bar_w - 1, 0.5):.2f}" height="{h:.2f}" fill="{COLOURS["mark"]}" '
                f'data-column="{e(column.name)}" data-cell="{e(label)}" data-count="{count}">'
                f"<title>{e(label)}: {count:,} rows ({share:.1%})</title></rect>"
            )
        parts.append(
            f'<line x1="{x0:.0f}" x2="{x1:.0f}" y1="{base}" y2="{base}" stroke="{COLOURS["axis"]}"/>'
            f'<text x="{x0:.0f}" y="{base + 11}" {small}>{e(_short(column.labels[0], 14))}</text>'
            f'<text x="{x1:.0f}" y="{base + 11}" text-anchor="end" {small}>'
            f"{e(_short(column.labels[-1], 14))}</text>"
        )
    height = 8 + math.ceil(len(columns) / per_row) * panel_h
    listed = "; ".join(
        f"{c.name}: " + ", ".join(f"{lab} {n:,} ({s:.1%})" for lab, n, s in zip(c.labels, c.counts, c.shares,
                                                                                strict=True))
        for c in columns
    )  # fmt: skip
    lead = "Rows of the released synthetic table per cell, each column from its first cell to “(other)”"
    desc = f"{lead}: {listed}."
    title = "One-way distributions of the released synthetic table"
    return _svg(chart_id, "synthetic-oneway", per_row * panel_w, height, title, desc, "".join(parts)), height


def _fill(value: float) -> str:
    """White at 0 to the mark colour at |value| = 1 (red for a negative r)."""
    if not math.isfinite(value):
        return "#ffffff"
    target = COLOURS["mark"] if value >= 0 else _NEGATIVE
    rgb = [int(target[k : k + 2], 16) for k in (1, 3, 5)]
    t = min(1.0, abs(value))
    return "#" + "".join(f"{round(255 + (c - 255) * t):02x}" for c in rgb)


def association_chart(matrix: pd.DataFrame, chart_id: str) -> tuple[str, float]:
    """The released table's association matrix as a heatmap (values printed), and its height."""
    e, names = html.escape, [str(n) for n in matrix.index]
    d = len(names)
    cell, left, top = 26.0, 130.0, 26.0
    parts = [f'<text x="0" y="12" fill="{COLOURS["muted"]}">Pearson r (two numeric columns) or Cramér\'s V '
             "(with a categorical one), in the released rows</text>"]  # fmt: skip
    for i, name in enumerate(names):
        y = top + i * cell
        parts.append(f'<text x="{left - 6}" y="{y + cell / 2 + 4:.1f}" text-anchor="end" '
                     f'fill="{COLOURS["text"]}">{i + 1} {e(_short(name, 16))}</text>'
                     f'<text x="{left + i * cell + cell / 2:.1f}" y="{top + d * cell + 12:.1f}" '
                     f'text-anchor="middle" fill="{COLOURS["muted"]}">{i + 1}</text>')  # fmt: skip
        for j, other in enumerate(names):
            value = float(matrix.iloc[i, j])
            shown = "—" if not math.isfinite(value) else f"{value:.2f}".replace("0.", ".", 1)
            ink = "#ffffff" if math.isfinite(value) and abs(value) > 0.55 else COLOURS["text"]
            parts.append(
                f'<rect class="cell" x="{left + j * cell:.1f}" y="{y:.1f}" width="{cell}" height="{cell}" '
                f'fill="{_fill(value)}" stroke="#ffffff" data-pair="{e(name)} × {e(other)}" '
                f'data-value="{value!r}"><title>{e(name)} × {e(other)}: {value:.3f}</title></rect>'
                f'<text x="{left + j * cell + cell / 2:.1f}" y="{y + cell / 2 + 3:.1f}" text-anchor="middle" '
                f'font-size="8" fill="{ink}">{shown}</text>'
            )
    height = top + d * cell + 18
    pairs = [(a, b) for k, a in enumerate(names) for b in names[k + 1 :]]
    desc = "Association between each pair of columns of the released synthetic table: " + "; ".join(
        f"{a} × {b}: {float(matrix.loc[a, b]):.3f}" for a, b in pairs) + "."  # fmt: skip
    width = max(left + d * cell + 4, 560.0)
    title = "Associations between the columns of the released synthetic table"
    return _svg(chart_id, "synthetic-association", width, height, title, desc, "".join(parts)), height


def quality_chart(figures: Mapping[str, Any], chart_id: str) -> tuple[str, float]:
    """The preview's TVD per marginal (the card's ``preview_quality``) as bars under its NOT PRIVATE label,
    and the chart's height; ``("", 0)`` when it holds no figure."""
    e = html.escape
    rows = [(str(k), float(v)) for part in ("one_way_tvd", "two_way_tvd")
            for k, v in dict(figures.get(part) or {}).items()]  # fmt: skip
    rows = [(k, v) for k, v in rows if math.isfinite(v)]
    if not rows:
        return "", 0.0
    left, right, top, row_h = 190.0, 560.0, 46.0, 14.0
    high = max(0.05, max(v for _, v in rows))
    heading = "NOT PRIVATE: the preview's total variation distance from the true table, per marginal"
    first, rest = _halves(QUALITY_LABEL)
    parts = [f'<text x="0" y="12" fill="{QUALITY_COLOUR}" font-weight="700">{e(heading)}</text>'
             f'<text x="0" y="25" fill="{COLOURS["muted"]}" font-size="9">{e(first)}</text>'
             f'<text x="0" y="36" fill="{COLOURS["muted"]}" font-size="9">{e(rest)}</text>']  # fmt: skip
    for i, (name, value) in enumerate(rows):
        y = top + i * row_h
        w = (right - left) * value / high
        parts.append(
            f'<text x="{left - 6}" y="{y + 10:.1f}" text-anchor="end" fill="{COLOURS["text"]}" '
            f'font-size="10">{e(_short(name, 30))}</text><rect class="tvd" x="{left}" y="{y + 2:.1f}" '
            f'width="{w:.2f}" '
            f'height="{row_h - 4}" fill="{QUALITY_COLOUR}" data-marginal="{e(name)}" data-value="{value!r}"/>'
            f'<text x="{left + w + 4:.2f}" y="{y + 10:.1f}" fill="{COLOURS["text"]}" font-size="10">'
            f"{value:.4f}</text>"
        )
    height = top + len(rows) * row_h + 6
    desc = f"{QUALITY_LABEL}. Total variation distance per marginal: " + "; ".join(
        f"{k}: {v:.4f}" for k, v in rows) + "."  # fmt: skip
    title = "NOT PRIVATE: quality of the preview, per marginal (the owner's choice, outside the guarantee)"
    return _svg(chart_id, "synthetic-quality", right + 60, height, title, desc, "".join(parts)), height


def synthetic_charts(
    record: Mapping[str, Any], csv: bytes | None, card: Mapping[str, Any] | None, chart_id: str
) -> tuple[str, float]:
    """A synthetic release's charts (module docstring) as HTML, and their height in pixels: the published
    table's (when ``csv`` is the one its record states) and the quality figures (only when the kept data
    ``card`` of this table holds them, i.e. the owner included them)."""
    out, height = [], 0.0
    released = read_released(record, csv) if csv is not None else None
    if released is not None:
        domain, table = released
        svg, h = distribution_chart(released_counts(domain, table), f"{chart_id}-oneway")
        out.append(svg)
        height += h
        if len(domain.columns) > 1:
            codes = _codes(domain, table)
            matrix = association_matrix(domain, lambda pair: table_counts(codes, pair, domain))
            svg, h = association_chart(matrix, f"{chart_id}-assoc")
            out.append(svg)
            height += h
    same = card is not None and card.get("table_sha256") == record.get("table_fingerprint")
    figures = card.get("preview_quality") if same and card is not None else None
    if isinstance(figures, Mapping):
        svg, h = quality_chart(figures, f"{chart_id}-quality")
        out.append(svg)
        height += h
    return "".join(f"<div>{svg}</div>" for svg in out if svg), height
