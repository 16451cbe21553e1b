"""What only the PostgreSQL ledger has (issue 16): selected by ``DPDASH_LEDGER``, a password that never
shows, a database that is not a ledger refused, a connection lost during a commit (the request sent again
spends once) or a server restarted under an open ledger, and a lock held too long.

The contract both storages keep is in test_ledger_contract.py."""

from __future__ import annotations

import multiprocessing
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import psycopg
import pytest

from dpdash.accounting import Budget, LaplaceEvent
from dpdash.ledger import Ledger, LedgerError, default_ledger_location
from dpdash.ledger.location import default_ledger_path
from dpdash.ledger.storage import postgres as backend
from dpdash.workspace import default_workspace_path
from tests.accounting import workers
from tests.accounting.conftest import LEDGER_PASSWORD, LEDGER_ROLE

if TYPE_CHECKING:
    from pathlib import Path

    from tests.servers import PostgresServer

FP = "sha256:shared"
SECRETS = (LEDGER_PASSWORD, quote(LEDGER_PASSWORD, safe=""))


def without_password(url: str) -> str:
    return url.replace(":" + quote(LEDGER_PASSWORD, safe=""), "")


def assert_hidden(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def register(ledger: Ledger, epsilon: float = 1.0) -> Any:
    return ledger.add_dataset(name="shared", fingerprint=FP, budget=Budget(epsilon), accountant="basic")


# ---- where the ledger is -----------------------------------------------------------------------------
def test_dpdash_ledger_selects_postgresql(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPDASH_LEDGER", pg_url)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("DPDASH_WORKSPACE", raising=False)
    assert default_ledger_location() == pg_url
    with Ledger() as ledger:
        register(ledger)
        assert ledger.location == without_password(pg_url) and ledger.path is None
        assert repr(ledger) == f"Ledger({without_password(pg_url)!r})"
    with Ledger(pg_url) as again:
        assert again.find_dataset(FP) is not None
    # The workspace stays on this machine; the ledger is no file (said without the password).
    assert default_workspace_path() == tmp_path / "data" / "dpdash" / "workspace"
    with pytest.raises(LedgerError, match="names a PostgreSQL ledger") as refused:
        default_ledger_path()
    assert_hidden(str(refused.value))


def test_the_password_can_come_from_pgpassword(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGPASSWORD", LEDGER_PASSWORD)
    with Ledger(without_password(pg_url)) as ledger:
        register(ledger)
        assert ledger.datasets()[0].fingerprint == FP


def test_the_password_never_shows(pg_url: str, ledger_server: PostgresServer) -> None:
    with Ledger(pg_url) as ledger:
        ds = register(ledger)
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0))
        for text in (repr(ledger), ledger.location, ledger.export_json(ds), str(vars(ledger._store))):
            assert_hidden(text)
    database = pg_url.rsplit("/", 1)[1]
    wrong = ledger_server.url(LEDGER_ROLE, LEDGER_PASSWORD + "x", database)
    missing = ledger_server.url(LEDGER_ROLE, LEDGER_PASSWORD, "no_such_database")
    for url, why in ((wrong, "password authentication failed"), (missing, "does not exist")):
        with pytest.raises(LedgerError, match=why) as refused:
            Ledger(url, timeout=5)
        assert_hidden(str(refused.value))
        assert refused.value.__cause__ is None and refused.value.__suppress_context__  # no chained text


# ---- databases that are not ledgers --------------------------------------------------------------------
def test_tables_of_the_ledgers_names_that_are_not_a_ledger_are_refused_and_left(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE datasets (id INTEGER, amount REAL)")
        conn.execute("INSERT INTO datasets VALUES (1, 12.5)")
    with pytest.raises(LedgerError, match="not a dpdash ledger: it is another application's tables"):
        Ledger(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        assert tables == {"datasets"}


def test_other_tables_in_the_database_are_left_alone(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER)")
    with Ledger(pg_url) as ledger:
        register(ledger)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM invoices").fetchone() == (0,)


def test_disabled_triggers_are_refused(pg_url: str) -> None:
    with Ledger(pg_url) as ledger:
        register(ledger)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE entries DISABLE TRIGGER entries_no_delete")
    with pytest.raises(LedgerError, match=r"append-only triggers.*entries_no_delete"):
        Ledger(pg_url)


def test_a_ledger_from_a_newer_dpdash_is_refused(pg_url: str) -> None:
    Ledger(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(LedgerError, match="newer dpdash"):
        Ledger(pg_url)


# ---- connections lost, servers restarted, locks held -----------------------------------------------------
class _LosesTheReply:
    """A psycopg connection whose COMMIT reaches the server, after which the connection dies before the
    answer is read: the caller cannot know that the spend was recorded."""

    def __init__(self, conn: Any, server: PostgresServer) -> None:
        self._conn, self._server, self._writing = conn, server, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, query: Any, *args: Any) -> Any:
        if isinstance(query, str) and query.startswith("BEGIN"):
            self._writing = "READ COMMITTED" in query  # a read's COMMIT goes through
        if query != "COMMIT" or not self._writing:
            return self._conn.execute(query, *args)
        self._conn.execute(query)
        self._server.execute("SELECT pg_terminate_backend(%s)", (self._conn.info.backend_pid,))
        raise psycopg.OperationalError("server closed the connection unexpectedly")


def test_a_request_sent_again_after_a_lost_commit_spends_once(
    pg_url: str, ledger_server: PostgresServer
) -> None:
    with Ledger(pg_url) as ledger:
        ds = register(ledger, epsilon=0.25)
        event = LaplaceEvent(epsilon=0.2, sensitivity=1.0)
        store = ledger._store
        assert isinstance(store, backend.PostgresStore)
        store._conn = _LosesTheReply(store._conn, ledger_server)
        with pytest.raises(LedgerError, match=r"lost while committing.*may or may not have been recorded"):
            ledger.spend(ds, event, request_id="spend-1")
        # The same ledger handle connects again; the request sent again gets the recorded entry.
        entry = ledger.spend(ds, event, request_id="spend-1")
        assert ledger.entries(ds) == [entry] and ledger.spent(ds).epsilon == pytest.approx(0.2)
    with Ledger(pg_url) as other:  # another process sending it again: the same
        assert other.spend(ds, event, request_id="spend-1") == entry
        assert len(other.entries(ds)) == 1


def test_an_open_ledger_outlives_a_server_restart(pg_url: str, ledger_server: PostgresServer) -> None:
    with Ledger(pg_url, timeout=5) as ledger:
        ds = register(ledger)
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0))
        ledger_server.stop("fast")
        try:
            with pytest.raises(LedgerError, match=r"cannot connect|connection") as refused:
                ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0), request_id="after")
            assert_hidden(str(refused.value))
        finally:
            ledger_server.start()
        entry = ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0), request_id="after")
        assert len(ledger.entries(ds)) == 2 and ledger.entries(ds)[-1] == entry


