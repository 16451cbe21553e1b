"""AppTest of the "What does ε mean?" page."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.text import md

PAGE = Path(__file__).resolve().parents[2] / "pages" / "risk.py"


@pytest.fixture(scope="module")
def page() -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.run()
    return at


def test_risk_page_renders_every_section(page: AppTest) -> None:
    assert not page.exception, [e.value for e in page.exception]
    assert [s.value for s in page.subheader] == [
        "The attacker's odds",
        "Prior → posterior",
        "The best possible membership test",
        "Reference points",
        "Worked examples from the textbook",
    ]
    text = " ".join(m.value for m in page.markdown)
    assert "at most **73.1%** sure" in text  # prior 50%, ε = 1
    assert "Without this release an attacker is right about 50 in 100 people; with it, at most 74" in text
    assert "detects at most **2.7%**" in text
    assert "At ε = 1 these are 12.18 and 12.21" in text


def test_prior_and_epsilon_update_the_words(page: AppTest) -> None:
    page.slider(key="risk_prior").set_value(0.1).run()
    text = " ".join(m.value for m in page.markdown)
    assert "right about 10 in 100 people; with it, at most 24 in 100" in text
    page.select_slider(key="risk_epsilon_slider").set_value(5.0).run()
    assert any("weak guarantee" in w.value for w in page.warning)
    assert not page.exception


def test_bad_epsilon_stops_with_a_message(page: AppTest) -> None:
    page.text_input(key="risk_epsilon_typed").input("-2").run()
    assert any(md("epsilon must be a finite number > 0") in e.value for e in page.error)
    assert not page.exception
    assert len(page.subheader) == 0
    page.text_input(key="risk_epsilon_typed").input("").run()
