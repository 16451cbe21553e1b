"""The ledger: datasets, spends and refusals, totals, append-only history, export and import."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dpdash import Gaussian, Laplace
from dpdash.accounting import (
    Budget,
    BudgetExceededError,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PureDPEvent,
    UnsupportedEventError,
    ZCDPEvent,
    event_for,
    get_accountant,
    running,
    running_pld,
    running_tallies,
)
from dpdash.accounting.events import canonical_json
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.ledger import Dataset, Ledger, LedgerError, default_ledger_path, fingerprint
from dpdash.ledger.records import INSERT_ENTRY

FINGERPRINT = fingerprint(b"id,age\n1,40\n2,51\n")


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    with Ledger(tmp_path / "ledger.sqlite") as opened:
        yield opened


@pytest.fixture
def dataset(ledger: Ledger) -> Dataset:
    return ledger.add_dataset(
        name="patients", fingerprint=FINGERPRINT, budget=Budget(1.0, 1e-6), accountant="basic"
    )


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- where it lives ------------------------------------------------------------------------------------


def test_default_path_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "x.sqlite"))
    assert default_ledger_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("DPDASH_LEDGER")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_ledger_path() == tmp_path / "data" / "dpdash" / "ledger.sqlite"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_ledger_path() == tmp_path / "home" / ".local" / "share" / "dpdash" / "ledger.sqlite"


def test_ledger_without_a_path_opens_the_configured_file(tmp_path: Path) -> None:
    with Ledger() as ledger:  # DPDASH_LEDGER points into tmp_path (conftest)
        assert ledger.path == default_ledger_path()
        assert ledger.path.exists()


def test_missing_folders_are_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "ledger.sqlite"
    Ledger(path).close()
    assert path.is_file()


# ---- datasets ---------------------------------------------------------------------------------------


def test_register_and_find(ledger: Ledger, dataset: Dataset) -> None:
    assert ledger.dataset(FINGERPRINT) == dataset == ledger.dataset(dataset)
    assert ledger.datasets() == [dataset]
    assert ledger.find_dataset("sha256:other") is None
    with pytest.raises(ParameterError, match="no dataset"):
        ledger.dataset("sha256:other")


def test_registering_again_returns_the_same_dataset_but_never_changes_its_budget(
    ledger: Ledger, dataset: Dataset
) -> None:
    again = ledger.add_dataset(
        name="renamed", fingerprint=FINGERPRINT, budget=Budget(1.0, 1e-6), accountant="basic"
    )
    assert again == dataset
    with pytest.raises(ParameterError, match="fixed"):
        ledger.add_dataset(
            name="patients", fingerprint=FINGERPRINT, budget=Budget(2.0, 1e-6), accountant="basic"
        )


def test_budget_and_accountant_validation(ledger: Ledger) -> None:
    with pytest.raises(ParameterError, match="delta"):
        Budget(1.0, 1.0)
    with pytest.raises(ParameterError, match="epsilon"):
        Budget(0.0)
    with pytest.raises(ParameterError, match="accountant must be one of"):
        ledger.add_dataset(name="d", fingerprint="sha256:x", budget=Budget(1.0), accountant="magic")
    with pytest.raises(ParameterError, match="pure-DP budget"):
        ledger.add_dataset(name="d", fingerprint="sha256:x", budget=Budget(1.0), accountant="zcdp")
    with pytest.raises(ParameterTypeError):
        ledger.add_dataset(name="d", fingerprint="sha256:x", budget=(1.0, 0.0), accountant="basic")  # type: ignore[arg-type]


def test_fingerprint_of_bytes_and_dataframes() -> None:
    import pandas as pd

    frame = pd.DataFrame({"age": [40, 51], "ward": ["a", "b"]})
    assert fingerprint(frame) == fingerprint(frame.copy())
    assert fingerprint(frame) != fingerprint(frame.assign(age=[40, 52]))
    assert fingerprint(b"abc").startswith("sha256:")
    with pytest.raises(ParameterTypeError):
        fingerprint("a path?")


# ---- spending ---------------------------------------------------------------------------------------


def test_spend_until_the_budget_is_gone(ledger: Ledger, dataset: Dataset) -> None:
    session = ledger.start_session("tab 1")
    for i in range(10):
        entry = ledger.spend(
            dataset, LaplaceEvent(epsilon=0.1, sensitivity=1.0, query=f"q{i}"), session=session
        )
        assert entry.session == session.uid and entry.query == f"q{i}"
    assert ledger.remaining(dataset) == 0.0
    assert ledger.status(dataset).exhausted
    with pytest.raises(BudgetExceededError) as caught:
        ledger.spend(dataset, LaplaceEvent(epsilon=0.01, sensitivity=1.0, query="one more"))
    assert caught.value.remaining_epsilon == 0.0
    assert "remaining: ε = 0" in str(caught.value) and "Nothing was recorded" in str(caught.value)
    assert len(ledger.entries(dataset)) == 10


def test_a_refusal_says_what_remains_and_records_nothing(ledger: Ledger, dataset: Dataset) -> None:
    ledger.spend(dataset, LaplaceEvent(epsilon=0.7, sensitivity=1.0))
    with pytest.raises(BudgetExceededError, match=r"remaining: ε = 0\.3\b") as caught:
        ledger.spend(dataset, LaplaceEvent(epsilon=0.5, sensitivity=1.0, query="too much"))
    assert caught.value.remaining_epsilon == pytest.approx(0.3)
    assert caught.value.requested_epsilon == pytest.approx(1.2)
    assert isinstance(caught.value, ValueError)
    assert [e.epsilon for e in ledger.entries(dataset)] == [0.7]
    ledger.spend(dataset, LaplaceEvent(epsilon=0.3, sensitivity=1.0))  # exactly what remains still fits


def test_delta_is_part_of_the_budget(ledger: Ledger, dataset: Dataset) -> None:
    gauss = event_for(Gaussian(epsilon=0.1, delta=6e-7, sensitivity=1.0))
    ledger.spend(dataset, gauss)
    with pytest.raises(BudgetExceededError, match="no finite ε"):
        ledger.spend(dataset, gauss)  # Σδ = 1.2e-6 > 1e-6 under basic composition


def test_unsupported_and_non_private_releases(ledger: Ledger, dataset: Dataset) -> None:
    with pytest.raises(UnsupportedEventError, match="ZCDPEvent"):
        ledger.spend(dataset, ZCDPEvent(rho=0.01))
    with pytest.raises(BudgetExceededError):
        ledger.spend(dataset, NonPrivateEvent(query="exact count"))
    with pytest.raises(ParameterTypeError, match="event_for"):
        ledger.spend(dataset, Laplace(epsilon=0.1, sensitivity=1.0))  # type: ignore[arg-type]
    assert ledger.entries(dataset) == []


def test_spend_mechanism_and_unknown_sessions(ledger: Ledger, dataset: Dataset) -> None:
    entry = ledger.spend_mechanism(dataset, Laplace(epsilon=0.2, sensitivity=1.0), query="count")
    assert entry.mechanism == "Laplace" and entry.epsilon == 0.2
    with pytest.raises(ParameterError, match="no session"):
        ledger.spend(dataset, PureDPEvent(epsilon=0.1), session="nope")
    assert len(ledger.entries(dataset)) == 1


def test_the_default_accountant_is_the_tightest(ledger: Ledger) -> None:
    ds = ledger.add_dataset(name="t", fingerprint="sha256:t", budget=Budget(1.0, 1e-6))
    assert ds.accountant == "tightest"
    for _ in range(10):
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0))
    # Basic composition would be exhausted; the Laplace PLD at δ = 1e-6 leaves a little.
    assert 0 < ledger.remaining(ds) < 0.01
    totals = ledger.totals(ds)
    assert totals["basic"] is not None and totals["basic"].epsilon == 1.0
    assert totals["tightest"] == ledger.spent(ds)
    assert min(t.epsilon for t in totals.values() if t is not None) == totals["tightest"].epsilon


def test_totals_mark_refusing_accountants(ledger: Ledger) -> None:
    ds = ledger.add_dataset(name="z", fingerprint="sha256:z", budget=Budget(2.0, 1e-6), accountant="zcdp")
    ledger.spend(ds, ZCDPEvent(rho=0.01))
    totals = ledger.totals(ds, group_size=2)
    assert totals["basic"] is None and totals["pld"] is None
    assert totals["zcdp"] is not None and totals["zcdp"].group_size == 2


def test_cumulative_totals_for_a_step_chart(ledger: Ledger, dataset: Dataset) -> None:
    for epsilon in (0.1, 0.2, 0.3):
        ledger.spend(dataset, LaplaceEvent(epsilon=epsilon, sensitivity=1.0))
    rows = ledger.cumulative(dataset, ["basic", "pld"])
    assert [n for n, _ in rows] == [0, 1, 2, 3]
    assert [row["basic"] for _, row in rows] == pytest.approx([0.0, 0.1, 0.3, 0.6])


class _Work:
    """Counts the composition work done by ``running``, inside and outside the write lock."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.inside = False
        self.counts = {(where, what): 0 for where in (True, False) for what in ("built", "added", "updated")}
        self.before_lock: list[Any] = []  # rows another process writes just before the lock is taken
        build, add = running_pld._PLDTally._build, running_pld._Loss.add
        updates = {cls: cls.update for cls in (running_tallies._TermTally, running_tallies._OptimalTally)}
        transaction = Ledger._transaction

        def counted_build(tally: Any) -> None:
            self.counts[(self.inside, "built")] += sum(tally.pending.values())
            build(tally)

        def counted_add(loss: Any, setting: Any, interval: float, side: str, count: int) -> None:
            self.counts[(self.inside, "added")] += count
            add(loss, setting, interval, side, count)

        def counted_update(cls: type) -> Any:
            def update(tally: Any, setting: Any, old: int, new: int) -> None:
                self.counts[(self.inside, "updated")] += 1
                updates[cls](tally, setting, old, new)

            return update

        @contextlib.contextmanager
        def tracked(ledger: Ledger, doing: str = "write") -> Iterator[sqlite3.Connection]:
            if self.before_lock:
                other = sqlite3.connect(str(ledger.path), isolation_level=None)
                other.executemany(INSERT_ENTRY, self.before_lock)
                other.close()
                self.before_lock = []
            with transaction(ledger, doing) as conn:
                self.inside = True
                try:
                    yield conn
                finally:
                    self.inside = False

        monkeypatch.setattr(running_pld._PLDTally, "_build", counted_build)
        monkeypatch.setattr(running_pld._Loss, "add", counted_add)
        for cls in updates:
            monkeypatch.setattr(cls, "update", counted_update(cls))
        monkeypatch.setattr(Ledger, "_transaction", tracked)

    def __getitem__(self, key: tuple[bool, str]) -> int:
        return self.counts[key]


