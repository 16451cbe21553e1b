"""Real servers for tests: a PostgreSQL cluster from Debian's packages, in a temporary folder, on 127.0.0.1.

``PostgresServer.create(folder)`` runs ``initdb`` and ``pg_ctl start`` as an unprivileged user (PostgreSQL
refuses to run as root; as root the cluster runs as ``nobody``), listening on 127.0.0.1 only, on a free port,
with its socket in the folder and durability off (fsync) for speed. The superuser connects through the
socket without a password; TCP connections need a password (SCRAM), so tests of password handling are real.
``make debian`` installs the package (``postgresql``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

SUPERUSER = "dpdash_admin"


def postgres_bindir() -> Path:
    """Debian's PostgreSQL binaries (the newest version installed); fails with what to do if missing."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not found:
        raise RuntimeError("PostgreSQL is not installed: run `make debian` (installs Debian's postgresql)")
    return Path(found[-1]).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PostgresServer:
    """A running cluster: ``url(user, password, database)`` for clients, ``stop``/``start`` for tests that
    take the server away (issue 16), ``execute`` for setup as the superuser."""

    folder: Path
    port: int
    bindir: Path
    run_as: str | None  # the OS user the server runs as (None: this process's user)

    @classmethod
    def create(cls, folder: Path) -> PostgresServer:
        run_as = "nobody" if os.geteuid() == 0 else None
        folder.mkdir(parents=True, exist_ok=True)
        if run_as is not None:
            entry = pwd.getpwnam(run_as)
            os.chown(folder, entry.pw_uid, entry.pw_gid)
        server = cls(folder, free_port(), postgres_bindir(), run_as)
        server._run(
            "initdb", "-D", str(server.data), "-U", SUPERUSER, "--auth-local=trust",
            "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C.UTF-8", "--no-instructions",
        )  # fmt: skip
        server.start()
        return server

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def _run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.folder), "LC_ALL": "C.UTF-8"}
        result = subprocess.run(
            [str(self.bindir / program), *args], user=self.run_as, cwd=self.folder, env=env,
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        if result.returncode != 0:
            log = self.folder / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{program} failed ({result.returncode}): {result.stderr}{result.stdout}\n{tail}"
            )
        return result

    def start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.folder} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-o", options,
                  "-w", "-t", "60", "start")  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m mode`` (``fast``, or ``immediate`` to kill it mid-work)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def url(self, user: str = SUPERUSER, password: str | None = None, database: str = "postgres") -> str:
        """A ``postgresql://`` URL over TCP to 127.0.0.1 (user and password percent-encoded)."""
        secret = "" if password is None else ":" + quote(password, safe="")
        return f"postgresql://{quote(user, safe='')}{secret}@127.0.0.1:{self.port}/{quote(database, safe='')}"

    def connect(self, database: str = "postgres") -> Any:
        """A psycopg connection as the superuser, through the socket (autocommit)."""
        import psycopg

        return psycopg.connect(
            host=str(self.folder), port=self.port, user=SUPERUSER, dbname=database, autocommit=True
        )

    def execute(self, sql: str, params: Any = None, database: str = "postgres") -> None:
        with self.connect(database) as con:
            con.execute(sql, params)

    def load(self, df: Any, table: str, database: str = "postgres") -> None:
        """``df`` as a new table (replacing one of that name): float64 → double precision (NaN → NULL:
        pandas' missing value), integers → bigint, booleans → boolean, anything else → text."""
        from psycopg import sql

        types = {"f": "double precision", "i": "bigint", "u": "bigint", "b": "boolean"}
        columns = [
            sql.SQL("{} {}").format(sql.Identifier(str(c)), sql.SQL(types.get(df[c].dtype.kind, "text")))
            for c in df.columns
        ]
        name = sql.Identifier(table)
        rows = [
            [None if v is None or v != v else v.item() if hasattr(v, "item") else v for v in row]
            for row in df.itertuples(index=False, name=None)
        ]
        with self.connect(database) as con:
            con.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(name))
            con.execute(sql.SQL("CREATE TABLE {} ({})").format(name, sql.SQL(", ").join(columns)))
            with con.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(name)) as copy:
                for row in rows:
                    copy.write_row(row)

    def remove(self) -> None:
        with contextlib.suppress(RuntimeError):  # already stopped
            self.stop("fast")
        shutil.rmtree(self.folder, ignore_errors=True)
