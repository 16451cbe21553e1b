"""One contract, every storage: the same tests against an SQLite file and a PostgreSQL database (issue 16).

Each PostgreSQL test gets a fresh database on the session's cluster (``pg_url``), owned by a role that logs
in over TCP with a password. What must hold on both: registering, a spend within the budget recorded
and one over it refused with nothing recorded, an append-only history (refused by the database itself, for
any client), the same totals for the same spends, an export from one imported into the other, idempotent
release requests, and concurrent spenders in many processes that never take more than the budget.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import psycopg
import pytest

from dpdash import Laplace, release
from dpdash.accounting import (
    Budget,
    BudgetExceededError,
    GaussianEvent,
    LaplaceEvent,
    ZCDPEvent,
    get_accountant,
)
from dpdash.errors import ParameterError
from dpdash.facts import Facts
from dpdash.ledger import Ledger, LedgerError, fingerprint
from dpdash.ledger.storage.base import COLUMNS
from dpdash.mechanisms import Geometric
from dpdash.queries import Count, Mean
from tests.accounting import workers
from tests.accounting.conftest import BACKENDS, LEDGER_PASSWORD, make_location

TABLE = pd.DataFrame({"age": [30, 41, 52, 63, 74, 85] * 20, "person": list(range(120))})
FP = fingerprint(TABLE)



def raw(location: str | Path) -> Any:
    """A plain client of the same database, not dpdash's (autocommit)."""
    if isinstance(location, Path):
        return sqlite3.connect(location, isolation_level=None)
    return psycopg.connect(location, autocommit=True)


def register(ledger: Ledger, epsilon: float = 1.0, accountant: str = "basic", **kwargs: Any) -> Any:
    return ledger.add_dataset(
        name="contract", fingerprint=FP, budget=Budget(epsilon, 1e-6), accountant=accountant, **kwargs
    )


def count_release(epsilon: float = 0.1) -> Any:
    return release(Count(), Geometric, TABLE, epsilon=epsilon, identity=FP)


# ---- the schema --------------------------------------------------------------------------------------
def test_both_storages_have_the_same_tables_and_columns(location: str | Path) -> None:
    Ledger(location).close()
    conn = raw(location)
    try:
        for table, columns in COLUMNS.items():
            if isinstance(location, Path):
                found = tuple(row[1] for row in conn.execute(f"PRAGMA table_info({table})"))
            else:
                found = tuple(
                    row[0]
                    for row in conn.execute(
                        "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                        "current_schema() AND table_name = %s ORDER BY ordinal_position",
                        (table,),
                    )
                )
            assert found == columns, table
    finally:
        conn.close()


# ---- datasets and spends -----------------------------------------------------------------------------
def test_a_dataset_is_registered_once_with_a_fixed_budget(ledger: Ledger) -> None:
    ds = register(ledger)
    assert register(ledger) == ds == ledger.find_dataset(FP) == ledger.dataset(FP)
    assert ledger.datasets() == [ds]
    with pytest.raises(ParameterError, match="fixed"):
        register(ledger, epsilon=2.0)
    assert ledger.find_dataset("sha256:unknown") is None


def test_a_spend_within_the_budget_is_recorded_and_one_over_it_records_nothing(ledger: Ledger) -> None:
    ds = register(ledger)
    session = ledger.start_session("contract")
    first = ledger.spend(ds, LaplaceEvent(epsilon=0.6, sensitivity=1.0, query="a"), session=session)
    assert ledger.entries(ds) == [first] and first.session == session.uid
    with pytest.raises(BudgetExceededError, match=r"remaining: ε = 0\.4"):
        ledger.spend_many(ds, [LaplaceEvent(epsilon=0.3, sensitivity=1.0)] * 2)
    with pytest.raises(BudgetExceededError):
        ledger.spend_release(ds, count_release(0.5))
    assert ledger.entries(ds) == [first] and ledger.published(ds) == {}
    assert ledger.remaining(ds) == pytest.approx(0.4)
    assert ledger.sessions() == [session]