def test_under_the_write_lock_a_spend_composes_only_what_was_added_since_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history is composed before the write lock is taken (from a read snapshot); under the lock only
    the entries another process added since and the new release are, and a refusal's totals are computed
    after the lock is released. The budget is one only PLD certifies, the most expensive check."""
    history = [LaplaceEvent(epsilon=0.02 + 0.001 * i, sensitivity=1.0) for i in range(20)]
    history += [GaussianEvent.from_sigma(sigma=30.0 + i, sensitivity=1.0, delta=1e-9) for i in range(10)]
    others = [LaplaceEvent(epsilon=0.031 + 0.001 * i, sensitivity=1.0, query="other") for i in range(2)]
    new = [LaplaceEvent(epsilon=0.0415, sensitivity=1.0, query="new")]
    tightest, pld = get_accountant("tightest"), get_accountant("pld")
    everything = history + others + new
    limit = pld.epsilon(everything, 1e-5) * (1 + 1e-6)
    assert all(c.epsilon(everything, 1e-5) > limit for c in tightest.usable(everything) if c is not pld)
    running.clear()
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = ledger.add_dataset(name="t", fingerprint=FINGERPRINT, budget=Budget(limit, 1e-5))
        ledger.spend_many(ds, history)
        running.clear()  # as in a fresh process: nothing composed yet
        work = _Work(monkeypatch)
        work.before_lock = [
            (
                f"other-{i}",
                1,
                None,
                "2026-01-01T00:00:00+00:00",
                e.query,
                e.mechanism,
                e.epsilon,
                e.delta,
                e.rho,
                canonical_json(e.to_dict()),
            )
            for i, e in enumerate(others)
        ]
        ledger.spend_many(ds, new)
        assert work[(False, "built")] >= len(history)  # the history was composed outside the lock
        # PLD under the lock: only the releases added since, composed into a fresh short tally or added to
        # one (one side: symmetric settings); never the history again.
        assert work[(True, "built")] + work[(True, "added")] <= len(others) + len(new)
        assert work[(True, "updated")] <= (len(others) + len(new)) * 5  # the exact sums of 5 accountants
        assert ledger.events(ds) == everything
        # A refused spend: the decision under the lock from the kept state, its totals after the lock.
        before = dict(work.counts)
        with pytest.raises(BudgetExceededError, match="would bring the total to"):
            ledger.spend(ds, LaplaceEvent(epsilon=0.5, sensitivity=1.0))
        assert work[(True, "built")] == before[(True, "built")]
        assert work[(True, "added")] == before[(True, "added")]


# ---- append-only history -----------------------------------------------------------------------------


def test_sqlite_itself_refuses_edits(ledger: Ledger, dataset: Dataset) -> None:
    ledger.spend(dataset, LaplaceEvent(epsilon=0.1, sensitivity=1.0), session=ledger.start_session())
    conn = sqlite3.connect(ledger.path)
    try:
        for statement in (
            "DELETE FROM entries",
            "UPDATE entries SET epsilon = 0",
            "UPDATE datasets SET budget_epsilon = 100",
            "DELETE FROM datasets",
            "DELETE FROM sessions",
        ):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                conn.execute(statement)
    finally:
        conn.close()
    assert len(ledger.entries(dataset)) == 1


def test_entries_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as first:
        ds = first.add_dataset(name="d", fingerprint="sha256:d", budget=Budget(1.0), accountant="basic")
        event = LaplaceEvent(epsilon=0.4, sensitivity=2.0, query="sum", partition=("ward", "A"))
        written = first.spend(ds, event)
    with Ledger(path) as second:
        assert second.entries("sha256:d") == [written]
        assert second.remaining("sha256:d") == pytest.approx(0.6)


# ---- export and import -----------------------------------------------------------------------------


def fill(ledger: Ledger, dataset: Dataset) -> None:
    session = ledger.start_session("analyst")
    ledger.spend(dataset, LaplaceEvent(epsilon=0.2, sensitivity=1.0, query="count"), session=session)
    ledger.spend(dataset, event_for(Gaussian(epsilon=0.3, delta=1e-7, sensitivity=1.0), query="mean"))
    ledger.spend(
        dataset, PureDPEvent(epsilon=0.1, mechanism="Staircase", query="median", partition=("ward", "A"))
    )


def test_export_import_round_trip(ledger: Ledger, dataset: Dataset, tmp_path: Path) -> None:
    fill(ledger, dataset)
    text = ledger.export_json(dataset)
    document = json.loads(text)
    assert document["format"] == "dpdash-ledger-export" and document["schema_version"] == 4
    assert document["totals"]["basic"]["epsilon"] == pytest.approx(0.6)

    with Ledger(tmp_path / "other.sqlite") as other:
        other.trust_key(ledger.public_key, "the ledger it came from")
        report = other.import_json(text)
        assert (report.added, report.present, report.over_budget) == (3, 0, False)
        assert (report.signed_by, report.trusted) == (ledger.public_key, True)
        assert other.entries(dataset) == ledger.entries(dataset)
        assert other.dataset(dataset) == ledger.dataset(dataset)
        assert [s.label for s in other.sessions()] == ["analyst"]
        again = json.loads(other.export_json(dataset))
        for key in ("dataset", "sessions", "entries", "entries_sha256", "totals"):  # not the signature
            assert again[key] == document[key]
        assert other.import_json(text).present == 3  # importing twice adds nothing

    # Into the ledger it came from: everything is already there.
    assert ledger.import_json(text, dataset=dataset).added == 0


def test_an_import_adds_what_is_missing_in_the_export_order(
    ledger: Ledger, dataset: Dataset, tmp_path: Path
) -> None:
    """Entries already present are skipped (checked in one query), the others added in the export's order."""
    fill(ledger, dataset)
    first = ledger.export_json(dataset)
    with Ledger(tmp_path / "other.sqlite") as other:
        other.trust_key(ledger.public_key)
        other.import_json(first)
        ledger.spend(dataset, LaplaceEvent(epsilon=0.05, sensitivity=1.0, query="later"))
        ledger.spend(dataset, LaplaceEvent(epsilon=0.06, sensitivity=1.0, query="latest"))
        report = other.import_json(ledger.export_json(dataset))
        assert (report.added, report.present) == (2, 3)
        assert other.entries(dataset) == ledger.entries(dataset)


