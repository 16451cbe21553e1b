"""AppTest of the Mechanism explorer page."""

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dpdash import comparison
from ui import explorer_tables
from ui.text import md
from ui.warm import warm_server

PAGE = Path(__file__).resolve().parents[2] / "pages" / "explorer.py"


@pytest.fixture(scope="module")
def page() -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.run()
    return at


def test_explorer_renders_table_charts_and_inversion(page: AppTest) -> None:
    assert not page.exception, [e.value for e in page.exception]
    assert [s.value for s in page.subheader] == ["Accuracy at ε = 1", "What ε does an accuracy cost?"]
    table = page.dataframe[0].value
    assert list(table["mechanism"])[:2] == ["Laplace", "Gaussian (analytic)"]
    assert any("classic calibration is proven only for ε < 1" in c.value for c in page.caption)
    inverse = page.dataframe[1].value
    laplace = float(inverse.loc[inverse["mechanism"] == "Laplace", "smallest ε"].item())
    # Δ = 5, a count of the example (up to 5 rows per person): ±5 at 95 % costs ε = 5·ln(20)/5 = ln 20.
    assert laplace == pytest.approx(2.995732, rel=1e-3)  # shown to 4 significant digits


def test_the_sensitivity_defaults_to_a_count_of_the_active_table_and_the_caption_follows_it(
    page: AppTest,
) -> None:
    assert page.number_input(key="explorer_l1").value == page.number_input(key="explorer_l2").value == 5.0
    said = " ".join(c.value.replace("\\", "") for c in page.caption)
    assert "Δ = 5: a count of the active table, whose unit of privacy is a person with up to 5 rows" in said
    assert "Protects each person (up to 5 rows each" in said
    page.number_input(key="explorer_l1").set_value(8.0).run()
    page.number_input(key="explorer_l2").set_value(8.0).run()
    said = " ".join(c.value.replace("\\", "") for c in page.caption)
    assert "this covers up to 8 rows of one person" in said and "its counts need Δ = 5" in said
    assert "Protects each person (up to 8 rows each)" in said and "Protects each row" not in said
    page.number_input(key="explorer_l1").set_value(1.0).run()
    page.number_input(key="explorer_l2").set_value(1.0).run()
    said = " ".join(c.value.replace("\\", "") for c in page.caption)
    assert "this covers one row" in said and "Protects each row" in said
    page.number_input(key="explorer_l1").set_value(0.5).run()
    said = " ".join(c.value.replace("\\", "") for c in page.caption)
    assert "protects no row" in said and "Protects" not in said
    for key in ("explorer_l1", "explorer_l2"):
        page.number_input(key=key).set_value(5.0).run()


def test_the_server_warm_up_computes_exactly_the_first_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """ui.warm computes the explorer's first screen into the server's cache: the page's first run then
    computes nothing (each exact computation below would fail if the page asked for other numbers)."""
    st.cache_data.clear()
    explorer_tables.warm()

    def computed(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"computed again, not taken from the warmed cache: {kwargs}")

    for name in ("compare", "accuracy_curves", "epsilon_for_accuracy"):
        monkeypatch.setattr(comparison, name, computed)
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.dataframe[0].value["mechanism"].iloc[0] == "Laplace"


def test_the_warm_up_starts_once_per_process() -> None:
    warm_server()  # this process may have started it already (app.py in an earlier test)
    assert warm_server() is False


def test_large_epsilon_warns(page: AppTest) -> None:
    page.select_slider(key="explorer_epsilon_slider").set_value(7.0).run()
    assert any("weak guarantee" in w.value for w in page.warning)
    page.select_slider(key="explorer_epsilon_slider").set_value(1.0).run()
    assert not any("weak guarantee" in w.value for w in page.warning)


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("abc", "epsilon must be a real number, got epsilon='abc'"),
        ("0", "epsilon must be a finite number > 0"),
    ],
)
def test_bad_typed_epsilon_is_a_message_not_a_traceback(page: AppTest, typed: str, message: str) -> None:
    page.text_input(key="explorer_epsilon_typed").input(typed).run()
    assert not page.exception
    assert any(md(message) in e.value for e in page.error)  # the message, Markdown-escaped
    assert len(page.dataframe) == 0  # nothing computed with a bad ε
    page.text_input(key="explorer_epsilon_typed").input("0.8").run()
    assert not page.error
    assert page.subheader[0].value == "Accuracy at ε = 0.8"
    page.text_input(key="explorer_epsilon_typed").input("").run()


def test_fractional_sensitivity_explains_integer_mechanisms(page: AppTest) -> None:
    page.number_input(key="explorer_l1").set_value(2.5).run()
    assert any("integer mechanism: needs an integer sensitivity" in c.value for c in page.caption)
    page.number_input(key="explorer_l1").set_value(1.0).run()