def test_the_server_killed_in_the_middle_of_a_burst_of_spends_loses_nothing_acknowledged(
    pg_url: str, ledger_server: PostgresServer
) -> None:
    """8 processes spend ε = 1/64 against ε = 1 as fast as they can; after the first 12 acknowledgements
    the server is killed (``pg_ctl stop -m immediate``: no shutdown checkpoint, transactions cut off) and
    started again. Every process sends a failed request again under its id until answered. Then: every
    acknowledged spend is in the ledger, each request spent once, exactly 64 spends fit (1/64 is exact in
    binary, so the sum is exactly 1), and each entry reads back whole."""
    from psycopg import sql

    name = pg_url.rsplit("/", 1)[1]
    # The test cluster runs with synchronous_commit off (speed); a real server acknowledges a commit only
    # once it is in the WAL, which an immediate stop keeps.
    durable = sql.SQL("ALTER DATABASE {} SET synchronous_commit = on").format(sql.Identifier(name))
    ledger_server.execute(durable)
    with Ledger(pg_url) as ledger:
        register(ledger)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["dpdash.accounting", "tests.accounting.workers"])
    start, results = context.Event(), context.Queue()
    children = [
        context.Process(target=workers.spend_through_outage, args=(pg_url, FP, 1 / 64, start, results))
        for _ in range(8)
    ]
    for child in children:
        child.start()
    assert [results.get(timeout=60) for _ in children] == [("ready",)] * len(children)
    start.set()
    acked: dict[str, int] = {}
    done: list[int] = []
    killed = False
    while len(done) < len(children):
        report = results.get(timeout=150)
        if report[0] == "ack":
            acked[report[1]] = report[2]
        else:
            done.append(report[1])
        if not killed and len(acked) >= 12:
            ledger_server.stop("immediate")
            killed = True
            time.sleep(1.0)  # the processes meet a server that is down
            ledger_server.start()
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    assert killed and sum(done) > 0, "no process met the outage, so this proves nothing"
    with Ledger(pg_url) as ledger:
        entries = ledger.entries(FP)
        by_uid = {entry.uid: entry for entry in entries}
        assert set(acked.values()) <= set(by_uid), "an acknowledged spend is missing"
        assert len(entries) == len(acked) == 64  # each request spent once, and exactly 64 fit
        whole = LaplaceEvent(epsilon=1 / 64, sensitivity=1.0, query="outage")
        assert all(entry.event == whole for entry in entries)
        assert ledger.spent(FP).epsilon == 1.0