def test_export_to_and_import_from_files(ledger: Ledger, dataset: Dataset, tmp_path: Path) -> None:
    fill(ledger, dataset)
    path = ledger.export_to(dataset, tmp_path / "export.json")
    with Ledger(tmp_path / "other.sqlite") as other:
        other.trust_key(ledger.public_key)
        assert other.import_from(path, dataset=FINGERPRINT).added == 3


def tampered(text: str, change) -> str:  # type: ignore[no-untyped-def]
    document = json.loads(text)
    change(document)
    return json.dumps(document)


def recomputed_digest(document: dict) -> None:
    from dpdash.accounting.events import canonical_json

    document["entries_sha256"] = hashlib.sha256(canonical_json(document["entries"]).encode()).hexdigest()


def drop_last_entry(document: dict) -> None:
    document["entries"].pop()
    recomputed_digest(document)  # a careful forger: the digest matches, the totals do not


def cheaper_entry(document: dict) -> None:
    event = document["entries"][0]["event"]
    event["epsilon"], event["scale"] = 0.02, 50.0
    recomputed_digest(document)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda text: "not json at all {", "not JSON"),
        (lambda text: b"\xff\xfe\x00garbage", "not UTF-8"),
        (lambda text: json.dumps({"hello": 1}), "not a dpdash ledger export"),
        (lambda text: tampered(text, lambda d: d.update(schema_version=7)), "schema version"),
        (
            lambda text: tampered(text, lambda d: d["entries"][0]["event"].update(epsilon=0.02)),
            "does not match",
        ),
        (
            lambda text: tampered(text, lambda d: d["entries"][0].update(query="other")),
            "digest|does not match",
        ),
        (lambda text: tampered(text, drop_last_entry), "totals do not match"),
        (lambda text: tampered(text, cheaper_entry), "totals do not match"),
        (lambda text: tampered(text, lambda d: d["entries"].append(d["entries"][0])), "twice"),
        (lambda text: tampered(text, lambda d: d["dataset"]["budget"].update(epsilon=-1)), "malformed"),
    ],
)
def test_bad_imports_are_refused_and_change_nothing(
    ledger: Ledger, dataset: Dataset, tmp_path: Path, make, message: str
) -> None:  # type: ignore[no-untyped-def]
    fill(ledger, dataset)
    bad = make(ledger.export_json(dataset))
    path = tmp_path / "other.sqlite"
    with Ledger(path) as other:
        other.add_dataset(name="x", fingerprint="sha256:x", budget=Budget(1.0), accountant="basic")
    before = file_digest(path)
    with Ledger(path) as other:
        with pytest.raises(LedgerError, match=message):
            other.import_json(bad)
        assert [d.fingerprint for d in other.datasets()] == ["sha256:x"]
        assert other.sessions() == []
    assert file_digest(path) == before


