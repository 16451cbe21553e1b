"""AppTest of the Query & release page's preview: the ± of what will be published for every query (the
mean's included), numeric histograms, "(other)" apart, per-query settings, post-processing in the
release record, and a clipping bias only when something was clipped."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget
from dpdash.datasets import PublicFacts
from dpdash.facts import Facts
from dpdash.ledger import Ledger, fingerprint
from dpdash.release import dataset_fingerprint

APP = Path(__file__).resolve().parents[2] / "app.py"


def _table(at: AppTest, data: pd.DataFrame, facts: PublicFacts, ledger: Path, budget: bool) -> None:
    from ui.state import ActiveTable

    if budget:
        with Ledger(ledger) as handle:
            handle.add_dataset(name="mine", fingerprint=fingerprint(data), budget=Budget(5.0, 1e-6))
    at.session_state["dpdash_dataset"] = ActiveTable(
        "mine.csv", "upload 'mine.csv'", data, facts, dataset_fingerprint(data), fingerprint(data)
    )


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    data = pd.DataFrame(
        {
            "age": [23.5, 41.25, 67.0, 35.75] * 111,
            "score": [i * 100 / 443 for i in range(444)],  # about 44 in each tenth of [0, 100]
            "smoker": ["yes", "no", "no", "x"] * 111,
        }
    )
    facts = PublicFacts(
        bounds={"age": (0, 100), "score": (0, 100)}, categories={"smoker": ("yes", "no")}, unit=Facts()
    )
    _table(at, data, facts, tmp_path / "ledger.sqlite", budget=True)
    at.switch_page("pages/release.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _definition(at: AppTest) -> str:
    return next(c.value for c in at.caption if "± definition" in c.value)


def test_the_mean_preview_shows_its_own_plus_minus_before_any_release(app: AppTest) -> None:
    app.selectbox(key="release_kind").set_value("Mean").run()
    assert not app.exception and not app.error
    metrics = _metrics(app)
    assert float(metrics["± each value (95%)"]) > 0
    assert metrics["relative error"].endswith("%")
    definition = _definition(app)
    assert "simulated preview" in definition and "4\\,000 possible releases" in definition
    assert "Monte Carlo standard error" in definition
    assert any(c.value.startswith("Released from noisy pieces") for c in app.caption)
    assert not any("Released ·" in m.value for m in app.markdown)  # nothing was released
    # The variance too.
    app.selectbox(key="release_kind").set_value("Variance").run()
    assert not app.exception and "simulated preview" in _definition(app)


def test_a_numeric_histogram_previews_with_other_apart(app: AppTest) -> None:
    app.selectbox(key="release_kind").set_value("Histogram").run()
    app.selectbox(key="release_column").set_value("score (numeric: public bins)").run()
    assert not app.exception and not app.error
    assert any("10 public bins over the declared bounds [0, 100]" in c.value for c in app.caption)
    metrics = _metrics(app)
    assert "± all 10 at once" in metrics  # the 10 declared bins; (other) apart
    assert metrics["chance some value < 0"] == "0.0%"  # not the 50% of the empty (other) cell
    assert any(c.value.startswith("**(other)**") for c in app.caption)
    table = app.dataframe[-1].value
    assert table["cell"].tolist() == ["declared"] * 10 + ["outside the declared list"]
    # Bin width instead of count.
    app.radio(key="release_histogram_score_bins_how").set_value("bin width").run()
    app.number_input(key="release_histogram_score_bins_width").set_value(25.0).run()
    assert "± all 4 at once" in _metrics(app)


def test_headline_numbers_skip_other_on_a_categorical_histogram(app: AppTest) -> None:
    app.selectbox(key="release_kind").set_value("Histogram").run()
    app.selectbox(key="release_column").set_value("smoker").run()
    metrics = _metrics(app)
    assert "± all 2 at once" in metrics and metrics["chance some value < 0"] == "0.0%"
    other = next(c.value for c in app.caption if c.value.startswith("**(other)**"))
    assert "true count 111" in other


def test_the_threshold_resets_when_the_query_changes(app: AppTest) -> None:
    app.selectbox(key="release_kind").set_value("Count").run()
    boxes = [n for n in app.number_input if n.key.startswith("release_threshold_")]
    assert len(boxes) == 1 and boxes[0].value == 444
    boxes[0].set_value(5.0).run()
    app.selectbox(key="release_kind").set_value("Mean").run()
    (box,) = [n for n in app.number_input if n.key.startswith("release_threshold_")]
    assert box.value != 5.0 and box.value == pytest.approx(41.875)


def test_post_processing_is_previewed_and_recorded(app: AppTest) -> None:
    app.selectbox(key="release_kind").set_value("Mean").run()
    app.checkbox(key="release_pp_mean_clamp_bounds").check().run()
    app.selectbox(key="release_pp_mean_rounding").set_value("to decimal places").run()
    app.number_input(key="release_pp_mean_decimals").set_value(1).run()
    assert not app.exception and not app.error
    assert "rounded to 1 decimal place" in _definition(app)
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error
    record = json.loads(app.session_state["release_last"].to_json())  # what the JSON download holds
    assert record["postprocessing"] == ["clamp_to_bounds", "round_decimals:1"]
    value = record["values"][0]
    assert value == round(value, 1) and 0 <= value <= 100


def test_counts_can_be_clamped_at_zero_and_made_integers(app: AppTest) -> None:
    app.selectbox(key="release_kind").set_value("Histogram").run()
    app.selectbox(key="release_column").set_value("smoker").run()
    app.selectbox(key="release_mechanism").set_value("Laplace").run()
    app.checkbox(key="release_pp_histogram_clamp0").check().run()
    app.selectbox(key="release_pp_histogram_rounding").set_value("to integers").run()
    definition = _definition(app)
    assert "v ↦ max" in definition and "nearest integer" in definition
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    released = app.session_state["release_last"]
    assert released.postprocessing == ("clamp_nonnegative", "round")
    assert all(isinstance(v, int) and v >= 0 for v in released.values)
    # The owner asked for integers: the page shows the released integers themselves (± 3.5 alone
    # would round them to 0.1, which changes nothing), not rounded further.
    shown = app.dataframe[-1].value
    assert shown["released"].tolist() == [str(v) for v in released.values]


def test_the_page_shows_values_rounded_to_their_plus_minus_and_the_record_keeps_them_whole(
    app: AppTest,
) -> None:
    """Laplace counts land on a fine grid (166.297119140625): the page shows each to the place of the
    ±'s second significant digit, as the CSV does; the JSON record keeps the full value."""
    from dpdash.export import release_csv
    from dpdash.rounding import half_width_exponent, published_figures

    app.selectbox(key="release_kind").set_value("Histogram").run()
    app.selectbox(key="release_column").set_value("smoker").run()
    app.selectbox(key="release_mechanism").set_value("Laplace").run()
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error
    made = app.session_state["release_last"]
    figures = published_figures(made)
    page = app.dataframe[-1].value
    assert page["released"].tolist() == list(figures.texts)
    assert page["± each value (95% confidence)"].tolist() == list(figures.half_width_texts)
    csv_values = [line.split(",")[1] for line in release_csv(made).splitlines()[1:]]
    assert csv_values == list(figures.texts)
    assert json.loads(made.to_json())["values"] == list(made.values)  # the record: full values
    for text, value, width in zip(figures.texts, made.values, made.accuracy.half_widths, strict=True):
        unit = 10.0 ** half_width_exponent(width)
        assert abs(float(text) - value) <= unit / 2 * (1 + 1e-9)  # at most half a unit of the last digit
        assert len(text.partition(".")[2]) == max(0, -half_width_exponent(width))
    assert any("Each value is rounded to what its ± supports" in c.value for c in app.caption)


