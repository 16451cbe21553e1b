"""Releases are counted one way on every page and in the library: a release is the entries one spend
wrote (a mean's sum and count are two entries, one release); where entries are counted they are entries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget, event_for
from dpdash.datasets import synthetic_patients
from dpdash.errors import ParameterError
from dpdash.ledger import Ledger, release_count
from dpdash.mechanisms import Geometric, Laplace
from dpdash.queries import Count, Mean
from dpdash.release import release
from tests.app.conftest import example_identity

APP = Path(__file__).resolve().parents[2] / "app.py"


def seed(path: Path) -> None:
    """The built-in example's budget with three releases in four entries: a mean (its sum and count, one
    release with its values), a count spent directly (no values stored) and a released count."""
    data = synthetic_patients().data
    identity = example_identity()
    with Ledger(path) as ledger:
        ds = ledger.add_dataset(name="patients", fingerprint=identity, budget=Budget(10.0, 1e-6))
        ledger.spend_release(ds, release(Mean(column="age", bounds=(0, 100)), Laplace, data, epsilon=0.05,
                                         identity=identity))  # fmt: skip
        ledger.spend(ds, event_for(Geometric(epsilon=0.4, sensitivity=1), query="count"))
        ledger.spend_release(ds, release(Count(), Geometric, data, epsilon=2.5, identity=identity))


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    seed(tmp_path / "ledger.sqlite")
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_library_counts_a_composite_release_once(tmp_path: Path) -> None:
    seed(tmp_path / "ledger.sqlite")
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        (ds,) = ledger.datasets()
        status, made, entries = ledger.status(ds), ledger.releases(ds), ledger.entries(ds)
        published = ledger.published(ds)
        newest = ledger.releases(ds, last=1)
        with pytest.raises(ParameterError, match="last must be an integer >= 0"):
            ledger.releases(ds, last=-1)
    assert (status.entries, status.releases, release_count(entries), len(made)) == (4, 3, 3, 3)
    assert [m.number for m in made] == [1, 2, 3] and [len(m.entries) for m in made] == [2, 1, 1]
    assert [m.query for m in made] == ["mean of age", "count", "count of rows"]
    # The mean's cost is its record's, not a sum labelled as one; the count spent directly has no record.
    assert made[0].record == published[made[0].uid] and not made[0].summed
    assert made[0].epsilon == pytest.approx(0.05, rel=1e-12)
    assert made[0].epsilon == json.loads(json.dumps(published[made[0].uid]))["epsilon"]
    assert made[1].record is None and made[1].epsilon == pytest.approx(0.4, rel=1e-12)
    assert made[2].record is not None and made[2].epsilon == pytest.approx(2.5, rel=1e-12)
    assert [(m.number, m.uid, m.record) for m in newest] == [(3, made[2].uid, made[2].record)]


def test_an_entry_sum_without_a_record_is_labelled_as_one(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="t", fingerprint="sha256:" + "cd" * 32, budget=Budget(5.0),
                                accountant="basic")  # fmt: skip
        pieces = [event_for(Laplace(epsilon=e, sensitivity=1.0), query="pieces") for e in (0.5, 0.25)]
        ledger.spend_many(ds, pieces)
        (made,) = ledger.releases(ds)
    assert made.summed and made.record is None and made.epsilon == 0.75 and made.delta == 0.0


def test_every_page_shows_the_same_count_of_releases(app: AppTest) -> None:
    assert any(c.value.startswith("3 releases;") for c in app.sidebar.caption), [
        c.value for c in app.sidebar.caption
    ]
    app.switch_page("pages/budget.py").run()
    assert not app.exception, [e.value for e in app.exception]
    assert [m.value for m in app.metric if m.label == "releases"] == ["3"]
    log = app.dataframe[1].value  # after the totals
    assert len(log) == 4 and log["release"].tolist() == [1, 1, 2, 3]  # one row per entry, numbered by release
    assert any(s.value == "Ledger entries" for s in app.subheader)

    app.switch_page("pages/datasets.py").run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.dataframe[0].value["releases"].tolist() == [3]

    app.switch_page("pages/risk.py").run()
    assert not app.exception, [e.value for e in app.exception]
    chart = " ".join(str(c.proto) for c in app.get("plotly_chart"))
    assert "release 3" in chart and "release 4" not in chart  # a mark per release, not per entry
