"""A team's PostgreSQL ledger set up least-privilege (issue 25, item 2): the tables owned by an
administrator, the app connecting as a role that reads and adds, and nothing more; the private signing key
outside the database (``DPDASH_SIGNING_KEY_FILE``), the ledger holding its public key only."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest

from dpdash.accounting import Budget, LaplaceEvent
from dpdash.facts import Facts
from dpdash.ledger import Ledger, LedgerError
from dpdash.ledger.signing import new_private_key, read_key_file, signed_by, write_key_file
from dpdash.ledger.storage.base import COLUMNS
from dpdash.ledger.storage.postgres_setup import main, set_up
from dpdash.queries import Count
from tests.accounting.conftest import LEDGER_ROLE
from tests.accounting.test_ledger_contract import FP, count_release

if TYPE_CHECKING:
    from tests.servers import PostgresServer

ADMIN, ADMIN_PASSWORD = "ledger_admin", "adm1n:pass/word"
APP, APP_PASSWORD = "ledger_app", "app:pass/w@rd"
KEY_FILE = "DPDASH_SIGNING_KEY_FILE"
#: What the app's role must not be able to do to the history (each refused by the server).
EDITS = [
    "DELETE FROM entries",
    "UPDATE entries SET epsilon = 0",
    "TRUNCATE entries CASCADE",
    "ALTER TABLE entries DISABLE TRIGGER entries_no_delete",
    "ALTER TABLE entries DISABLE TRIGGER USER",
    "DROP TRIGGER entries_no_delete ON entries",
    "DROP TABLE entries CASCADE",
    "CREATE OR REPLACE FUNCTION dpdash_append_only() RETURNS trigger LANGUAGE plpgsql "
    "AS $$ BEGIN RETURN OLD; END $$",
    "DELETE FROM meta",
    "UPDATE datasets SET budget_epsilon = 100",
]


@pytest.fixture(scope="module")
def roles(ledger_server: PostgresServer) -> None:
    """An administrator (it will own the ledger's database) and the app's role, both logging in over TCP."""
    from psycopg import sql

    for role, password in ((ADMIN, ADMIN_PASSWORD), (APP, APP_PASSWORD)):
        ledger_server.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
        ledger_server.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(password))
        )


@pytest.fixture
def database(ledger_server: PostgresServer, roles: None) -> Iterator[str]:
    """A fresh database owned by the administrator; dropped after."""
    from psycopg import sql

    name = f"team_{uuid.uuid4().hex[:12]}"
    ledger_server.execute(
        sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(name), sql.Identifier(ADMIN))
    )
    try:
        yield name
    finally:
        ledger_server.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def superuser_url(server: PostgresServer, database: str) -> str:
    """The cluster's superuser, through the socket (no password)."""
    from tests.servers import SUPERUSER

    return f"postgresql://{SUPERUSER}@/{database}?host={server.folder}&port={server.port}"


def assert_refused_edits(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        refused = r"permission denied|must be owner"
        for statement in EDITS:
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match=refused):
                conn.execute(statement)
        # the one column it may UPDATE (to lock a dataset's row): the trigger refuses any change
        with pytest.raises(psycopg.errors.RaiseException, match="append-only: datasets cannot be changed"):
            conn.execute("UPDATE datasets SET id = id")


def use_everything(ledger: Ledger) -> object:
    """A history in every table: a dataset with its unit, a version, a statement, a session, releases with
    published values and a request id, an analyst's request decided, a trusted key."""
    ds = ledger.add_dataset(
        name="team", fingerprint=FP, budget=Budget(1.0, 1e-6), accountant="basic", unit=Facts()
    )
    ledger.link_version(ds, fingerprint="sha256:v2", name="v2", reason="same people")
    ledger.declare_distinct("sha256:other", ds, reason="other people")
    ledger.spend_release(ds, count_release(), session=ledger.start_session(), request_id="r1", user="owner")
    asked = ledger.request_release(
        ds, {"query": Count().to_dict(), "mechanism": "geometric", "epsilon": 0.1}, user="analyst"
    )
    ledger.decide_request(asked.uid, True, user="owner")
    ledger.trust_key("ed25519:" + "ab" * 32, "a partner")
    ledger.spend(ds, LaplaceEvent(epsilon=0.2, sensitivity=1.0), user="owner")
    return ds


def test_the_apps_role_spends_but_cannot_erase_or_edit_history(
    ledger_server: PostgresServer, database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    admin = ledger_server.url(ADMIN, ADMIN_PASSWORD, database)
    app = ledger_server.url(APP, APP_PASSWORD, database)
    key = set_up(admin, APP, tmp_path / "ledger.key")
    monkeypatch.setenv(KEY_FILE, str(tmp_path / "ledger.key"))
    with Ledger(app) as ledger:
        ds = use_everything(ledger)
        assert ledger.public_key == key
        assert signed_by(json.loads(ledger.export_json(ds, user="owner"))) == key
        entries = ledger.entries(ds)
        with Ledger(tmp_path / "p.sqlite") as partner:  # an import brings a new dataset in
            other = partner.add_dataset(
                name="partner", fingerprint="sha256:p", budget=Budget(1.0), accountant="basic"
            )
            partner.spend(other, LaplaceEvent(epsilon=0.1, sensitivity=1.0))
            ledger.trust_key(partner.public_key, "partner")
            assert ledger.import_json(partner.export_json(other)).added == 1
    assert len(entries) == 2
    assert_refused_edits(app)
    with Ledger(app) as ledger:  # opens (every count and trigger as it was) and spends on
        assert ledger.entries(ds) == entries
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0))
    with psycopg.connect(app) as conn:
        owners = conn.execute(
            "SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    assert owners == [(ADMIN,)]


def test_the_apps_role_can_read_no_private_key(
    ledger_server: PostgresServer, database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = ledger_server.url(APP, APP_PASSWORD, database)
    key = set_up(ledger_server.url(ADMIN, ADMIN_PASSWORD, database), APP, tmp_path / "ledger.key")
    private = read_key_file(tmp_path / "ledger.key")
    assert (tmp_path / "ledger.key").stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv(KEY_FILE, str(tmp_path / "ledger.key"))
    with Ledger(app) as ledger:
        ds = use_everything(ledger)
    with psycopg.connect(app) as conn:
        for table in COLUMNS:
            assert private not in str(conn.execute(f"SELECT * FROM {table}").fetchall())
    # Without the key file the ledger still shows its key, and an export says what to do.
    monkeypatch.delenv(KEY_FILE)
    with Ledger(app) as ledger:
        assert ledger.public_key == key
        with pytest.raises(LedgerError, match=rf"keeps its signing key outside .*{KEY_FILE}"):
            ledger.export_json(ds)
        other = tmp_path / "other.key"
        write_key_file(other, new_private_key())
        monkeypatch.setenv(KEY_FILE, str(other))
        with pytest.raises(LedgerError, match="holds another ledger's key"):
            ledger.export_json(ds)
        monkeypatch.setenv(KEY_FILE, str(tmp_path / "ledger.key"))
        assert signed_by(json.loads(ledger.export_json(ds))) == key


def test_setup_takes_over_a_ledger_its_app_role_made(
    pg_url: str, ledger_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger the app's role created (and owned) before: set up, the administrator owns it, the key moves
    to the file unchanged (other ledgers trust it), the history stays and the app's role can only add."""
    from psycopg import sql

    with Ledger(pg_url) as ledger:
        ds = ledger.add_dataset(name="team", fingerprint=FP, budget=Budget(1.0), accountant="basic")
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0))
        before, entries = ledger.public_key, ledger.entries(ds)
    database = pg_url.rsplit("/", 1)[1]
    with pytest.raises(LedgerError, match=f"{LEDGER_ROLE!r} owns the schema 'public'"):
        set_up(superuser_url(ledger_server, database), LEDGER_ROLE, tmp_path / "ledger.key")
    assert not (tmp_path / "ledger.key").exists()
    ledger_server.execute(sql.SQL("ALTER DATABASE {} OWNER TO CURRENT_USER").format(sql.Identifier(database)))
    assert set_up(superuser_url(ledger_server, database), LEDGER_ROLE, tmp_path / "ledger.key") == before
    # Run again: the same (the key file checked); with another key file: refused.
    assert set_up(superuser_url(ledger_server, database), LEDGER_ROLE, tmp_path / "ledger.key") == before
    with pytest.raises(LedgerError, match="already kept outside it"):
        set_up(superuser_url(ledger_server, database), LEDGER_ROLE, tmp_path / "missing.key")
    monkeypatch.setenv(KEY_FILE, str(tmp_path / "ledger.key"))
    with Ledger(pg_url) as ledger:
        assert ledger.entries(ds) == entries and ledger.public_key == before
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0))
        assert signed_by(json.loads(ledger.export_json(ds))) == before
    assert_refused_edits(pg_url)


