"""AppTest of the "…or type an exact ε" box on every page that has one: whatever is typed, a message and
no traceback, and the page works again once a valid ε is typed (or the box is cleared)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import budgeted_app
from ui.text import md

ROOT = Path(__file__).resolve().parents[2]

#: What people type, and the words the message must contain.
HOSTILE = [
    ("1000", "between 1e-06 and 100"),
    ("1e300", "between 1e-06 and 100"),
    ("5e-324", "between 1e-06 and 100"),
    ("1e-300", "between 1e-06 and 100"),
    ("1e-7", "between 1e-06 and 100"),
    ("nan", "epsilon must be a finite number > 0"),
    ("inf", "epsilon must be a finite number > 0"),
    ("-1", "epsilon must be a finite number > 0"),
    ("0", "epsilon must be a finite number > 0"),
    ("abc", "epsilon must be a real number, got epsilon='abc'"),
]


def _explorer() -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "explorer.py"), default_timeout=90)
    return at.run()


def _audit() -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / "audit.py"), default_timeout=90)
    return at.run()


def _release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    at = budgeted_app(tmp_path / "ledger.sqlite", tmp_path, monkeypatch)
    at.switch_page("pages/release.py").run()
    return at


def _check_every_hostile_value(at: AppTest, key: str) -> None:
    assert not at.exception, [e.value for e in at.exception]
    for typed, message in HOSTILE:
        at.text_input(key=f"{key}_typed").input(typed).run()
        assert not at.exception, (typed, [e.value for e in at.exception])
        errors = [e.value for e in at.error]
        assert any(md(message) in e and "from 1e-06 to 100" in e for e in errors), (typed, errors)
    for valid in ("100", "1e-06", "50", "0.3"):  # the ends of the range, and a large ε that warns
        at.text_input(key=f"{key}_typed").input(valid).run()
        assert not at.exception, (valid, [e.value for e in at.exception])
        assert not [e.value for e in at.error if "epsilon" in e.value], valid
    assert any("Using the typed ε = 0.3" in c.value for c in at.caption)


def test_explorer_refuses_every_hostile_epsilon() -> None:
    at = _explorer()
    _check_every_hostile_value(at, "explorer_epsilon")
    assert at.subheader[0].value == "Accuracy at ε = 0.3"


def test_large_typed_epsilon_warns_without_overflow() -> None:
    at = _explorer()
    at.text_input(key="explorer_epsilon_typed").input("100").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("weak guarantee" in w.value and "2.69e+43" in w.value for w in at.warning)


def test_release_page_refuses_every_hostile_epsilon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _release(tmp_path, monkeypatch)
    _check_every_hostile_value(at, "release_epsilon")
    assert [b for b in at.button if b.key == "release_button"]  # the page works again


def test_audit_page_refuses_every_hostile_epsilon() -> None:
    at = _audit()
    _check_every_hostile_value(at, "audit_epsilon")
    at.radio(key="audit_what").set_value("A query on the loaded table").run()
    _check_every_hostile_value(at, "audit_query_epsilon")


def test_moving_the_slider_clears_the_typed_epsilon() -> None:
    at = _explorer()
    at.text_input(key="explorer_epsilon_typed").input("0.8").run()
    assert at.subheader[0].value == "Accuracy at ε = 0.8"
    at.select_slider(key="explorer_epsilon_slider").set_value(2.0).run()
    assert at.text_input(key="explorer_epsilon_typed").value == ""
    assert at.subheader[0].value == "Accuracy at ε = 2"


@pytest.mark.parametrize("page", ["explorer", "risk", "audit"])
def test_a_typed_epsilon_moves_the_slider_so_the_two_controls_agree(page: str) -> None:
    at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=90).run()
    key = f"{page}_epsilon"
    at.text_input(key=f"{key}_typed").input("0.5").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.select_slider(key=f"{key}_slider").value == 0.5
    at.text_input(key=f"{key}_typed").input("0.8").run()  # not one of the slider's stops: added as one
    slider = at.select_slider(key=f"{key}_slider")
    assert slider.value == 0.8 and "0.8" in slider.options
    at.text_input(key=f"{key}_typed").input("abc").run()  # an invalid ε leaves the slider where it was
    assert at.select_slider(key=f"{key}_slider").value == 0.8 and at.error


def test_each_epsilon_is_named_for_what_it_is() -> None:
    labels = {}
    for page in ("explorer", "risk", "audit"):
        at = AppTest.from_file(str(ROOT / "pages" / f"{page}.py"), default_timeout=90).run()
        labels[page] = at.select_slider(key=f"{page}_epsilon_slider").label
    assert labels == {
        "explorer": "ε to compare the mechanisms at", "risk": "ε to explain", "audit": "Claimed ε to audit"
    }
    assert "Privacy budget ε" not in labels.values()