def test_an_export_of_another_dataset_is_refused(ledger: Ledger, dataset: Dataset) -> None:
    fill(ledger, dataset)
    other = ledger.add_dataset(
        name="other", fingerprint="sha256:other", budget=Budget(1.0), accountant="basic"
    )
    with pytest.raises(LedgerError, match="not of the dataset"):
        ledger.import_json(ledger.export_json(dataset), dataset=other)
    assert ledger.entries(other) == []


def test_conflicting_histories_are_refused(ledger: Ledger, dataset: Dataset, tmp_path: Path) -> None:
    fill(ledger, dataset)
    text = ledger.export_json(dataset)
    with Ledger(tmp_path / "other.sqlite") as other:
        other.add_dataset(
            name="patients", fingerprint=FINGERPRINT, budget=Budget(2.0, 1e-6), accountant="basic"
        )
        with pytest.raises(LedgerError, match="budget"):
            other.import_json(text)
        assert other.entries(FINGERPRINT) == []


def test_imports_merge_and_may_show_an_overspend(ledger: Ledger, dataset: Dataset, tmp_path: Path) -> None:
    """Two machines spent from the same dataset: merging records every release that happened."""
    with Ledger(tmp_path / "laptop.sqlite") as laptop:
        laptop.add_dataset(
            name="patients", fingerprint=FINGERPRINT, budget=Budget(1.0, 1e-6), accountant="basic"
        )
        laptop.spend(FINGERPRINT, LaplaceEvent(epsilon=0.8, sensitivity=1.0, query="laptop"))
        exported = laptop.export_json(FINGERPRINT)
    ledger.spend(dataset, LaplaceEvent(epsilon=0.7, sensitivity=1.0, query="desktop"))
    report = ledger.import_json(exported, dataset=dataset)
    assert (report.added, report.over_budget) == (1, True)
    assert ledger.remaining(dataset) == 0.0
    with pytest.raises(BudgetExceededError):
        ledger.spend(dataset, LaplaceEvent(epsilon=0.001, sensitivity=1.0))
    assert math.isclose(ledger.spent(dataset).epsilon, 1.5)


