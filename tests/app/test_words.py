"""AppTest: the sidebar and the Query & release page state the guarantee in plain words (the helper's
sentence), with the technical form one click away, and none of the old jargon."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget, event_for
from dpdash.datasets import synthetic_patients
from dpdash.ledger import Ledger
from dpdash.mechanisms import Laplace
from dpdash.wording import guarantee
from tests.app.conftest import example_identity

APP = Path(__file__).resolve().parents[2] / "app.py"
#: The old wording: jargon lists, and "one row" beside "add or remove one person's rows".
OLD = ("Unit of privacy:", "unit of privacy:", "Neighbours:", "neighbours:", "trusted as declared (no id")


def _plain(elements) -> str:  # type: ignore[no-untyped-def]
    """Rendered text of Markdown elements: Streamlit shows ``\\x`` as ``x``."""
    return " ".join(str(e.value) for e in elements).replace("\\", "")


@pytest.fixture
def ledger_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    return path


def test_sidebar_states_who_is_protected_in_plain_words(ledger_path: Path) -> None:
    example = synthetic_patients()
    unit = example.facts.unit
    with Ledger(ledger_path) as ledger:
        ds = ledger.add_dataset(name="patients", fingerprint=example_identity(),
                                budget=Budget(1.0, 1e-5), accountant="tightest", unit=unit)  # fmt: skip
        ledger.spend(ds, event_for(Laplace(epsilon=0.25, sensitivity=5.0), query="count"))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    assert not at.exception
    assert next(c.value for c in at.sidebar.caption if "release" in c.value).startswith("1 release; spent as")
    text = _plain(at.sidebar.markdown)
    words = guarantee(unit, 1.0, 1e-5, scope="all releases from this table together (its whole budget)",
                      accountant="tightest")  # fmt: skip
    assert f"**Who is protected:** {words.plain}" in text
    assert "Protects each person (up to 5 rows each, identified by “person_id”)" in text
    assert not [old for old in OLD if old in text] and "one row" not in text
    technical = _plain(at.sidebar.expander[0].markdown)
    assert at.sidebar.expander[0].label == "The exact guarantee (technical)"
    assert technical == words.technical and "(1, 1e-05)-differential privacy" in technical


def test_sidebar_without_a_budget_says_who_is_protected(ledger_path: Path) -> None:
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    text = _plain(at.sidebar.markdown)
    assert f"**Who is protected:** {guarantee(synthetic_patients().facts.unit).plain}" in text
    assert not [old for old in OLD if old in text]


def test_release_page_states_the_guarantee_before_and_after_a_release(ledger_path: Path) -> None:
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page("pages/data.py").run()
    at.button(key="data_set_budget").click().run()
    at.button(key="data_set_budget_confirm").click().run()
    at.switch_page("pages/release.py").run()
    at.select_slider(key="release_epsilon_slider").set_value(0.5).run()
    assert not at.exception and not at.error
    unit = synthetic_patients().facts.unit
    captions = _plain(at.caption)
    assert "protects each person (up to 5 rows each, identified by “person_id”)" in captions
    before = guarantee(unit, 0.5, 0.0, accountant="tightest")
    assert before.plain in captions and "e^0.5 ≈ 1.65" in before.plain
    assert any(_plain(x.markdown) == before.technical for x in at.expander)
    at.button(key="release_button").click().run()
    at.button(key="release_confirm").click().run()
    assert not at.exception and not at.error
    captions = _plain(at.caption)
    after = guarantee(unit, 0.5, 0.0)
    accuracy = "With probability at least 95%, the released value is within ± of the true value."
    assert f"{accuracy} {after.plain}" in captions
    everything = captions + _plain(at.markdown)
    assert not [old for old in OLD if old in everything]


def test_home_is_a_short_guide_to_every_page(ledger_path: Path) -> None:
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    guide = " ".join(m.value for m in at.markdown)
    pages = ("Data", "Datasets", "Query & release", "Budget", "Planner", "What does ε mean?",
             "Mechanism explorer", "Audit")  # fmt: skip
    assert [page for page in pages if f"- **{page}**: " not in guide] == []
    assert "coming next" not in guide and "early version" not in guide
    assert "**First run for " in guide  # the first-run checklist stays


def test_datasets_page_says_who_each_budget_protects(ledger_path: Path) -> None:
    example = synthetic_patients()
    with Ledger(ledger_path) as ledger:
        ledger.add_dataset(name="patients", fingerprint=example_identity(), budget=Budget(1.0, 1e-5),
                           accountant="tightest", unit=example.facts.unit)  # fmt: skip
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page("pages/datasets.py").run()
    assert not at.exception
    table = at.dataframe[0].value  # the page's one table
    assert list(table["protects"]) == ["each person (up to 5 rows each, identified by “person_id”)"]
