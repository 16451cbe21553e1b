"""The Query & release page lists the active table's recent releases from the ledger, every session's, with
the values each release published and their ±: a release whose browser tab closed before its values were
shown is found there. An analyst sees what the release published and nothing of the owner's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget, event_for
from dpdash.datasets import synthetic_patients
from dpdash.ledger import Ledger
from dpdash.mechanisms import Geometric, Laplace
from dpdash.queries import Histogram, Mean
from dpdash.release import Release, release
from dpdash.rounding import published_figures
from tests.app.conftest import example_identity
from tests.app.test_roles import ROWS, UNIT, as_person, everything_shown, served, true_value_texts
from ui.recent_releases import RECENT

__all__ = ["served"]  # the fixture, used by the analyst's test below

APP = Path(__file__).resolve().parents[2] / "app.py"


def _values(at: AppTest, number: int) -> pd.DataFrame:
    """The values table of the listed release ``number`` (in its container, keyed by that number)."""
    found = []

    def walk(node: object) -> None:
        if getattr(node, "key", None) == f"recent_release_{number}":
            found.append(node)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    (box,) = found
    (table,) = box.dataframe  # type: ignore[attr-defined]
    return table.value


def _check_values(table: pd.DataFrame, made: Release) -> None:
    """The page's values and ± are the release's, rounded as everywhere (``dpdash.rounding``)."""
    shown = published_figures(made)
    assert table["released"].tolist() == list(shown.texts)
    assert table[made.accuracy.column_label].tolist() == list(shown.half_width_texts)


def test_a_release_recorded_by_another_session_shows_after_a_reload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    data = synthetic_patients().data
    identity = example_identity()
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(name="patients", fingerprint=identity, budget=Budget(5.0, 1e-6))
        ledger.spend(ds, event_for(Geometric(epsilon=0.3, sensitivity=1), query="count"))  # no values kept
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page("pages/release.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.label for e in at.expander if e.label.startswith("Releases from")] == [
        "Releases from this table so far: 1, with their values"
    ]
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "**Release 1: count** · Geometric · " in text and "ε = 0.3 · another session" in text
    assert any("Its values are not in the ledger" in c.value for c in at.caption)

    # Another session (a tab that closed mid-way, a script) releases a mean: recorded with its values.
    with Ledger(path) as ledger:
        other = ledger.start_session("another tab")
        made = release(Mean(column="age", bounds=(0, 100)), Laplace, data, epsilon=0.2, identity=identity)
        entries = ledger.spend_release(ds, made, session=other)
    assert len(entries) == 2  # its sum and its count: one release
    at.run()  # the page read again
    assert not at.exception, [e.value for e in at.exception]
    assert [e.label for e in at.expander if e.label.startswith("Releases from")] == [
        "Releases from this table so far: 2, with their values"
    ]
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert f"**Release 2: mean of age** · {made.mechanism} · " in text and "ε = 0.2 · another session" in text
    _check_values(_values(at, 2), made)
    assert "(the sum of its" not in text  # the cost is the release's own, from its record


def test_a_release_made_on_the_page_is_listed_as_this_sessions(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    with Ledger(path) as ledger:
        ledger.add_dataset(name="patients", fingerprint=example_identity(), budget=Budget(5.0, 1e-6))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page("pages/release.py").run()
    assert not [e for e in at.expander if e.label.startswith("Releases from")]  # none yet
    at.button(key="release_button").click().run()
    at.button(key="release_confirm").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "**Release 1: " in text and "· this session" in text
    with Ledger(path) as ledger:
        (ds,) = ledger.datasets()
        (one,) = ledger.releases(ds)
    assert one.record is not None
    _check_values(_values(at, 1), Release.from_dict(one.record))


def test_an_analyst_sees_what_was_published_and_nothing_of_the_owners(served: dict[str, object]) -> None:
    data, identity = served["data"], str(served["identity"])
    with Ledger() as ledger:
        (ds,) = ledger.datasets()
        owners = ledger.start_session("dpdash app: ann@example.org")
        query = Histogram(column="age", categories=list(range(18, 25)), facts=UNIT)
        made = release(query, Laplace, data, epsilon=0.3, identity=identity)
        ledger.spend_release(ds, made, session=owners, user="ann@example.org")
    bob = as_person("bob@example.org")
    bob.switch_page("pages/release.py").run()
    assert not bob.exception and not bob.error, [e.value for e in bob.error]
    _check_values(_values(bob, 1), made)
    shown = everything_shown(bob)
    for text in true_value_texts(ROWS):  # the row count is the owner's
        assert text not in shown, text
    assert "owner only" not in shown and "secret-row" not in shown


def test_only_the_newest_releases_are_listed_and_the_rest_are_pointed_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "ledger.sqlite"
    monkeypatch.setenv("DPDASH_LEDGER", str(path))
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(name="patients", fingerprint=example_identity(),
                                budget=Budget(5.0, 1e-6))  # fmt: skip
        for i in range(RECENT + 2):
            noise = Geometric(epsilon=0.01 * (i + 1), sensitivity=1)
            ledger.spend(ds, event_for(noise, query=f"count {i + 1}"))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page("pages/release.py").run()
    assert not at.exception, [e.value for e in at.exception]
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    listed = [n for n in range(1, RECENT + 3) if f"**Release {n}: count {n}**" in text]
    assert listed == list(range(3, RECENT + 3))  # the newest ten
    assert any("2 older releases are in the stakeholder report" in c.value for c in at.caption)
