"""AppTest runs of the real entry point: app.py with its st.navigation over pages/."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app.py"


@pytest.fixture
def app() -> AppTest:
    # AppTest resolves a relative path against the calling file, so pass an absolute one.
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.run()
    return at


def test_app_runs_without_exception(app: AppTest) -> None:
    assert not app.exception, [e.value for e in app.exception]


def test_home_is_the_default_page(app: AppTest) -> None:
    assert [t.value for t in app.title] == ["dpdash"]
    assert app.subheader[0].value == "A differential-privacy budget explorer"


def test_home_names_every_mechanism_and_the_pages(app: AppTest) -> None:
    text = " ".join(m.value for m in app.markdown)
    for mechanism in ("Laplace", "Gaussian", "geometric", "discrete Gaussian", "staircase"):
        assert mechanism in text
    for page_name in ("Data", "Query & release", "Budget", "Planner", "Mechanism explorer", "Audit"):
        assert page_name in text
    assert "coming next" not in text


def test_shared_sidebar_line(app: AppTest) -> None:
    captions = [c.value for c in app.sidebar.caption]
    assert any("differential-privacy budget explorer" in c for c in captions), captions
