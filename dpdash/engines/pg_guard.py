"""What keeps a PostgreSQL source from borrowing the server's own access (issue 25).

A source connects with the password the person gave and nothing else: every libpq option that could
otherwise come from the environment or a file (``PGPASSWORD``, ``~/.pgpass``/``PGPASSFILE``, a client
certificate in ``~/.postgresql``, a Kerberos ticket, ``PGHOSTADDR``) is given explicitly
(:func:`libpq_options`), and a service named by ``PGSERVICE`` is refused (its file could fill in any option
not given). The ledger's own server (the same address and port, or the same machine for a ledger reached
through a Unix socket) is refused as a source (:func:`refuse_ledger_server`), and so is any schema that
holds a dpdash ledger's tables (:func:`refuse_ledger_tables`): its ``meta`` table keeps the signing key.
"""

from __future__ import annotations

import configparser
import ipaddress
import os
import socket
from collections.abc import Iterable
from pathlib import Path

from dpdash.errors import ParameterError

__all__ = ["AUTH_ALLOWED", "libpq_options", "refuse_ledger_server", "refuse_ledger_tables", "resolve"]

#: A path that cannot exist (``/dev/null`` is not a folder): where libpq is told its password file and
#: client certificate are, so that it reads neither ``~/.pgpass`` nor ``~/.postgresql/postgresql.crt``.
NOWHERE = "/dev/null/dpdash-none"
#: The authentication a source may use: a password (cleartext, MD5 or SCRAM) or none at all; never GSS,
#: SSPI or OAuth, which would present the server's own identity.
AUTH_ALLOWED = "password,md5,scram-sha-256,none"
#: Seconds to wait for a source's server to answer.
CONNECT_TIMEOUT = 10
#: The tables every dpdash ledger has (schema 1).
LEDGER_TABLES = frozenset({"meta", "datasets", "sessions", "entries"})


def libpq_options(password: str) -> dict[str, str]:
    """Every libpq option that would otherwise be filled in from the environment or a file, given: the
    password (possibly empty), a password file and client certificate that cannot exist, no GSS
    encryption, and (libpq 16 and later) no client certificate sent and only password or no authentication.

    Raises:
        ParameterError: ``PGSERVICE`` is set: its service file could fill in a password or a host.
    """
    import psycopg

    if os.environ.get("PGSERVICE", "").strip():
        raise ParameterError(
            "PGSERVICE is set in this server's environment: its service file could give a PostgreSQL source "
            "the server's own password or settings, so none is connected. Unset PGSERVICE for dpdash (a "
            "PostgreSQL ledger can name its service in its URL: DPDASH_LEDGER=postgresql:///?service=NAME)"
        )
    options = {
        "password": password,
        "passfile": NOWHERE,
        "sslcert": NOWHERE,
        "sslkey": NOWHERE,
        "gssencmode": "disable",
        "connect_timeout": str(CONNECT_TIMEOUT),
    }
    if psycopg.pq.version() >= 160000:  # both options arrived in libpq 16
        options["sslcertmode"] = "disable"
        options["require_auth"] = AUTH_ALLOWED
    return options


def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (an address is itself), in libpq's order; [] when it does not."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(entry[4][0]).split("%")[0] for entry in found))


def refuse_ledger_server(addresses: Iterable[str], host: str, port: int, ledger: str | Path | None) -> None:
    """Refuse a source at ``addresses`` (``host`` resolved) and ``port`` that is the ledger's server.

    The ledger's hosts are resolved too; loopback addresses, this machine's own addresses and a Unix
    socket all stand for "this machine", so 127.0.0.1, localhost and ::1 are one server.
    """
    endpoints = _ledger_endpoints(ledger)
    if not endpoints:
        return
    mine = {_place(a) for a in addresses} or {host.lower()}
    for ledger_places, ledger_port in endpoints:
        if ledger_port == port and mine & ledger_places:
            raise ParameterError(
                f"{host}:{port} is the server of this dpdash's budget ledger, which is never a source (its "
                "database holds the ledger's signing key). Connect a table on another PostgreSQL server, or "
                "move the ledger to a server of its own"
            )


def refuse_ledger_tables(names: Iterable[str], shown: str) -> None:
    """Refuse a schema that holds a dpdash ledger (any ledger, not only this server's)."""
    if set(names) >= LEDGER_TABLES:
        raise ParameterError(
            f"{shown} holds a dpdash budget ledger (tables {', '.join(sorted(LEDGER_TABLES))}), which is "
            "never a source: its meta table keeps the ledger's signing key. Connect a table of another "
            "database"
        )


def _ledger_endpoints(ledger: str | Path | None) -> list[tuple[set[str], int]]:
    """Each (places, port) the PostgreSQL ledger at ``ledger`` may be reached at; [] for a file ledger."""
    if not isinstance(ledger, str) or not ledger.strip().lower().startswith(("postgresql:", "postgres:")):
        return []
    from psycopg.conninfo import conninfo_to_dict

    try:
        params = {k: str(v) for k, v in conninfo_to_dict(ledger.strip()).items() if v is not None}
    except Exception:  # psycopg's own error: the ledger itself reports its URL
        return []
    _fill_from_service(params)
    for key, variable in (("host", "PGHOST"), ("hostaddr", "PGHOSTADDR"), ("port", "PGPORT")):
        if not params.get(key) and os.environ.get(variable):
            params[key] = os.environ[variable]
    hosts = (params.get("hostaddr") or params.get("host") or "").split(",")
    ports = (params.get("port") or "5432").split(",")
    endpoints = []
    for i, host in enumerate(hosts):
        text = (ports[i] if len(ports) == len(hosts) else ports[0]).strip() or "5432"
        port = int(text) if text.isdigit() else 5432
        host = host.strip()
        if not host or host.startswith(("/", "@")):  # a Unix socket: a server on this machine
            endpoints.append(({"this machine"}, port))
        else:
            endpoints.append(({_place(a) for a in resolve(host, port)} | {host.lower()}, port))
    return endpoints


def _fill_from_service(params: dict[str, str]) -> None:
    """The options the ledger's service file gives (only those its URL leaves out), as libpq reads them."""
    service = params.get("service") or os.environ.get("PGSERVICE", "").strip()
    if not service:
        return
    sysconf = os.environ.get("PGSYSCONFDIR", "/etc/postgresql-common")
    files = [params.get("servicefile") or os.environ.get("PGSERVICEFILE") or "~/.pg_service.conf",
             f"{sysconf}/pg_service.conf"]  # fmt: skip
    for name in files:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(Path(name).expanduser(), encoding="utf-8")
        except (configparser.Error, OSError, UnicodeError):
            continue
        if parser.has_section(service):
            for key, value in parser.items(service):
                params.setdefault(key, value)
            return


def _place(address: str) -> str:
    """An address as a place: "this machine" for a loopback address or one of this machine's own."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address.lower()
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_unspecified or str(ip) in _own_addresses():
        return "this machine"
    return str(ip)


def _own_addresses() -> set[str]:
    """This machine's addresses, as its own name resolves."""
    return set(resolve(socket.gethostname(), 0))
