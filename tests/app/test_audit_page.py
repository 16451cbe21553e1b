"""AppTest of the Audit page: mechanism and query audits, the broken demo caught, bad settings as messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.text import md

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "pages" / "audit.py"
BROKEN = "Laplace with half the noise it needs (broken, for demonstration)"


@pytest.fixture
def page() -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.select_slider(key="audit_trials").set_value(10_000)
    return at


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_audit_page_is_in_the_navigation() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/audit.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Audit"]
    assert any("release-grade sampler" in c.value for c in at.caption)
    assert at.button(key="audit_more").disabled  # nothing to add to before a first run


def test_laplace_audit_is_consistent_with_its_claim(page: AppTest) -> None:
    # 99.9%: the bound exceeds the true ε = 1 with probability < 0.1% (in 3000 runs at
    # 10 000 trials the largest bound was 0.97).
    page.select_slider(key="audit_confidence").set_value(0.999)
    page.button(key="audit_run").click().run()
    assert not page.exception, [e.value for e in page.exception]
    metrics = _metrics(page)
    assert metrics["trials per side"] == "10 000"
    assert metrics["claimed ε"] == "1"
    lower = float(metrics["ε lower bound (99.9% confidence)"])
    assert 0.5 < lower <= 1.0
    assert [s.value[:28] for s in page.success] == ["Consistent with the claim: w"]
    assert not page.error
    assert len(page.get("plotly_chart")) == 2
    # A rerun keeps the result; "Add more" continues the same run.
    page.run()
    assert _metrics(page)["trials per side"] == "10 000"
    page.button(key="audit_more").click().run()
    assert _metrics(page)["trials per side"] == "20 000"
    # Changing a setting starts afresh: the old result is not shown for the new settings.
    page.select_slider(key="audit_epsilon_slider").set_value(0.5).run()
    assert not page.metric
    assert any("settings changed" in i.value for i in page.info)


def test_broken_demo_is_refuted(page: AppTest) -> None:
    # True ε is 2: at 10 000 trials per side the bound was ≥ 1.64 in 300 runs out of 300.
    page.selectbox(key="audit_mechanism").set_value(BROKEN).run()
    assert any("broken on purpose" in w.value for w in page.warning)
    page.button(key="audit_run").click().run()
    assert not page.exception, [e.value for e in page.exception]
    assert float(_metrics(page)["ε lower bound (99% confidence)"]) > 1.0
    assert [e.value[:10] for e in page.error] == ["VIOLATION:"]
    assert not page.success


@pytest.mark.parametrize(
    "mechanism",
    ["Gaussian (analytic)", "Geometric", "Exponential mechanism", "Report noisy max",
     "Randomized response (k categories)"],
)  # fmt: skip
def test_other_mechanisms_run(page: AppTest, mechanism: str) -> None:
    page.selectbox(key="audit_mechanism").set_value(mechanism).run()
    page.button(key="audit_run").click().run()
    assert not page.exception, [e.value for e in page.exception]
    assert page.success or page.error
    assert "trials per side" in _metrics(page)


def test_query_audit_of_the_count(page: AppTest) -> None:
    page.radio(key="audit_what").set_value("A query on the loaded table").run()
    inputs = " ".join(m.value for m in page.markdown if "Inputs" in m.value)
    assert "worst-case neighbour, one person added" in inputs
    assert "count of rows" in inputs and "ε = 1" in inputs
    page.button(key="audit_run").click().run()
    assert not page.exception, [e.value for e in page.exception]
    assert float(_metrics(page)["ε lower bound (99% confidence)"]) <= 1.0
    assert any(s.value.startswith("Consistent with the claim") for s in page.success)


def test_bad_settings_are_messages(page: AppTest) -> None:
    page.text_input(key="audit_epsilon_typed").input("-1").run()
    assert any(md("epsilon must be a finite number > 0") in e.value for e in page.error)  # an escaped message
    assert not page.exception
    assert not page.button  # stopped before the run controls
    page.text_input(key="audit_epsilon_typed").input("").run()

    # Integer noise on a mean of a real column cannot be calibrated: a message, no traceback.
    page.radio(key="audit_what").set_value("A query on the loaded table").run()
    page.selectbox(key="audit_query").set_value("Mean of a column").run()
    page.selectbox(key="audit_column").set_value("income").run()
    page.selectbox(key="audit_query_mechanism").set_value("Geometric").run()
    assert not page.exception, [e.value for e in page.exception]
    assert any("Geometric adds integer noise" in e.value for e in page.error)
    assert not page.button
