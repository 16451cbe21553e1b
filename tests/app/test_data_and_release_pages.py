"""AppTest of the Data and Query & release pages, through the real entry point (sidebar included)."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.rounding import published_figures
from tests.app.conftest import example_identity
from ui.text import md

APP = Path(__file__).resolve().parents[2] / "app.py"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    return at


def _status(tmp_path: Path):  # type: ignore[no-untyped-def]
    """The example table's budget status, read from the ledger file itself."""
    from dpdash.ledger import Ledger

    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        return ledger.status(example_identity())


def test_data_page_sets_a_budget_once(app: AppTest, tmp_path: Path) -> None:
    app.switch_page("pages/data.py").run()
    assert not app.exception
    assert [s.value for s in app.subheader] == [
        "1. Load a table", "2. Declare the public facts", "3. Set the privacy budget",
    ]  # fmt: skip
    app.button(key="data_set_budget").click().run()
    app.button(key="data_set_budget_confirm").click().run()
    assert not app.exception
    assert any("cannot be changed once set" in s.value for s in app.success)
    status = _status(tmp_path)
    assert (status.budget.epsilon, status.budget.delta, status.entries) == (1.0, 1e-5, 0)
    assert not [b for b in app.button if b.key == "data_set_budget"]  # no second budget


def test_release_page_previews_and_releases_through_the_ledger(app: AppTest, tmp_path: Path) -> None:
    app.switch_page("pages/data.py").run()
    app.button(key="data_set_budget").click().run()
    app.button(key="data_set_budget_confirm").click().run()
    app.switch_page("pages/release.py").run()
    assert not app.exception
    assert any("Simulated preview" in m.value for m in app.markdown)
    app.selectbox(key="release_kind").set_value("Histogram").run()
    app.selectbox(key="release_mechanism").set_value("Geometric").run()
    app.select_slider(key="release_epsilon_slider").set_value(0.5).run()
    assert not app.exception and not app.error
    # The tightest accountant's total for ε = 0.5 is a hair under 0.5: shown rounded up, not as 0.4999…
    bring = next(m.value for m in app.markdown if "would bring it to" in m.value)
    assert "would bring it to **0.5**" in bring.replace("\\", ""), bring
    app.button(key="release_button").click().run()
    assert any("This cannot be undone" in m.value for m in app.markdown)
    assert any("Total spent after: ε = 0.5 of 1" in m.value for m in app.markdown)
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error
    assert any("Released" in m.value for m in app.markdown)
    status = _status(tmp_path)
    # One geometric release at ε = 0.5; the tightest accountant states it at the budget's δ = 1e-5,
    # where the exact privacy profile gives slightly less than 0.5.
    assert status.entries == 1 and 0.499 < status.spent.epsilon <= 0.5
    released = app.dataframe[-1].value
    assert list(released.columns) == ["value", "released", "± each value (95% confidence)"]
    assert any(" values at once: ± " in c.value for c in app.caption), [c.value for c in app.caption][-3:]


def test_a_release_beyond_the_budget_is_refused(app: AppTest) -> None:
    app.switch_page("pages/data.py").run()
    app.radio(key="data_tier").set_value("Likely to harm if disclosed: ε = 0.05, δ = 1e-7").run()
    app.button(key="data_set_budget").click().run()
    app.button(key="data_set_budget_confirm").click().run()
    app.switch_page("pages/release.py").run()
    app.select_slider(key="release_epsilon_slider").set_value(1.0).run()
    assert any("does not fit the remaining budget" in e.value for e in app.error)
    assert not [b for b in app.button if b.key == "release_button"]  # nothing to click
    assert not app.exception


@pytest.mark.slow
def test_queries_and_mechanisms_never_raise(app: AppTest) -> None:
    app.switch_page("pages/release.py").run()
    for kind in ("Count", "Sum", "Mean", "Group-by sum", "Contingency table"):
        app.selectbox(key="release_kind").set_value(kind).run()
        for mechanism in ("Laplace", "Gaussian (analytic)", "Geometric", "Discrete Gaussian", "Staircase"):
            app.selectbox(key="release_mechanism").set_value(mechanism).run()
            assert not app.exception, (kind, mechanism, [e.value for e in app.exception])


def test_uploaded_csv_replaces_the_table(app: AppTest) -> None:
    """The loading path the Data page uses, with a table the page then shows (upload widget aside)."""
    from dpdash.loading import load_table

    data = pd.DataFrame({"x": [1, 2, 3], "y": ["a", "b", "a"]})
    buffer = io.StringIO()
    data.to_csv(buffer, index=False)
    loaded = load_table(buffer.getvalue().encode(), "small.csv")
    assert list(loaded.data.columns) == ["x", "y"]