def test_setup_refuses_a_role_that_could_edit_anyway(
    ledger_server: PostgresServer, database: str, tmp_path: Path
) -> None:
    from tests.servers import SUPERUSER

    admin = ledger_server.url(ADMIN, ADMIN_PASSWORD, database)
    for role, why in (
        (ADMIN, "is the administrator itself"),
        (SUPERUSER, "is a superuser"),
        ("nobody_here", "does not exist"),
    ):
        with pytest.raises(LedgerError, match=why):
            set_up(admin, role, tmp_path / "ledger.key")
    assert not (tmp_path / "ledger.key").exists()


def test_the_command_says_what_it_did_or_what_is_wrong(
    ledger_server: PostgresServer, database: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    admin = ledger_server.url(ADMIN, ADMIN_PASSWORD, database)
    key_file = str(tmp_path / "ledger.key")
    assert main([admin, "--app-role", "nobody_here", "--key-file", key_file]) == 1
    out, err = capsys.readouterr()
    assert (
        out == ""
        and err.startswith("error: the role 'nobody_here' does not exist")
        and "Traceback" not in err
    )
    assert ADMIN_PASSWORD not in err
    assert main([admin, "--app-role", APP, "--key-file", key_file]) == 0
    out, err = capsys.readouterr()
    assert f"DPDASH_SIGNING_KEY_FILE={key_file}" in out and "ed25519:" in out and err == ""


def test_an_older_ledger_is_upgraded_by_running_the_setup_again(
    ledger_server: PostgresServer, database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's role cannot add tables or triggers: it says to run the setup, which upgrades the ledger."""
    admin = ledger_server.url(ADMIN, ADMIN_PASSWORD, database)
    app = ledger_server.url(APP, APP_PASSWORD, database)
    set_up(admin, APP, tmp_path / "ledger.key")
    monkeypatch.setenv(KEY_FILE, str(tmp_path / "ledger.key"))
    with Ledger(app) as ledger:
        ds = use_everything(ledger)
    with psycopg.connect(admin, autocommit=True) as conn:  # as a ledger of schema 5 was
        for table in COLUMNS:
            if table != "meta":
                conn.execute(f"DROP TRIGGER {table}_count ON {table}")
        conn.execute("DELETE FROM meta WHERE key = 'history_rows'")
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    with pytest.raises(LedgerError, match=r"at schema 5 and this role cannot upgrade it .*postgres_setup"):
        Ledger(app)
    set_up(admin, APP, tmp_path / "ledger.key")
    with Ledger(app) as ledger:
        ledger.spend(ds, LaplaceEvent(epsilon=0.1, sensitivity=1.0))
        assert len(ledger.entries(ds)) == 3
    assert_refused_edits(app)
