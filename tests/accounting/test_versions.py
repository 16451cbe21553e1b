"""Schema 2: the unit of privacy locked with a budget, versions that continue it, statements of a different
population, what a table "looks like", the migration from schema 1, and export/import of all of them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from dpdash import Laplace, release
from dpdash.accounting import Budget
from dpdash.errors import DPDashError, ParameterError
from dpdash.facts import Facts
from dpdash.ledger import Ledger, LedgerError, fingerprint
from dpdash.ledger.storage.base import SCHEMA_VERSION
from dpdash.queries import Count, Sum

PEOPLE = pd.DataFrame({"person_id": [1, 1, 2, 3, 3, 3], "age": [30, 31, 40, 50, 51, 52]})
NEWER = pd.DataFrame({"person_id": [1, 1, 2, 3, 3, 3, 4], "age": [30, 31, 40, 50, 51, 52, 60]})
UNIT = Facts(rows_per_person=5, id_column="person_id")
SHAPE = {"columns": ["person_id", "age"], "rows": 6}


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    with Ledger(tmp_path / "ledger.sqlite") as opened:
        yield opened


def _register(ledger: Ledger, unit: Facts | None = UNIT):  # type: ignore[no-untyped-def]
    extra = {"unit": unit, **SHAPE} if unit is not None else {}
    return ledger.add_dataset(
        name="people", fingerprint=fingerprint(PEOPLE), budget=Budget(2.0, 1e-6), accountant="basic", **extra
    )


def _count(table: pd.DataFrame, unit: Facts):  # type: ignore[no-untyped-def]
    """A count of rows, or (a count has nothing to protect under substitution) a sum of ages."""
    query = (
        Sum(column="age", bounds=(0, 100), facts=unit)
        if unit.neighbours == "substitute"
        else Count(facts=unit)
    )
    return release(query, Laplace, table, epsilon=0.1)


# ---- the unit of privacy -------------------------------------------------------------------------------
def test_the_unit_is_recorded_with_the_budget(ledger: Ledger) -> None:
    ds = _register(ledger)
    recorded = ledger.unit(ds)
    assert recorded is not None
    assert recorded.unit == UNIT and recorded.columns == ("age", "person_id") and recorded.rows == 6
    assert recorded.recorded_at == ds.created_at


def test_a_release_under_the_recorded_unit_spends(ledger: Ledger) -> None:
    ds = _register(ledger)
    ledger.spend_release(ds, _count(PEOPLE, UNIT))
    assert ledger.status(ds).entries == 1


@pytest.mark.parametrize(
    ("unit", "words"),
    [
        (Facts(), "person id column None instead of 'person_id'"),  # "one row": the weakening
        (Facts(rows_per_person=2, id_column="person_id"), "at most 2 rows per person instead of 5"),
        (Facts(rows_per_person=9, id_column="person_id"), "at most 9 rows per person instead of 5"),
        (Facts(neighbours="substitute", rows_per_person=5, id_column="person_id"), "neighbours 'substitute'"),
    ],
)
def test_a_release_under_another_unit_is_refused_and_nothing_recorded(
    ledger: Ledger, unit: Facts, words: str
) -> None:
    ds = _register(ledger)
    with pytest.raises(DPDashError, match="differs from the one recorded") as caught:
        ledger.spend_release(ds, _count(PEOPLE, unit))
    assert words in str(caught.value) and "Nothing was recorded" in str(caught.value)
    assert ledger.status(ds).entries == 0


def test_a_budget_without_a_recorded_unit_keeps_working_and_can_be_locked_once(ledger: Ledger) -> None:
    ds = _register(ledger, unit=None)
    assert ledger.unit(ds) is None
    ledger.spend_release(ds, _count(PEOPLE, Facts()))  # not checked: no unit was recorded
    ledger.record_unit(ds, UNIT, columns=PEOPLE.columns, rows=6)
    assert ledger.record_unit(ds, UNIT).unit == UNIT  # the same again: fine
    with pytest.raises(ParameterError, match="cannot be changed"):
        ledger.record_unit(ds, Facts())
    with pytest.raises(DPDashError, match="differs from the one recorded"):
        ledger.spend_release(ds, _count(PEOPLE, Facts()))


def test_registering_again_with_another_unit_is_refused(ledger: Ledger) -> None:
    _register(ledger)
    assert _register(ledger).fingerprint == fingerprint(PEOPLE)  # the same: returns the dataset
    with pytest.raises(ParameterError, match="another unit of privacy"):
        _register(ledger, unit=Facts())


def test_the_unit_table_is_append_only(ledger: Ledger) -> None:
    _register(ledger)
    conn = sqlite3.connect(ledger.path)
    for statement in ("UPDATE dataset_units SET rows_per_person = 1", "DELETE FROM dataset_units"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            conn.execute(statement)
    conn.close()


# ---- versions and different populations ------------------------------------------------------------
def test_a_new_version_is_flagged_then_continues_the_budget(ledger: Ledger) -> None:
    ds = _register(ledger)
    newer = fingerprint(NEWER)
    assert ledger.find_dataset(newer) is None
    alikes = ledger.looks_like(fingerprint=newer, name="people v2.csv", columns=["age", "person_id"])
    assert [(a.dataset.name, a.same_name, a.same_columns) for a in alikes] == [("people", False, True)]
    assert alikes[0].why == "the same columns"
    ledger.link_version(
        ds, fingerprint=newer, name="people v2.csv", reason="added person 4", columns=NEWER.columns
    )
    assert ledger.find_dataset(newer) == ds
    assert ledger.looks_like(fingerprint=newer, name="x", columns=["age", "person_id"]) == []
    ledger.spend_release(ds, _count(NEWER, UNIT))  # the version's release spends the same budget
    assert ledger.status(ds).entries == 1
    assert [v.fingerprint for v in ledger.versions(ds)] == [newer]
    # A version cannot get a budget of its own, nor be linked elsewhere: its releases already count.
    assert (
        ledger.add_dataset(name="v2", fingerprint=newer, budget=Budget(2.0, 1e-6), accountant="basic") == ds
    )
    with pytest.raises(ParameterError, match="fixed"):
        ledger.add_dataset(name="v2", fingerprint=newer, budget=Budget(9.0), accountant="basic")


def test_same_name_other_columns_is_flagged_too(ledger: Ledger) -> None:
    _register(ledger)
    alikes = ledger.looks_like(fingerprint=fingerprint(NEWER), name="people", columns=["a", "b"])
    assert [(a.same_name, a.same_columns) for a in alikes] == [(True, False)]
    assert ledger.looks_like(fingerprint=fingerprint(NEWER), name="other", columns=["a"]) == []
    assert (
        ledger.looks_like(fingerprint=fingerprint(PEOPLE), name="people", columns=["age", "person_id"]) == []
    )


def test_a_different_population_is_stated_with_its_reason(ledger: Ledger) -> None:
    ds = _register(ledger)
    newer = fingerprint(NEWER)
    statement = ledger.declare_distinct(newer, ds, reason="another clinic's patients")
    assert statement.looked_like == ds.fingerprint and statement.reason == "another clinic's patients"
    assert ledger.looks_like(fingerprint=newer, name="people", columns=["age", "person_id"]) == []
    assert ledger.distinct_populations(newer) == [statement]
    own = ledger.add_dataset(name="clinic B", fingerprint=newer, budget=Budget(1.0), accountant="basic")
    assert own != ds and ledger.find_dataset(newer) == own
    with pytest.raises(ParameterError, match="non-empty"):
        ledger.declare_distinct(fingerprint(b"x"), ds, reason="   ")


def test_a_release_on_another_table_is_refused(ledger: Ledger) -> None:
    ds = _register(ledger)
    with pytest.raises(ParameterError, match="not on dataset 'people'"):
        ledger.spend_release(ds, _count(NEWER, UNIT))


# ---- schema 1 ----------------------------------------------------------------------------------------
def _as_schema_1(path: Path) -> None:
    conn = sqlite3.connect(path)
    for table in ("published", "dataset_units", "dataset_versions", "distinct_populations"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()


def test_a_schema_1_ledger_is_upgraded_and_keeps_its_history(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ds = _register(ledger, unit=None)
        ledger.spend_release(ds, _count(PEOPLE, Facts()))
    _as_schema_1(path)
    with Ledger(path) as ledger:
        assert ledger.status(ds).entries == 1 and ledger.unit(ds) is None
        ledger.record_unit(ds, UNIT)
        assert ledger.unit(ds).unit == UNIT
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM dataset_units")
    conn.close()


def test_a_schema_2_ledger_without_its_tables_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    Ledger(path).close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE dataset_versions")
    conn.commit()
    conn.close()
    with pytest.raises(LedgerError, match="incomplete"):
        Ledger(path)


# ---- export and import -----------------------------------------------------------------------------
def test_export_carries_the_unit_and_versions_and_import_restores_them(tmp_path: Path) -> None:
    with Ledger(tmp_path / "a.sqlite") as source:
        ds = _register(source)
        source.link_version(ds, fingerprint=fingerprint(NEWER), name="v2", reason="same people")
        source.spend_release(ds, _count(PEOPLE, UNIT))
        text = source.export_json(ds)
        key = source.public_key
    document = json.loads(text)
    assert document["schema_version"] == 4
    assert document["dataset"]["unit"]["id_column"] == "person_id"
    assert [v["name"] for v in document["dataset"]["versions"]] == ["v2"]
    with Ledger(tmp_path / "b.sqlite") as target:
        target.trust_key(key)
        target.import_json(text)
        assert target.unit(ds).unit == UNIT
        assert target.find_dataset(fingerprint(NEWER)) == ds
    with Ledger(tmp_path / "c.sqlite") as other:  # the same dataset, another unit recorded: refused
        other.add_dataset(
            name="people", fingerprint=ds.fingerprint, budget=ds.budget, accountant="basic", unit=Facts()
        )
        with pytest.raises(LedgerError, match="unit of privacy"):
            other.import_json(text)
        assert other.status(ds).entries == 0