def test_the_history_is_append_only_for_any_client(ledger: Ledger, location: str | Path) -> None:
    ds = register(ledger, unit=Facts())
    ledger.link_version(ds, fingerprint="sha256:v2", name="v2", reason="same people")
    ledger.declare_distinct("sha256:other", ds, reason="other people")
    ledger.spend_release(ds, count_release(), session=ledger.start_session(), request_id="r1")
    asked = ledger.request_release(ds, {"query": Count().to_dict(), "mechanism": "geometric", "epsilon": 0.1},
                                   user="analyst")  # fmt: skip
    ledger.decide_request(asked.uid, True, user="owner")
    conn = raw(location)
    error = sqlite3.DatabaseError if isinstance(location, Path) else psycopg.Error
    statements = [
        f"{verb} {table}" for table in COLUMNS if table != "meta" for verb in ("DELETE FROM", "UPDATE")
    ]
    try:
        for statement in statements:
            if statement.startswith("UPDATE"):
                column = COLUMNS[statement.split()[1]][-1]
                statement += f" SET {column} = {column}"
            with pytest.raises(error, match="append-only"):
                conn.execute(statement)
        if not isinstance(location, Path):
            with pytest.raises(error, match="append-only: entries cannot be truncated"):
                conn.execute("TRUNCATE entries CASCADE")
    finally:
        conn.close()
    assert len(ledger.entries(ds)) == 1 and ledger.unit(ds) is not None


def _delete_behind_the_triggers(location: str | Path, table: str, where: str) -> None:
    """What the ledger's own role (or anyone with the file) can do: switch the append-only triggers off,
    delete history, and switch them on again."""
    conn = raw(location)
    try:
        if isinstance(location, Path):
            (sql,) = conn.execute(
                "SELECT sql FROM sqlite_master WHERE name = ?", (f"{table}_no_delete",)
            ).fetchone()
            conn.execute(f"DROP TRIGGER {table}_no_delete")
            conn.execute(f"DELETE FROM {table} WHERE {where}")
            conn.execute(sql)
        else:
            conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
            conn.execute(f"DELETE FROM {table} WHERE {where}")
            conn.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
    finally:
        conn.close()


def test_history_deleted_behind_the_triggers_is_noticed(ledger: Ledger, location: str | Path) -> None:
    ds = register(ledger)
    for _ in range(3):
        ledger.spend(ds, LaplaceEvent(epsilon=0.3, sensitivity=1.0))
    ledger.close()
    _delete_behind_the_triggers(location, "entries", "id = (SELECT max(id) FROM entries)")
    missing = r"rows of the history are missing .*entries: 3 added, 2 left.*it may have been edited"
    with pytest.raises(LedgerError, match=missing):
        Ledger(location)


def test_a_schema_5_ledger_counts_its_history_from_when_it_is_opened(location: str | Path) -> None:
    with Ledger(location) as ledger:
        ds = register(ledger)
        ledger.spend(ds, LaplaceEvent(epsilon=0.3, sensitivity=1.0), user="owner")
    conn = raw(location)  # as a ledger of schema 5 was: no counts, no counting triggers
    try:
        for table in COLUMNS:
            if table != "meta":
                on = "" if isinstance(location, Path) else f" ON {table}"
                conn.execute(f"DROP TRIGGER {table}_count{on}")
        conn.execute("DELETE FROM meta WHERE key = 'history_rows'")
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    finally:
        conn.close()
    with Ledger(location) as ledger:
        ledger.spend(ds, LaplaceEvent(epsilon=0.3, sensitivity=1.0), user="owner")
        assert len(ledger.entries(ds)) == 2
        logged = len(ledger.actions())
    conn = raw(location)
    try:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("6",)
    finally:
        conn.close()
    _delete_behind_the_triggers(location, "actions", "id = (SELECT min(id) FROM actions)")
    missing = rf"rows of the history are missing .*actions: {logged} added, {logged - 1} left"
    with pytest.raises(LedgerError, match=missing):
        Ledger(location)


