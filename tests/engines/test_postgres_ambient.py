"""A PostgreSQL source never borrows the server's own access (issue 25): no password from PGPASSWORD or a
password file reaches a server the owner names (a fake server on 127.0.0.1 that asks for a cleartext
password and records what arrives), a service file is refused, and the ledger's own server and database
are refused as sources."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from psycopg import sql

from dpdash.engines import open_postgres
from dpdash.engines.pg_guard import libpq_options
from dpdash.errors import ParameterError
from dpdash.ledger import Ledger

if TYPE_CHECKING:
    from tests.servers import PostgresServer

SECRET = "the-ledgers-own-password"


class FakeServer:
    """Speaks enough of the PostgreSQL protocol to ask for a cleartext password, and records it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.passwords: list[str] = []
        self.connections = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(5)
                with contextlib.suppress(OSError, struct.error):
                    self._session(conn)

    def _session(self, conn: socket.socket) -> None:
        while True:  # SSL or GSS encryption requests first: refused ('N'), then the startup message
            length, code = struct.unpack("!ii", _read(conn, 8))
            _read(conn, length - 8)
            if code in (80877103, 80877104):
                conn.sendall(b"N")
                continue
            break
        conn.sendall(b"R" + struct.pack("!ii", 8, 3))  # AuthenticationCleartextPassword
        kind = _read(conn, 1)
        if kind != b"p":
            return
        (length,) = struct.unpack("!i", _read(conn, 4))
        self.passwords.append(_read(conn, length - 4).rstrip(b"\x00").decode())
        fields = b"SFATAL\x00C28P01\x00Mpassword authentication failed\x00\x00"
        conn.sendall(b"E" + struct.pack("!i", 4 + len(fields)) + fields)

    def url(self, host: str = "127.0.0.1") -> str:
        return f"postgresql://ana@{host}:{self.port}/clinic"

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        self.sock.close()


def _read(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise OSError("closed")
        data += chunk
    return data


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    server = FakeServer()
    try:
        yield server
    finally:
        server.stop()


def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PGPASSWORD", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE", "PGHOSTADDR", "PGREQUIREAUTH"):
        monkeypatch.delenv(name, raising=False)


def test_the_fake_server_receives_a_password_given(fake: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    _clean_env(monkeypatch)
    with pytest.raises(ParameterError, match="could not connect"):
        open_postgres(fake.url(), "visits", password="typed")
    assert fake.passwords == ["typed"]


def test_pgpassword_is_never_sent(fake: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    _clean_env(monkeypatch)
    monkeypatch.setenv("PGPASSWORD", SECRET)
    with pytest.raises(ParameterError) as caught:
        open_postgres(fake.url(), "visits")
    assert fake.passwords in ([], [""])
    assert SECRET not in str(caught.value)


def test_a_password_file_is_never_read(
    fake: FakeServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _clean_env(monkeypatch)
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"127.0.0.1:{fake.port}:*:*:{SECRET}\n*:*:*:*:{SECRET}\n")
    passfile.chmod(0o600)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".pgpass").write_text(f"*:*:*:*:{SECRET}\n")
    (tmp_path / ".pgpass").chmod(0o600)
    with pytest.raises(ParameterError):
        open_postgres(fake.url(), "visits")
    assert fake.passwords in ([], [""])


def test_a_service_in_the_environment_is_refused(
    fake: FakeServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _clean_env(monkeypatch)
    services = tmp_path / "pg_service.conf"
    services.write_text(f"[ledger]\npassword={SECRET}\n")
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    monkeypatch.setenv("PGSERVICE", "ledger")
    with pytest.raises(ParameterError, match="PGSERVICE is set"):
        open_postgres(fake.url(), "visits")
    assert fake.connections == 0


def test_only_password_authentication_or_none() -> None:
    options = libpq_options("")
    assert options["password"] == "" and options["gssencmode"] == "disable"
    assert not Path(options["passfile"]).exists() and not Path(options["sslkey"]).exists()
    assert options["require_auth"] == "password,md5,scram-sha-256,none"  # the bundled libpq is 16 or later
    assert options["sslcertmode"] == "disable"


@pytest.mark.parametrize("ledger_host", ["localhost", "127.0.0.1", "[::1]"])
@pytest.mark.parametrize("source_host", ["127.0.0.1", "localhost"])
def test_the_ledgers_server_is_refused_whatever_its_name(
    fake: FakeServer, monkeypatch: pytest.MonkeyPatch, ledger_host: str, source_host: str
) -> None:
    _clean_env(monkeypatch)
    monkeypatch.setenv("DPDASH_LEDGER", f"postgresql://dpdash@{ledger_host}:{fake.port}/ledger")
    with pytest.raises(ParameterError, match="server of this dpdash's budget ledger"):
        open_postgres(fake.url(source_host), "visits", password="typed")
    assert fake.connections == 0


def test_a_ledger_through_a_unix_socket_refuses_this_machines_port(
    fake: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _clean_env(monkeypatch)
    ledger = f"postgresql://dpdash@/ledger?host=/var/run/postgresql&port={fake.port}"
    with pytest.raises(ParameterError, match="budget ledger"):
        open_postgres(fake.url(), "visits", password="typed", ledger=ledger)
    # Another port of this machine is another server.
    with pytest.raises(ParameterError, match="could not connect"):
        open_postgres(fake.url(), "visits", password="typed", ledger=ledger.replace(str(fake.port), "1"))
    assert fake.passwords == ["typed"]


def test_a_ledger_named_by_a_service_in_its_url_is_found(
    fake: FakeServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _clean_env(monkeypatch)
    services = tmp_path / "pg_service.conf"
    services.write_text(f"[ledger]\nhost=localhost\nport={fake.port}\ndbname=ledger\n")
    monkeypatch.setenv("PGSERVICEFILE", str(services))
    monkeypatch.setenv("DPDASH_LEDGER", "postgresql:///?service=ledger")
    with pytest.raises(ParameterError, match="server of this dpdash's budget ledger"):
        open_postgres(fake.url(), "visits", password="typed")
    assert fake.connections == 0


def test_the_ledgers_own_database_is_refused(
    postgres: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _clean_env(monkeypatch)
    password = "ledger-pw"
    postgres.execute("DROP DATABASE IF EXISTS ambient_ledger WITH (FORCE)")
    postgres.execute("DROP ROLE IF EXISTS ambient_ledger")
    postgres.execute(sql.SQL("CREATE ROLE ambient_ledger LOGIN PASSWORD {}").format(sql.Literal(password)))
    postgres.execute("CREATE DATABASE ambient_ledger OWNER ambient_ledger")
    url = postgres.url("ambient_ledger", database="ambient_ledger")
    monkeypatch.setenv("PGPASSWORD", password)
    with Ledger(url) as ledger:  # the ledger takes its password from the environment, as documented
        ledger.start_session("test")
    monkeypatch.setenv("DPDASH_LEDGER", url)
    with pytest.raises(ParameterError, match="server of this dpdash's budget ledger"):
        open_postgres(url, "meta", password=password)
    # Reached some other way (the ledger named by another address), its tables still give it away.
    with pytest.raises(ParameterError, match="holds a dpdash budget ledger"):
        open_postgres(url, "meta", password=password, ledger="postgresql://x@192.0.2.1:5432/other")
