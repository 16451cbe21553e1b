"""Inline SVG charts for the stakeholder report: each release's values with their ± (dots with error
bars), and the budget spent against what remains under the accountant in force.

The charts draw the published figures, not the floats behind them: each value and ± is first written
as the report's text writes it (``dpdash.rounding.published_figures``) and the chart is drawn from that
text read back, so a reader who measures a dot finds the number printed beside it. Each chart is an
``<svg role="img">`` with a ``<title>`` and a ``<desc>`` holding every number it draws (its text
alternative), needs no script, font file or network, and uses colours with at least 4.5:1 contrast on
white for text and 3:1 for marks (WCAG 2.2 AA, 1.4.3 and 1.4.11).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from dpdash.published import Accuracy
from dpdash.release import Release
from dpdash.rounding import published_figures
from dpdash.wording import percent

__all__ = [
    "COLOURS",
    "MAX_VALUES",
    "budget_chart",
    "figure",
    "half_width_definition",
    "release_chart",
]

#: At most this many values of one release are listed (and drawn); the rest are in its release record.
MAX_VALUES = 12

#: The report's colours (all on white). Text: 4.5:1 or more; marks (dots, bars, outlines): 3:1 or more.
COLOURS = {"text": "#1b1f24", "muted": "#4b535c", "mark": "#0a5bd3", "outline": "#57606a", "axis": "#6e7781"}

_FONT = 'font-family="system-ui,sans-serif" font-size="11"'
_SVG = '<svg xmlns="http://www.w3.org/2000/svg" role="img"'


def figure(value: float, digits: int) -> str:
    """A number to ``digits`` significant digits, never in e-notation: large ones in whole units.

    >>> figure(11028.4, 4), figure(9999.7, 4), figure(45.857, 4), figure(-1.23456e-7, 4)
    ('11,028', '10,000', '45.86', '-0.0000001235')
    """
    shown = f"{value:.{digits}g}"
    if not math.isfinite(value) or "e" not in shown:
        return shown
    if abs(value) >= 1:
        return f"{value:,.0f}"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    return f"{value:.{decimals}f}"


def half_width_definition(accuracy: Accuracy) -> str:
    """What the error bars are, in a few words: "± each value: 95% confidence, exact"."""
    what = "each value" if accuracy.scope == "each" else "all values at once"
    return f"± {what}: {percent(accuracy.confidence)} confidence, {accuracy.method}"


def _read(text: str) -> float:
    """A printed figure read back as the number it states."""
    return float(text.replace(",", ""))


@dataclass(frozen=True, slots=True)
class _Row:
    label: str
    value: str
    width: str | None


def _rows(release: Release) -> list[_Row] | None:
    """The first ``MAX_VALUES`` values as printed (``dpdash.rounding.published_figures``, as the report's
    text and every other place shows them), or None when one of them is not a finite number (a mode's
    category, a missing value): such a release is described in words only."""
    shown = published_figures(release)
    rows = []
    for i, (label, value) in enumerate(zip(release.labels, release.values, strict=False)):
        if i == MAX_VALUES:
            break
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return None
        width = shown.half_width_texts[i] if i < len(shown.half_width_texts) else ""
        rows.append(_Row(str(label) if label else "value", shown.texts[i], width or None))
    return rows or None


def _ticks(low: float, high: float) -> list[float]:
    """Two to four round ticks inside [low, high] (steps of 1, 2 or 5 times a power of ten), far enough
    apart for their labels on a 122-pixel axis."""
    raw = (high - low) / 3
    power = 10.0 ** math.floor(math.log10(raw))

    def at(step: float) -> list[float]:
        return [k * step for k in range(math.ceil(low / step), math.floor(high / step) + 1)]

    usable = [m * power for m in (0.2, 0.5, 1, 2, 5, 10) if len(at(m * power)) >= 2]
    return at(min((step for step in usable if step >= raw), default=max(usable)))


def _short(text: str, limit: int = 16) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def release_chart(release: Release, chart_id: str) -> str:
    """The release's values (dots) with their ± (bars), labelled with what the ± means, as inline SVG;
    ``""`` when a value is not a finite number (the report then states the values in words only).

    ``chart_id`` makes the ids of the title and description unique on the page.
    """
    rows = _rows(release)
    if rows is None:
        return ""
    e = html.escape
    points = [(_read(r.value), _read(r.width) if r.width else 0.0) for r in rows]
    low = min(v - w for v, w in points)
    high = max(v + w for v, w in points)
    if high == low:
        low, high = low - 1, high + 1
    pad = (high - low) * 0.06
    low, high = low - pad, high + pad
    left, right, row_h, top = 104.0, 226.0, 18.0, 34.0
    height = top + row_h * len(rows) + 24

    def x(number: float) -> float:
        return left + (number - low) / (high - low) * (right - left)

    definition = half_width_definition(release.accuracy)
    what, how = definition.split(": ", 1)
    parts = [
        f'<text x="0" y="12" fill="{COLOURS["muted"]}">● released value; bar: {e(what)}</text>'
        f'<text x="0" y="26" fill="{COLOURS["muted"]}">{e(how)}</text>'
    ]
    for i, ((value, width), row) in enumerate(zip(points, rows, strict=True)):
        y = top + row_h * i + row_h / 2
        stated = row.value + (f" ± {row.width}" if row.width else "")
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" fill="{COLOURS["text"]}">'
                     f"{e(_short(row.label))}</text>")  # fmt: skip
        if row.width:
            stroke = f'stroke="{COLOURS["mark"]}" stroke-width="2"'
            parts.append(
                f'<line class="pm" x1="{x(value - width):.2f}" x2="{x(value + width):.2f}" y1="{y:.1f}" '
                f'y2="{y:.1f}" {stroke}/>'
                + "".join(f'<line x1="{x(end):.2f}" x2="{x(end):.2f}" y1="{y - 4:.1f}" '
                          f'y2="{y + 4:.1f}" {stroke}/>' for end in (value - width, value + width))
            )  # fmt: skip
        parts.append(
            f'<circle class="v" cx="{x(value):.2f}" cy="{y:.1f}" r="4" fill="{COLOURS["mark"]}" '
            f'data-value="{e(row.value)}" data-pm="{e(row.width or "")}"/>'
            f'<text x="{right + 8}" y="{y + 4:.1f}" fill="{COLOURS["text"]}">{e(stated)}</text>'
        )
    axis_y = top + row_h * len(rows) + 4
    parts.append(f'<line x1="{left}" x2="{right}" y1="{axis_y}" y2="{axis_y}" stroke="{COLOURS["axis"]}"/>')
    for tick in _ticks(low, high):
        parts.append(
            f'<line x1="{x(tick):.2f}" x2="{x(tick):.2f}" y1="{axis_y}" y2="{axis_y + 4}" '
            f'stroke="{COLOURS["axis"]}"/><text x="{x(tick):.2f}" y="{axis_y + 15}" text-anchor="middle" '
            f'fill="{COLOURS["muted"]}">{e(figure(tick, 4))}</text>'
        )
    described = "; ".join(f"{r.label}: {r.value}" + (f" ± {r.width}" if r.width else "") for r in rows)
    more = len(release.values) - len(rows)
    described += f"; and {more} more in the release record" if more else ""
    title = f"Released values of {release.query_name} with their ±"
    return (
        f'{_SVG} class="chart" aria-labelledby="{chart_id}-t {chart_id}-d" width="340" '
        f'height="{height:.0f}" viewBox="0 0 340 {height:.0f}" {_FONT} data-low="{low!r}" '
        f'data-high="{high!r}" data-left="{left}" data-right="{right}"><title id="{chart_id}-t">{e(title)}'
        f'</title><desc id="{chart_id}-d">{e(described)}. Bars: {e(definition)}.</desc>{"".join(parts)}</svg>'
    )


def budget_chart(spent: str, remaining: str, budget: str, accountant: str, delta: str) -> str:
    """The budget as one bar: ε spent (filled) and ε remaining (outlined), from the printed figures of
    the report (``spent`` may be ``"∞"``: the accountant states no finite total)."""
    e = html.escape
    width, bar_y, bar_h = 480.0, 22.0, 18.0
    total = _read(budget)
    used = math.inf if spent == "∞" else _read(spent)
    scale = max(total, used) if math.isfinite(used) else total
    spent_w = width if not math.isfinite(used) else used / scale * width
    budget_x = total / scale * width
    over = math.isfinite(used) and used > total
    said = (f"spent ε = {spent}" if math.isfinite(used) else "spent: no finite total") + (
        f", over the budget of ε = {budget}" if over else "")  # fmt: skip
    text = (
        f"Budget ε = {budget} (δ = {delta}) under the {accountant} accountant: {said}; remaining ε = "
        f"{remaining}."
    )
    return (
        f'{_SVG} class="chart budget" aria-labelledby="budget-t budget-d" width="{width + 2:.0f}" '
        f'height="70" viewBox="0 0 {width + 2:.0f} 70" {_FONT} data-spent="{e(spent)}" '
        f'data-remaining="{e(remaining)}" data-budget="{e(budget)}"><title id="budget-t">Budget spent and '
        f'remaining</title><desc id="budget-d">{e(text)}</desc>'
        f'<text x="1" y="14" fill="{COLOURS["text"]}">■ {e(said)}</text>'
        f'<text x="{width + 1:.0f}" y="14" text-anchor="end" fill="{COLOURS["text"]}">□ remaining ε = '
        f"{e(remaining)}</text>"
        f'<rect x="1" y="{bar_y}" width="{budget_x:.2f}" height="{bar_h}" fill="#ffffff" '
        f'stroke="{COLOURS["outline"]}"/>'
        f'<rect class="spent" x="1" y="{bar_y}" width="{spent_w:.2f}" height="{bar_h}" '
        f'fill="{COLOURS["mark"]}"/>'
        f'<line x1="{budget_x + 1:.2f}" x2="{budget_x + 1:.2f}" y1="{bar_y - 3}" y2="{bar_y + bar_h + 3}" '
        f'stroke="{COLOURS["text"]}" stroke-width="2"/>'
        f'<text x="1" y="{bar_y + bar_h + 16}" fill="{COLOURS["muted"]}">from 0 to the budget ε = '
        f"{e(budget)} (dark line), as the {e(_short(accountant, 24))} accountant counts it</text>"
        "</svg>"
    )