def test_no_clipping_bias_when_nothing_was_clipped(app: AppTest) -> None:
    app.selectbox(key="release_kind").set_value("Mean").run()
    report = next(c.value for c in app.caption if c.value.startswith("NOT PRIVATE"))
    assert "clipped 0 below and 0 above" in report and "Clipping moves" not in report


def test_a_quantile_shows_its_exact_plus_minus(app: AppTest) -> None:
    app.selectbox(key="release_kind").set_value("Median / quantile").run()
    assert not app.exception and not app.error
    assert "± (95%)" in _metrics(app)
    assert "(exact selection chances)" in _definition(app) and "in the column" in _definition(app)


def test_new_query_kinds_never_raise_with_any_mechanism(app: AppTest) -> None:
    """Every mechanism on the new kinds: a preview, or a readable message (integer noise on a mean)."""
    settings = [
        ("Variance", None),
        ("Histogram", "score (numeric: public bins)"),
        ("Group-by count", "score (numeric: public bins)"),
        ("Group-by mean", "score (numeric: public bins)"),
    ]
    for kind, column in settings:
        app.selectbox(key="release_kind").set_value(kind).run()
        if column is not None:
            key = (
                "release_column"
                if kind == "Histogram"
                else f"release_{kind.lower().replace('-', '_').replace(' ', '_')}_by"
            )
            app.selectbox(key=key).set_value(column).run()
        for mechanism in ("Laplace", "Gaussian (analytic)", "Geometric", "Discrete Gaussian", "Staircase"):
            app.selectbox(key="release_mechanism").set_value(mechanism).run()
            assert not app.exception, (kind, mechanism, [e.value for e in app.exception])
            assert app.error or any("± definition" in c.value for c in app.caption), (kind, mechanism)
