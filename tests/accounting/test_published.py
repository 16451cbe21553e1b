"""Schema 3: the values each release published, stored with its entries in the same transaction, read by
another handle and after a reopen, carried by export and import (trusted ones only), and the upgrade of a
schema-2 ledger."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from dpdash import Laplace, release
from dpdash.accounting import Budget
from dpdash.errors import BudgetExceededError
from dpdash.ledger import Ledger, LedgerError, fingerprint
from dpdash.ledger.storage.base import SCHEMA_VERSION
from dpdash.mechanisms import Geometric
from dpdash.queries import Count, Histogram, Mean
from dpdash.release import Release
from tests.accounting.test_ledger_file import unwritable

HOSTILE = "</td><script>alert(1)</script> ' \" ${x} {{y}} \u202e"
TABLE = pd.DataFrame({
    "age": [30, 41, 52, 63, 74, 85] * 50,
    HOSTILE: ["a", "b", HOSTILE, "a", "b", HOSTILE] * 50,
})  # fmt: skip
QUERIES = [
    (Count(), Geometric, 0.2),
    (Histogram(column=HOSTILE, categories=["a", "b", HOSTILE]), Laplace, 0.2),
    (Mean(column="age", bounds=(0, 100)), Laplace, 0.2),  # two pieces: two entries, one record
]


def _register(ledger: Ledger, epsilon: float = 1.0):  # type: ignore[no-untyped-def]
    return ledger.add_dataset(
        name=HOSTILE, fingerprint=fingerprint(TABLE), budget=Budget(epsilon, 1e-6), accountant="basic"
    )


def _release_all(ledger: Ledger, ds) -> dict[str, Release]:  # type: ignore[no-untyped-def]
    made = {}
    for query, mechanism, epsilon in QUERIES:
        result = release(query, mechanism, TABLE, epsilon=epsilon, identity=fingerprint(TABLE))
        made[ledger.spend_release(ds, result)[0].uid] = result
    return made


def test_each_release_keeps_its_published_record_under_its_first_entry(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = _register(ledger)
        made = _release_all(ledger, ds)
        stored = ledger.published(ds)
        assert len(ledger.entries(ds)) == 4  # the mean has two pieces
    assert list(stored) == list(made)  # oldest first, keyed by each release's first entry
    for uid, result in made.items():
        assert Release.from_dict(stored[uid]) == result
        assert "true_values" not in stored[uid] and "report" not in json.dumps(stored[uid])
    assert Release.from_dict(stored[next(iter(made))]).values == next(iter(made.values())).values


def test_a_second_handle_and_a_reopened_ledger_read_the_values(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as first, Ledger(path) as beside:  # a handle opened beside the one that spends
        ds = _register(first)
        made = _release_all(first, ds)
        assert {uid: Release.from_dict(r) for uid, r in beside.published(ds).items()} == made
    with Ledger(path) as reopened:
        assert {uid: Release.from_dict(r) for uid, r in reopened.published(ds).items()} == made


def test_a_refused_release_stores_no_values(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        ds = _register(ledger, epsilon=0.3)
        ledger.spend_release(ds, release(Count(), Geometric, TABLE, epsilon=0.2, identity=fingerprint(TABLE)))
        too_much = release(Count(), Geometric, TABLE, epsilon=0.2, identity=fingerprint(TABLE))
        with pytest.raises(BudgetExceededError):
            ledger.spend_release(ds, too_much)
        assert len(ledger.published(ds)) == 1 and len(ledger.entries(ds)) == 1


def test_the_records_are_append_only(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        _release_all(ledger, _register(ledger))
    conn = sqlite3.connect(path)
    for statement in ("DELETE FROM published", "UPDATE published SET record = '{}'"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only: published cannot be"):
            conn.execute(statement)
    conn.close()


def _as_schema_2(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE published")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()


def test_a_schema_2_ledger_is_upgraded_and_keeps_its_history(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ds = _register(ledger)
        ledger.spend_release(ds, release(Count(), Geometric, TABLE, epsilon=0.1, identity=fingerprint(TABLE)))
    _as_schema_2(path)
    with Ledger(path) as ledger:
        assert ledger.status(ds).entries == 1 and ledger.published(ds) == {}  # made before values were kept
        made = _release_all(ledger, ds)
        assert list(ledger.published(ds)) == list(made)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    conn.close()


def test_a_read_only_schema_2_ledger_reads_with_no_values(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ds = _register(ledger)
        _release_all(ledger, ds)
        text = ledger.export_json(ds)
    _as_schema_2(path)
    with unwritable(path), Ledger(path) as ledger:
        assert ledger.status(ds).entries == 4 and ledger.published(ds) == {}
        with pytest.raises(LedgerError, match=r"cannot import the released values: .* read-only at schema 2"):
            ledger.import_json(text)


def test_a_trusted_export_carries_the_values_and_an_unsigned_one_does_not(tmp_path: Path) -> None:
    with Ledger(tmp_path / "a.sqlite") as source:
        ds = _register(source)
        made = _release_all(source, ds)
        text, key = source.export_json(ds), source.public_key
    document = json.loads(text)
    assert [item["entry"] for item in document["published"]] == list(made)
    with Ledger(tmp_path / "b.sqlite") as target:
        target.trust_key(key)
        report = target.import_json(text)
        assert (report.values, report.values_left) == (3, 0)
        assert {uid: Release.from_dict(r) for uid, r in target.published(ds).items()} == made
        assert target.import_json(text).values == 3 and len(target.published(ds)) == 3  # again: no change
    unsigned = {key: value for key, value in document.items() if key != "signature"}
    with Ledger(tmp_path / "c.sqlite") as other:
        _register(other)
        report = other.import_json(json.dumps(unsigned))
        assert (report.added, report.values, report.values_left) == (4, 0, 3)
        assert other.published(ds) == {}  # an unverified file's values could have been edited


@pytest.mark.parametrize(
    "published",
    [{"entry": "nope", "record": {}}, {"entry": None, "record": {}}, {"record": {}}, "x", {"entry": 1}],
)
def test_a_malformed_release_record_refuses_the_import(tmp_path: Path, published: object) -> None:
    with Ledger(tmp_path / "a.sqlite") as source:
        ds = _register(source)
        _release_all(source, ds)
        document = json.loads(source.export_json(ds))
    document.pop("signature", None)
    document["published"] = [published]
    with Ledger(tmp_path / "b.sqlite") as target:
        _register(target)
        with pytest.raises(LedgerError, match="release record 0 of the export is invalid"):
            target.import_json(json.dumps(document))
        assert target.entries(ds) == []