def test_a_spend_is_acknowledged_only_once_durable_whatever_the_servers_default(
    pg_url: str, ledger_server: PostgresServer
) -> None:
    """Item 3 of issue 25: with ``synchronous_commit = off`` (the test cluster's, and here the database's
    too), a COMMIT returns before its WAL is flushed, and a crash loses spends already acknowledged. The
    ledger's own transactions run with it on."""
    from psycopg import sql

    name = pg_url.rsplit("/", 1)[1]
    ledger_server.execute(
        sql.SQL("ALTER DATABASE {} SET synchronous_commit = off").format(sql.Identifier(name))
    )
    with psycopg.connect(pg_url) as plain:
        assert plain.execute("SHOW synchronous_commit").fetchone() == ("off",)
    with Ledger(pg_url) as ledger:
        register(ledger)
        with ledger._store.transaction("spend") as conn:
            assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
        ledger._store._conn.close()  # a connection opened again says the same
        with ledger._store.transaction("spend") as conn:
            assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)


def test_a_dataset_locked_too_long_is_a_message_and_other_datasets_go_on(pg_url: str) -> None:
    with Ledger(pg_url) as ledger:
        register(ledger)
        ledger.add_dataset(name="other", fingerprint="sha256:o", budget=Budget(1.0), accountant="basic")
    with psycopg.connect(pg_url) as holder:  # a spend in another process, stuck inside its transaction
        holder.execute("SELECT id FROM datasets WHERE fingerprint = %s FOR UPDATE", (FP,))
        with Ledger(pg_url, timeout=0.3) as ledger:
            with pytest.raises(LedgerError, match=r"cannot lock.*try again"):
                ledger.spend(FP, LaplaceEvent(epsilon=0.1, sensitivity=1.0))
            ledger.spend("sha256:o", LaplaceEvent(epsilon=0.1, sensitivity=1.0))  # not waiting for it
            assert ledger.entries(FP) == [] and len(ledger.entries("sha256:o")) == 1
        holder.rollback()


def test_history_added_around_the_counting_trigger_is_refused(pg_url: str) -> None:
    with Ledger(pg_url) as ledger:
        ds = register(ledger)
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE entries DISABLE TRIGGER entries_count")
        conn.execute(
            "INSERT INTO entries (uid, dataset_id, created_at, query, mechanism, event) "
            "SELECT uid || 'x', dataset_id, created_at, query, mechanism, event FROM entries"
        )
        conn.execute("ALTER TABLE entries ENABLE TRIGGER entries_count")
    with pytest.raises(LedgerError, match=r"history rows it never counted \(entries: 1 added, 2 held\)"):
        Ledger(pg_url)