def test_median_previews_exact_chances_and_releases(app: AppTest, tmp_path: Path) -> None:
    app.switch_page("pages/data.py").run()
    app.button(key="data_set_budget").click().run()
    app.button(key="data_set_budget_confirm").click().run()
    app.switch_page("pages/release.py").run()
    app.selectbox(key="release_kind").set_value("Median / quantile").run()
    for mechanism in ("Exponential mechanism", "Permute-and-flip", "Report noisy max"):
        app.selectbox(key="release_mechanism_selection").set_value(mechanism).run()
        assert not app.exception and not app.error
        chances = app.dataframe[0].value["chance"]
        assert 0 < chances.sum() <= 1 + 1e-9 and chances.is_monotonic_decreasing
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    heading = f"Released · {md('quantile 0.5 of age')} · Report noisy max · ε"  # the menu's name
    assert any(heading in m.value for m in app.markdown), [m.value for m in app.markdown]
    assert not any("ReportNoisyMax" in m.value for m in app.markdown)
    assert _status(tmp_path).entries == 1
    # The released block belongs to its query: another query's preview does not show it.
    app.selectbox(key="release_kind").set_value("Histogram").run()
    assert not any("Released ·" in m.value for m in app.markdown)
    assert any("Your last release" in c.value and "shows again when" in c.value for c in app.caption)
    app.selectbox(key="release_kind").set_value("Median / quantile").run()
    assert any(heading in m.value for m in app.markdown)


def _metric(app: AppTest, label: str) -> float:
    return float(next(m.value for m in app.metric if m.label.startswith(label)))


def test_a_median_and_a_group_by_mean_publish_the_previewed_plus_minus(app: AppTest) -> None:
    """The ± shown on the page after the release is the ± the preview showed, in the column's units:
    equal for a median (exact chances; the preview shows 4 significant digits); for a group-by mean the
    same function at the released pieces instead of the true ones, so equal up to the count's noise
    (about 0.3% of 20 000 rows per region here: 2% allowed)."""
    from dpdash.published import numeric_accuracy
    from dpdash.queries import query_from_dict
    from dpdash.release import calibrate

    app.switch_page("pages/data.py").run()
    app.button(key="data_set_budget").click().run()
    app.button(key="data_set_budget_confirm").click().run()
    app.switch_page("pages/release.py").run()
    app.selectbox(key="release_kind").set_value("Median / quantile").run()
    app.select_slider(key="release_epsilon_slider").set_value(0.1).run()
    previewed = _metric(app, "± (95%)")
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error
    made = app.session_state["release_last"]
    assert made.accuracy.method == "exact selection chances" and "column's units" in made.accuracy.definition
    assert float(f"{made.accuracy.half_widths[0]:.4g}") == previewed
    shown = app.dataframe[-1].value
    assert shown["± each value (95% confidence)"].tolist() == list(published_figures(made).half_width_texts)

    app.selectbox(key="release_kind").set_value("Group-by mean").run()
    app.select_slider(key="release_epsilon_slider").set_value(0.1).run()
    assert not app.exception and not app.error
    largest = _metric(app, "± each value, largest (95%)")
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error
    made = app.session_state["release_last"]
    assert made.query_name.startswith("mean of") and made.accuracy.method == "simulated"
    # The release states the same function at its released (noisy) counts, not the true ones, and a
    # release's noise is not seeded (OS randomness): the counts' noise moves the ± by about 2 % here
    # (one run: 1.84 against a preview of 1.88), so the tolerance is 20 %, about ten times that.
    assert max(made.accuracy.half_widths) == pytest.approx(largest, rel=0.2)
    from dpdash.datasets import synthetic_patients

    query = query_from_dict(made.query)
    pieces = calibrate(query, made.mechanism, synthetic_patients().data, epsilon=made.epsilon)
    noisy = {p.name: list(p.noisy_values) for p in made.pieces}
    again, _, _ = numeric_accuracy(query, pieces, noisy, confidence=made.accuracy.confidence)
    assert again == made.accuracy  # the one function, at the released (public) pieces
    shown = app.dataframe[-1].value
    assert shown["± each value (95% confidence)"].tolist() == list(published_figures(made).half_width_texts)