def test_versions_units_and_statements(ledger: Ledger) -> None:
    ds = register(ledger, unit=Facts(), columns=["age", "person"], rows=120)
    version = ledger.link_version(ds, fingerprint="sha256:v2", name="contract", reason="same people")
    assert ledger.versions(ds) == [version] and ledger.find_dataset("sha256:v2") == ds
    assert ledger.unit(ds).unit == Facts() and ledger.unit(ds).columns == ("age", "person")
    looks = ledger.looks_like(fingerprint="sha256:other", name="x", columns=["person", "age"])
    assert [(m.dataset, m.same_columns) for m in looks] == [(ds, True)]
    ledger.declare_distinct("sha256:other", ds, reason="other people")
    assert ledger.looks_like(fingerprint="sha256:other", name="x", columns=["person", "age"]) == []


def test_the_same_spends_give_the_same_totals_on_both(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The budget rules are written once: the same history gives bit-for-bit the same totals."""
    events = [LaplaceEvent(epsilon=0.05 + 0.01 * i, sensitivity=1.0) for i in range(6)]
    events += [GaussianEvent.from_sigma(sigma=20.0 + i, sensitivity=1.0, delta=1e-9) for i in range(4)]
    events += [ZCDPEvent(rho=0.001)]
    results = []
    for kind in BACKENDS:
        with Ledger(make_location(kind, request, tmp_path)) as ledger:
            ds = register(ledger, epsilon=3.0, accountant="tightest")
            for event in events:
                ledger.spend(ds, event)
            ledger.spend_release(ds, count_release(0.2))
            results.append((ledger.events(ds), ledger.status(ds), ledger.totals(ds), ledger.cumulative(ds)))
    assert results[0] == results[1]


# ---- export and import across storages ----------------------------------------------------------------
@pytest.mark.parametrize(("source_kind", "target_kind"), [("sqlite", "postgresql"), ("postgresql", "sqlite")])
def test_an_export_imports_into_the_other_storage(
    source_kind: str, target_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with Ledger(make_location(source_kind, request, tmp_path)) as source:
        ds = register(source, unit=Facts())
        source.link_version(ds, fingerprint="sha256:v2", name="v2", reason="same people")
        session = source.start_session("exporter")
        source.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0), session=session)
        made = release(Mean(column="age", bounds=(0, 100)), Laplace, TABLE, epsilon=0.2, identity=FP)
        source.spend_release(ds, made, session=session)
        text, key = source.export_json(ds), source.public_key
        expected = (source.entries(ds), source.published(ds), source.status(ds), source.versions(ds))
    assert LEDGER_PASSWORD not in text
    with Ledger(make_location(target_kind, request, tmp_path)) as target:
        target.trust_key(key)
        report = target.import_json(text)
        assert (report.added, report.present, report.trusted, report.values) == (3, 0, True, 1)
        assert (target.entries(ds), target.published(ds), target.status(ds), target.versions(ds)) == expected
        assert target.unit(ds).unit == Facts() and target.sessions() == [session]
        again = target.import_json(text)
        assert (again.added, again.present) == (0, 3)


# ---- idempotent release requests ---------------------------------------------------------------------
def test_a_request_sent_again_spends_once(ledger: Ledger) -> None:
    ds = register(ledger, epsilon=0.35)
    made = count_release(0.1)
    first = ledger.spend_release(ds, made, request_id="req-1")
    spent = ledger.spent(ds)
    again = ledger.spend_release(ds, made, request_id="req-1")
    assert again == first and ledger.entries(ds) == first and ledger.spent(ds) == spent
    assert list(ledger.published(ds)) == [first[0].uid]
    # spend and spend_many take a request id too; the same id on another dataset is another request
    pieces = [LaplaceEvent(epsilon=0.05, sensitivity=1.0, query=q) for q in ("sum", "count")]
    many = ledger.spend_many(ds, pieces, request_id="req-2")
    assert ledger.spend_many(ds, pieces, request_id="req-2") == many
    other = ledger.add_dataset(name="other", fingerprint="sha256:o", budget=Budget(1.0), accountant="basic")
    assert ledger.spend_many(other, pieces, request_id="req-2") != many
    assert len(ledger.entries(ds)) == 3 and ledger.spent(ds).epsilon == pytest.approx(0.2)


def test_a_request_id_is_never_reused_for_another_release(ledger: Ledger) -> None:
    ds = register(ledger)
    released = count_release(0.1)
    first = ledger.spend_release(ds, released, request_id="req")
    redrawn = count_release(0.1)  # the same query and ε, other noise: publishing it would spend twice
    while np.array_equal(redrawn.values, released.values):  # two geometric draws agree 5 % of the time
        redrawn = count_release(0.1)
    with pytest.raises(ParameterError, match=r"already recorded .* other values; nothing was recorded"):
        ledger.spend_release(ds, redrawn, request_id="req")
    with pytest.raises(ParameterError, match="already recorded"):
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0), request_id="req")
    assert ledger.entries(ds) == first
    with pytest.raises(ParameterError, match="request_id must be non-empty"):
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0), request_id=" ")


def test_a_refused_request_leaves_its_id_unused(ledger: Ledger) -> None:
    ds = register(ledger, epsilon=0.15)
    with pytest.raises(BudgetExceededError):
        ledger.spend(ds, LaplaceEvent(epsilon=0.2, sensitivity=1.0), request_id="req")
    entry = ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0), request_id="req")
    assert ledger.entries(ds) == [entry]
    # A request sent again once the budget is spent still gets its first answer: it spends nothing more.
    assert ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0), request_id="req") == entry


# ---- many processes at once ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def context() -> multiprocessing.context.BaseContext:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["dpdash.accounting", "tests.accounting.workers"])
    return ctx


def race(context: Any, target: Any, location: str | Path, *args: Any, processes: int = 16) -> list[Any]:
    """Start ``processes`` workers, release them at once, and collect their reports."""
    start, results = context.Event(), context.Queue()
    children = [
        context.Process(target=target, args=(str(location), FP, *args, start, results))
        for _ in range(processes)
    ]
    for child in children:
        child.start()
    start.set()
    reports = [results.get(timeout=120) for _ in children]
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    return reports


def test_sixteen_processes_never_overspend(location: str | Path, context: Any) -> None:
    """16 processes each try one spend of ε = 0.07 against ε = 1, all at once: exactly 14 fit. Then 16
    processes take the 0.02 left 0.005 at a time until refused: exactly 4 more."""
    with Ledger(location) as ledger:
        register(ledger)
    outcomes = race(context, workers.spend_once, location, 0.07)
    with Ledger(location) as ledger:
        events = ledger.events(FP)
        assert sum(outcomes) == len(events) == 14
        assert get_accountant("basic").epsilon(events, 0.0) <= 1.0
    counts = race(context, workers.spend_until_refused, location, 0.005)
    with Ledger(location) as ledger:
        events = ledger.events(FP)
        assert sum(counts) == 4 and len(events) == 18
        total = get_accountant("basic").epsilon(events, 0.0)
        assert total == pytest.approx(1.0) and total <= 1.0 + 1e-9


def test_one_request_sent_by_many_processes_at_once_spends_once(location: str | Path, context: Any) -> None:
    with Ledger(location) as ledger:
        register(ledger)
    uids = race(context, workers.spend_with_request, location, 0.1, "the-request", processes=8)
    with Ledger(location) as ledger:
        (entry,) = ledger.entries(FP)
    assert uids == [entry.uid] * 8
