"""PostgreSQL connection URLs (``postgresql://user[:password]@host[:port]/database``), as the engines (a
source) and the ledger (its database) both read them: their parts, the text to show without the password,
and whether a location is one."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

from dpdash.errors import ParameterError

__all__ = ["SCHEMES", "is_url", "redact", "split_url"]

SCHEMES = ("postgresql", "postgres")


def redact(url: str) -> str:
    """``url`` without its password (``postgresql://user@host:port/db``); the text to show or store."""
    parts = split_url(url)
    user = f"{parts.username}@" if parts.username else ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


def is_url(location: object) -> bool:
    """Whether ``location`` names a PostgreSQL database (a ``postgresql://`` or ``postgres://`` URL)."""
    prefixes = tuple(f"{scheme}://" for scheme in SCHEMES)
    return isinstance(location, str) and location.strip().lower().startswith(prefixes)


def split_url(url: str) -> SplitResult:
    """``url``'s parts, or a ``ParameterError`` saying what a PostgreSQL URL looks like."""
    if not isinstance(url, str):
        raise ParameterError(f"the PostgreSQL URL must be text, got {type(url).__name__}")
    parts = urlsplit(url.strip())
    if parts.scheme not in SCHEMES:
        raise ParameterError(
            f"a PostgreSQL URL starts with postgresql://, e.g. postgresql://user@host:5432/database; got "
            f"{parts.scheme + '://' if parts.scheme else 'no scheme'}"
        )
    try:
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        raise ParameterError("the port in the PostgreSQL URL must be a number") from None
    return parts