@pytest.mark.slow
def test_keys_that_are_not_public_are_previewed_with_their_chances_and_released(
    app: AppTest, tmp_path: Path
) -> None:
    app.switch_page("pages/data.py").run()
    app.button(key="data_set_budget").click().run()
    app.button(key="data_set_budget_confirm").click().run()
    app.switch_page("pages/release.py").run()
    app.selectbox(key="release_kind").set_value("Counts per key (keys not public)").run()
    app.selectbox(key="release_counts_per_key_keys_not_public_column").set_value("visits").run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert app.selectbox(key="release_mechanism_keys").value == "Geometric with a key threshold"
    app.select_slider(key="release_epsilon_slider").set_value(0.5).run()
    app.select_slider(key="release_delta_keys").set_value(1e-6).run()
    rule = next(m.value for m in app.markdown if "Threshold **τ" in m.value)
    from dpdash.mechanisms import KeyThreshold

    tau = KeyThreshold(epsilon=0.5, delta=1e-6, max_groups=1, max_rows_per_group=1).threshold
    assert f"τ = {tau}**" in rule
    # The owner's table: every key found, with its exact chance of being published.
    keys = next(d.value for d in app.dataframe if "chance published" in d.value.columns)
    assert set(keys.columns) >= {"key", "true count", "chance published"} and len(keys) > 10
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    released = app.dataframe[-1].value
    assert len(released) > 0 and all(int(v) >= tau for v in released["released"])
    status = _status(tmp_path)
    assert status.entries == 1
    # Back to a query with public categories: its own mechanisms, nothing carried over.
    app.selectbox(key="release_kind").set_value("Histogram").run()
    assert not app.exception and app.selectbox(key="release_mechanism").value == "Laplace"


def test_weighted_bounding_is_declared_kept_past_the_lock_and_released(app: AppTest, tmp_path: Path) -> None:
    """Weights are how c is enforced, not whom a release protects: declared on the Data page, they stay
    when the budget locks the unit of privacy, and a histogram released with Laplace states them."""
    app.switch_page("pages/data.py").run()
    bounding = next(r for r in app.radio if (r.key or "").startswith("data_bounding_"))
    bounding.set_value("weight")
    next(b for b in app.button if b.label == "Save the public facts").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    app.button(key="data_set_budget").click().run()
    app.button(key="data_set_budget_confirm").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert app.session_state["dpdash_dataset"].facts.unit.bounding == "weight"
    app.switch_page("pages/release.py").run()
    app.selectbox(key="release_kind").set_value("Median / quantile").run()  # not a sum over rows
    assert not app.exception
    assert any("keep c of each person's rows" in e.value.replace("\\", "") for e in app.error)
    app.selectbox(key="release_kind").set_value("Histogram").run()
    assert app.selectbox(key="release_mechanism").value == "Laplace"
    app.button(key="release_button").click().run()
    app.button(key="release_confirm").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    assert _status(tmp_path).entries == 1
    released = app.session_state["release_last"].values  # the record's full values (the page rounds them)
    assert not all(float(v).is_integer() for v in released)  # fractional answers, continuous noise
    app.switch_page("pages/data.py").run()
    bounding = next(r for r in app.radio if (r.key or "").startswith("data_bounding_"))
    assert bounding.value == "weight" and not app.exception


def test_a_bin_width_too_small_to_count_gets_a_message(app: AppTest) -> None:
    """Bin width 5e-324 over the bounds of age: (U − L)/width overflows. A message where the bins are
    chosen, no traceback (issue 25, item 10)."""
    app.switch_page("pages/release.py").run()
    app.selectbox(key="release_kind").set_value("Histogram").run()
    app.selectbox(key="release_column").set_value("age (numeric: public bins)").run()
    next(r for r in app.radio if r.label == "Bins").set_value("bin width").run()
    next(n for n in app.number_input if n.label == "Bin width").set_value(5e-324).run()
    assert not app.exception, [e.value for e in app.exception]
    assert any("more bins than can be counted" in w.value for w in app.warning), app.warning


@pytest.mark.parametrize("page", ["pages/release.py", "pages/synthetic.py"])
def test_without_a_budget_a_release_page_says_where_to_set_it(app: AppTest, page: str) -> None:
    """Both release pages end at the same gate until the table has a budget: nothing to press."""
    app.switch_page(page).run()
    assert not app.exception
    assert [w.value.replace("\\", "") for w in app.warning] == [
        "Set this table's privacy budget on the **Data** page before releasing."
    ]
    assert not [b for b in app.button if "release" in str(b.label).lower()]
