"""Figure-level tests of the charts (issue 14): integer release ticks, the accountant in force, labels
beside their lines, no overlapping labels, bars that meet the true value, readable numbers, and every
chart's text alternative."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdash.accounting import Budget, event_for
from dpdash.ledger import Ledger
from dpdash.mechanisms import Laplace
from ui.budget_charts import accountant_role, count_axis, cumulative_budget_figure, cumulative_table
from ui.chart_view import MAX_ROWS_PER_SERIES, figure_summary, figure_table, numbers_html
from ui.charts import accuracy_curve_figure, merge_marks, posterior_figure, reference_figure
from ui.numbers import all_of, delta_text, percent, plural, significant
from ui.preview_charts import possible_release_figure, quantile_dotplot_figure, release_axis


def _steps(n: int, epsilon: float = 0.5) -> list[tuple[int, dict[str, float | None]]]:
    return [
        (i, {"tightest": epsilon * i * 0.9, "basic": epsilon * i, "zcdp": epsilon * i * 4})
        for i in range(n + 1)
    ]


@pytest.mark.parametrize("n", [1, 7, 10_000])
def test_release_ticks_are_whole_numbers_and_few(n: int) -> None:
    figure = cumulative_budget_figure(_steps(n), 1.0, accountant="tightest", delta=1e-5)
    axis = figure.layout.xaxis
    assert axis.tickmode == "linear" and axis.tick0 == 0 and axis.tickformat == ",d"
    assert axis.dtick == int(axis.dtick) >= 1  # whole releases only: no "0 0 0 1 1 1"
    ticks = np.arange(0, n + 1, axis.dtick)
    assert 2 <= len(ticks) <= 11 and ticks[-1] >= n - axis.dtick  # readable from 1 to 10 000
    assert axis.range[0] < 0 < n < axis.range[1]
    assert figure.layout.separators == ". "  # 10 000, not 10,000


def test_count_axis_steps() -> None:
    assert [count_axis(n, "r")["dtick"] for n in (1, 7, 10, 11, 30, 99, 1000, 10_000)] == [
        1,
        1,
        1,
        2,
        5,
        10,
        100,
        1000,
    ]


def test_one_release_under_zcdp_does_not_read_as_budget_exceeded(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="x", fingerprint="f" * 64, budget=Budget(1.0, 1e-5))
        ledger.spend(ds, event_for(Laplace(epsilon=0.5, sensitivity=1), query="count"))
        steps = ledger.cumulative(ds)
    assert steps[-1][1]["zcdp"] > 1.0 > steps[-1][1]["tightest"]  # the looser total is above the budget line
    figure = cumulative_budget_figure(steps, 1.0, accountant="tightest", delta=1e-5)
    traces = {t.name.split(":")[0]: t for t in figure.data}
    kept, zcdp = traces["tightest"], traces["zcdp"]
    assert kept.line.dash == "solid" and kept.line.width > zcdp.line.width and kept.opacity == 1
    assert zcdp.line.dash == "dot" and zcdp.opacity < 1
    assert zcdp.name == "zcdp: another valid bound, looser: not budget spent"
    assert kept.name.startswith("tightest: in force")
    assert figure.data[-1] is kept  # drawn on top
    assert "tightest" in figure.layout.title.text and "in force" in figure.layout.title.text
    assert "not spent" in figure.layout.legend.title.text
    assert figure.layout.annotations[0].text == "budget ε = 1, checked against tightest"
    table = cumulative_table(steps, "tightest")
    assert list(table.columns)[:2] == ["releases", "tightest (in force)"]
    assert table["zcdp"].iloc[-1] == f"{steps[-1][1]['zcdp']:.6g}"


def test_accountant_roles() -> None:
    assert accountant_role("pld", 0.5, "pld", 0.5).startswith("in force")
    assert accountant_role("zcdp", 2.4, "pld", 0.5) == "another valid bound, looser: not budget spent"
    assert "tighter" in accountant_role("pld", 0.4, "basic", 0.5)
    assert accountant_role("rdp", None, "pld", 0.5) == "cannot account for one of these releases"


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 7.0])
def test_the_epsilon_now_label_sits_at_its_line_on_a_log_axis(epsilon: float) -> None:
    curves = pd.DataFrame({"mechanism": ["Laplace"] * 2, "epsilon": [0.01, 10.0], "half_width": [300.0, 0.3]})
    figure = accuracy_curve_figure(curves, current_epsilon=epsilon, confidence=0.95, k=1)
    (line,), (label,) = figure.layout.shapes, figure.layout.annotations
    assert line.x0 == epsilon and label.text == "ε now"
    assert label.x == pytest.approx(math.log10(epsilon))  # a log axis places annotations at 10^x
    assert label.xanchor == "left"
    reference = reference_figure([("a", 1.0)], epsilon)
    assert reference.layout.annotations[0].x == pytest.approx(math.log10(epsilon))


def test_counts_are_never_plural_for_one() -> None:
    curves = pd.DataFrame({"mechanism": ["Laplace"] * 2, "epsilon": [0.01, 10.0], "half_width": [300.0, 0.3]})
    one = accuracy_curve_figure(curves, current_epsilon=1.0, confidence=0.95, k=1).layout.title.text
    three = accuracy_curve_figure(curves, current_epsilon=1.0, confidence=0.95, k=3).layout.title.text
    assert "one answer" in one and "1 answers" not in one and "all 3 answers" in three
    assert [plural(1, "answer"), plural(2, "answer"), plural(10_000, "release")] == [
        "1 answer",
        "2 answers",
        "10 000 releases",
    ]
    assert (all_of(1, "answer"), all_of(5, "answer")) == ("one answer", "all 5 answers")


def test_marks_at_the_same_epsilon_share_one_label() -> None:
    marks = [("your ε", 1.0, 0.73), ("release 1", 0.5, 0.62), ("total (tightest)", 0.49998, 0.62)]
    assert merge_marks(marks) == [("release 1 · total (tightest)", 0.5, 0.62), ("your ε", 1.0, 0.73)]
    curve = {"epsilons": np.geomspace(0.01, 10, 20), "posteriors": np.linspace(0.5, 1, 20)}
    figure = posterior_figure(prior=0.5, marks=marks, **curve)
    labelled = [(t.x[0], t.text[0], t.textposition) for t in figure.data if t.text is not None]
    assert len(labelled) == 2  # two labels, not three printed over each other
    assert labelled[0][2] != labelled[1][2]  # neighbours (0.3 decades apart) on opposite sides
    many = merge_marks([(f"release {i}", 0.1, 0.5) for i in range(1, 11)])
    assert many == [("release 1 · … · release 10 (10 marks)", 0.1, 0.5)]


def test_the_dotplot_legend_sits_below_the_axis_title() -> None:
    figure = quantile_dotplot_figure(np.linspace(-15, 15, 25)[None, :], np.zeros(1), ["count"], half_width=15)
    legend = figure.layout.legend
    # In container coordinates at the figure's bottom edge, under the axis title whatever the height
    # (paper coordinates at y = -0.22 put it on the title of a short chart).
    assert legend.yref == "container" and legend.yanchor == "bottom" and legend.y < 0.05
    assert figure.layout.margin.b >= 110


def test_a_large_count_reads_its_bar_against_its_true_value() -> None:
    rng = np.random.default_rng(14)
    truth = np.array([100_000.0])
    draws = truth + rng.laplace(0, 7, size=(30, 1))
    (low, high), zoomed = release_axis(draws, truth)
    assert zoomed and 0 < low < truth[0] < high and high - low < 300  # ±15 visible, not squashed at 0
    figure = possible_release_figure(
        draws[3], truth, ["count"], y_range=(low, high), zoomed=zoomed, title="t"
    )
    bar = figure.data[0]
    assert bar.base[0] == truth[0]  # the bar starts at the true value's mark …
    assert bar.base[0] + bar.y[0] == pytest.approx(draws[3, 0])  # … and ends on the possible release
    assert not figure.layout.updatemenus and not figure.frames  # no SVG Play/Stop buttons
    table = figure_table(figure)
    assert table.iloc[0]["value"] == f"{draws[3, 0]:.6g}"  # the table lists the release, not the noise
    # A histogram with counts near 0 keeps 0 on its axis, bars from 0.
    (low, _), zoomed = release_axis(np.array([[3.0, 40.0], [5.0, 38.0]]), np.array([4.0, 39.0]))
    assert not zoomed and low < 0


def test_relative_errors_keep_their_significant_digits() -> None:
    assert percent(15 / 100_000) == "0.015 %"  # was "0.0 %"
    assert [percent(0.25), percent(0.0), percent(float("inf"))] == ["25 %", "0 %", "∞"]
    assert [significant(0.0996), significant(1234.0), significant(3.5e-6)] == ["0.10", "1200", "0.0000035"]


def test_delta_zero_is_zero() -> None:
    assert [delta_text(0.0), delta_text(1e-5), delta_text(2.5e-7), delta_text(0.01)] == [
        "0",
        "1e-5",
        "2.5e-7",
        "0.01",
    ]


def test_the_table_of_a_chart_lists_its_numbers() -> None:
    curves = pd.DataFrame({"mechanism": ["Laplace"] * 200, "epsilon": np.geomspace(0.01, 10, 200),
                           "half_width": np.geomspace(300, 0.3, 200)})  # fmt: skip
    figure = accuracy_curve_figure(curves, current_epsilon=1.0, confidence=0.95, k=1)
    table = figure_table(figure)
    assert list(table.columns) == ["series", "ε  (← more privacy · more accuracy →)", "half-width ±a"]
    assert len(table) == MAX_ROWS_PER_SERIES and table.iloc[0, 1] == "0.01" and table.iloc[-1, 2] == "0.3"
    assert figure_summary(figure) == (
        f"Marked on the chart: ε now. Long curves are listed at {MAX_ROWS_PER_SERIES} evenly spaced points."
    )


def test_bars_are_listed_in_full() -> None:
    import plotly.graph_objects as go

    figure = go.Figure(go.Bar(x=list(range(80)), y=[0.01] * 80, name="first input"))
    figure.update_layout(xaxis_title="statistic", yaxis_title="share of trials")
    assert len(figure_table(figure)) == 80 and figure_summary(figure) == ""


def test_a_gauge_is_named_and_listed() -> None:
    from ui.budget_charts import budget_gauge
    from ui.chart_view import _title

    gauge = budget_gauge(0.49998, 1.0, "tightest")
    assert _title(gauge) == "ε spent (tightest, in force)"
    assert figure_table(gauge).to_dict("records") == [
        {"series": "ε spent (tightest, in force)", "value": "0.49998"}
    ]


def test_a_chart_table_is_one_escaped_html_table() -> None:
    hostile = "<img src=x onerror=alert(1)> & </table><script>x</script>"
    page = numbers_html(pd.DataFrame({"series": [hostile, "b"], "ε": ["0.5", None]}))
    assert page.count("<table") == 1 and page.count("</table>") == 1  # the hostile text closed nothing
    assert "<img" not in page and "<script" not in page and "&lt;img src=x onerror=alert(1)&gt; &amp;" in page
    assert "<th>series</th>" in page and "<th>ε</th>" in page and "<td></td>" in page  # no "None"


@pytest.mark.parametrize("name", ["ui.numbers", "ui.budget_charts"])
def test_doctests_of_the_number_helpers(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


def _lab(colour: str) -> np.ndarray:
    """CIELAB (D65) of a "#rrggbb" colour."""
    rgb = np.array([int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)])
    rgb = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ rgb
    f = np.cbrt(np.maximum(xyz / np.array([0.95047, 1.0, 1.08883]), 0.008856))
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_every_mechanism_of_the_lineup_has_its_own_clearly_different_colour() -> None:
    from dpdash.comparison import LINEUP
    from ui.charts import MECHANISM_COLOURS

    assert set(LINEUP) <= set(MECHANISM_COLOURS)
    colours = [MECHANISM_COLOURS[label] for label in LINEUP]
    closest = min(np.linalg.norm(_lab(a) - _lab(b)) for i, a in enumerate(colours) for b in colours[i + 1 :])
    assert closest >= 40  # CIELAB ΔE; the former orange and vermillion were 33 apart, blue and sky blue 26


def test_log_epsilon_axes_label_powers_of_ten_only() -> None:
    from dpdash.comparison import accuracy_curves
    from ui.charts import accuracy_curve_figure

    curves = accuracy_curves(epsilons=np.geomspace(0.01, 10, 5), delta=1e-5, l1_sensitivity=1.0,
                             l2_sensitivity=1.0, k=1, confidence=0.95)  # fmt: skip
    figure = accuracy_curve_figure(curves, current_epsilon=1.0, confidence=0.95, k=1)
    for axis in (figure.layout.xaxis, figure.layout.yaxis):
        assert (axis.type, axis.dtick, axis.tickformat) == ("log", 1, "~g")