def test_spend_many_is_all_or_nothing(ledger: Ledger, dataset: Dataset) -> None:
    entries = ledger.spend_many(dataset, [LaplaceEvent(epsilon=0.3, sensitivity=1.0)] * 2)
    assert len(entries) == 2 and len(ledger.entries(dataset)) == 2
    with pytest.raises(BudgetExceededError, match="3 releases"):
        ledger.spend_many(dataset, [LaplaceEvent(epsilon=0.2, sensitivity=1.0)] * 3)
    assert len(ledger.entries(dataset)) == 2
    with pytest.raises(ParameterError, match="empty"):
        ledger.spend_many(dataset, [])


def test_spend_release(ledger: Ledger) -> None:
    import pandas as pd

    from dpdash.facts import Bounds
    from dpdash.queries import Mean
    from dpdash.release import release

    df = pd.DataFrame({"age": [34, 71, 68, 25]})
    ds = ledger.add_dataset(name="ages", fingerprint=fingerprint(df), budget=Budget(1.0), accountant="basic")
    result = release(Mean(column="age", bounds=Bounds(0, 100)), "Laplace", df, epsilon=0.6)
    assert result.dataset_identity == ds.fingerprint
    entries = ledger.spend_release(ds, result)
    assert [e.query for e in entries] == ["mean of age: sum", "mean of age: count"]
    assert ledger.remaining(ds) == pytest.approx(0.4)
    other = release(Mean(column="age", bounds=Bounds(0, 100)), "Laplace", df.head(3), epsilon=0.1)
    with pytest.raises(ParameterError, match="not on dataset"):
        ledger.spend_release(ds, other)
    with pytest.raises(BudgetExceededError):
        ledger.spend_release(ds, result)  # 0.6 more does not fit
    assert len(ledger.entries(ds)) == 2
