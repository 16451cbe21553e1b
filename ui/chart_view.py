"""Every chart on every page goes through ``show_chart``: the Plotly figure without its toolbar (no tab
stops that lead nowhere for a keyboard user), followed by its text alternative, the numbers it shows, in
an expander "Chart as a table" (WCAG 2.2 1.1.1: non-text content has a text alternative), as one plain
HTML table (``numbers_html``).

The table is built from the figure itself (``figure_table``), so it cannot drift from what is drawn;
a page passes its own ``table`` where the figure's coordinates mean nothing by themselves (positions in
an icon array, stacked dots).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ui.text import md

__all__ = [
    "CHART_CONFIG",
    "MAX_ROWS_PER_SERIES",
    "figure_summary",
    "figure_table",
    "numbers_html",
    "show_chart",
]

#: Plotly's toolbar hidden: its eight buttons are tab stops on every chart.
CHART_CONFIG: dict[str, Any] = {"displayModeBar": False}
#: A long curve (a line without markers) is listed at this many evenly spaced points (both ends included).
MAX_ROWS_PER_SERIES = 41


def show_chart(
    figure: go.Figure,
    *,
    key: str,
    table: pd.DataFrame | None = None,
    summary: str | None = None,
    width: str = "stretch",
    nested: bool = False,
) -> None:
    """Render ``figure`` without the toolbar, then its numbers in an expander named after the chart.

    Args:
        figure: the chart.
        key: the chart's element key.
        table: the numbers to list, when the figure's own coordinates are not them.
        summary: a sentence read before the table; the chart's marked lines and labels when omitted.
        nested: the chart is already inside an expander (Streamlit does not nest them): the table
            follows the chart under a "Chart as a table" caption instead.
    """
    title = _title(figure)
    text = figure_summary(figure) if summary is None else summary
    alt = f"Chart: {title or 'see the table below it'}. Its numbers are in the table after it."
    st.plotly_chart(figure, key=key, config=CHART_CONFIG, width=width, alt=alt)
    name = f"Chart as a table: {md(title)}" if title else "Chart as a table"
    with st.container() if nested else st.expander(name):
        if nested:
            st.caption(f"**{name}**")
        if text:
            st.caption(md(text) if summary is None else text)
        st.html(numbers_html(figure_table(figure) if table is None else table))


def numbers_html(table: pd.DataFrame) -> str:
    """``table`` as one plain HTML ``<table>`` (header cells, every text escaped). One HTML element costs
    the browser a fraction of what a Streamlit table of the same cells does (``bench/bench_browser.py``:
    the Mechanism explorer's page switch went from about 1.4 s to 0.7 s)."""
    return table.to_html(index=False, border=0, classes="dpdash-numbers", escape=True, na_rep="")


def figure_table(figure: go.Figure) -> pd.DataFrame:
    """The numbers a figure draws: one row per point (series, x, y, named by the axis titles); a gauge as
    its title and value. Series longer than ``MAX_ROWS_PER_SERIES`` are listed at evenly spaced points."""
    x_name = _axis_title(figure.layout.xaxis) or "x"
    y_name = _axis_title(figure.layout.yaxis) or "y"
    if x_name == y_name:
        x_name, y_name = f"{x_name} (x)", f"{y_name} (y)"
    rows: list[dict[str, object]] = []
    for trace in figure.data:
        if trace.type == "indicator":
            rows.append({"series": _text(trace.title.text), "value": _cell(trace.value)})
            continue
        name = trace.name
        if name is None and trace.hoverinfo == "skip":  # a fill's invisible base line
            continue
        xs, ys = _points(trace)
        for x, y in zip(xs, ys, strict=True):
            rows.append({"series": name or "", x_name: _cell(x), y_name: _cell(y)})
    return pd.DataFrame(rows)


def figure_summary(figure: go.Figure) -> str:
    """The chart's marked lines and text labels in a sentence ("Marked on the chart: budget ε = 1.")."""
    marks = [_text(a.text) for a in figure.layout.annotations if a.text]
    long = any(t.type != "indicator" and _length(t) > MAX_ROWS_PER_SERIES for t in figure.data)
    parts = []
    if marks:
        parts.append("Marked on the chart: " + "; ".join(marks) + ".")
    if long:
        parts.append(f"Long curves are listed at {MAX_ROWS_PER_SERIES} evenly spaced points.")
    return " ".join(parts)


def _points(trace: Any) -> tuple[list[object], list[object]]:
    """A trace's (x, y) pairs without empty ones, thinned to ``MAX_ROWS_PER_SERIES`` evenly spaced."""
    xs = list(trace.x) if trace.x is not None else []
    ys = list(trace.y) if trace.y is not None else []
    if trace.type == "bar" and trace.base is not None:  # a bar drawn from its base: the value is its top
        bases = np.broadcast_to(np.asarray(trace.base, dtype=float), (len(ys),))
        ys = [None if y is None else float(b) + float(y) for b, y in zip(bases, ys, strict=True)]
    pairs = [(x, y) for x, y in zip(xs, ys, strict=False) if x is not None and y is not None and y == y]
    if _thinned(trace) and len(pairs) > MAX_ROWS_PER_SERIES:
        keep = np.unique(np.linspace(0, len(pairs) - 1, MAX_ROWS_PER_SERIES).round().astype(int))
        pairs = [pairs[i] for i in keep]
    return [x for x, _ in pairs], [y for _, y in pairs]


def _thinned(trace: Any) -> bool:
    """A drawn curve (a line without markers) is listed at evenly spaced points; bars and markers in full."""
    return trace.type == "scatter" and "markers" not in (trace.mode or "lines")


def _length(trace: Any) -> int:
    return 0 if trace.x is None or not _thinned(trace) else len(trace.x)


def _cell(value: object) -> object:
    """Numbers to six significant digits (as the hover shows them), text as it is."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.number):
        return value
    return f"{float(value):.6g}"


def _axis_title(axis: Any) -> str:
    return _text(axis.title.text) if axis is not None and axis.title is not None else ""


def _title(figure: go.Figure) -> str:
    """The figure's title, or a gauge's own title."""
    if figure.layout.title is not None and figure.layout.title.text:
        return _text(figure.layout.title.text)
    gauges = [t for t in figure.data if t.type == "indicator" and t.title.text]
    return _text(gauges[0].title.text) if gauges else ""


def _text(text: object) -> str:
    """Plotly text without its HTML line breaks and tags."""
    if not text:
        return ""
    plain = str(text).replace("<br>", " ")
    while "<" in plain and ">" in plain.split("<", 1)[1]:
        head, rest = plain.split("<", 1)
        plain = head + rest.split(">", 1)[1]
    return plain.strip()
