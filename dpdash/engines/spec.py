"""Where a connected table lives, as plain data without a password: what the app's Connect section builds,
what the workspace keeps so that a reload or a restart opens the table again, and what opens it.

>>> spec = SourceSpec.postgres("postgresql://ana:s3cret@db:5432/clinic", "public.visits")
>>> spec.url, spec.describe()
('postgresql://ana@db:5432/clinic', "PostgreSQL table 'public.visits' at postgresql://ana@db:5432/clinic")
>>> SourceSpec.from_dict(spec.to_dict()) == spec
True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from dpdash.engines.connection import EngineConfig
from dpdash.engines.sources import Source
from dpdash.errors import ParameterError, ParameterTypeError

__all__ = ["KINDS", "SourceSpec", "url_password"]

SourceKind = Literal["files", "duckdb", "postgres", "spark"]
#: Each kind of connected source, with what it needs.
KINDS: dict[str, tuple[str, ...]] = {
    "files": ("path",),
    "duckdb": ("path", "table"),
    "postgres": ("url", "table"),
    "spark": ("master", "table"),
}


def url_password(url: str) -> str | None:
    """The password written in a PostgreSQL URL (percent-decoded), or None."""
    password = urlsplit(url.strip()).password
    return None if password is None else unquote(password)


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceSpec:
    """A connected source, password-free.

    Attributes:
        kind: ``"files"`` (Parquet or CSV: a file, a folder, a glob), ``"duckdb"`` (a DuckDB database
            file), ``"postgres"`` (a PostgreSQL table) or ``"spark"`` (a Spark table or view).
        path: the file, folder or glob (files) or the database file (duckdb).
        table: the table (duckdb, postgres: ``schema.table``, spark: ``db.table``).
        url: the PostgreSQL URL, never with a password (``SourceSpec.postgres`` takes it out).
        master: the Spark master (``local[*]``, ``spark://host:7077``, ...).
    """

    kind: SourceKind
    path: str = ""
    table: str = ""
    url: str = ""
    master: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ParameterError(f"kind must be one of {sorted(KINDS)}, got kind={self.kind!r}")
        for name in ("path", "table", "url", "master"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise ParameterTypeError(f"{name} must be text, got {type(value).__name__}")
            if "\x00" in value:
                raise ParameterError(f"{name} must not contain a NUL character")
        missing = [name for name in KINDS[self.kind] if not getattr(self, name).strip()]
        if missing:
            raise ParameterError(f"a {self.kind} source needs {' and '.join(missing)}; give {missing[0]}")
        if self.url and url_password(self.url) is not None:
            raise ParameterError("the URL holds a password: give the password apart (it is never stored)")

    @classmethod
    def postgres(cls, url: str, table: str) -> SourceSpec:
        """A PostgreSQL table; any password in ``url`` is taken out (pass it to :meth:`open`)."""
        from dpdash.engines.postgres import redact

        return cls(kind="postgres", url=redact(url), table=table.strip())

    def open(self, *, password: str | None = None, config: EngineConfig | None = None) -> Source:
        """Open the source (``password``: PostgreSQL's, used to connect and kept nowhere)."""
        if self.kind == "files":
            from dpdash.engines.sources import open_files

            return open_files(self.path.strip(), config=config)
        if self.kind == "duckdb":
            from dpdash.engines.sources import open_duckdb

            return open_duckdb(self.path.strip(), self.table.strip(), config=config)
        if self.kind == "postgres":
            from dpdash.engines.postgres import open_postgres

            return open_postgres(self.url, self.table.strip(), password=password or None)
        from dpdash.engines.spark import open_spark

        return open_spark(self.table.strip(), master=self.master.strip())

    def describe(self) -> str:
        """In words, for the screen (no password: the spec holds none)."""
        if self.kind == "files":
            return f"files {self.path!r}"
        if self.kind == "duckdb":
            return f"table {self.table!r} of DuckDB file {self.path!r}"
        if self.kind == "postgres":
            return f"PostgreSQL table {self.table!r} at {self.url}"
        return f"Spark table {self.table!r} ({self.master})"

    def to_dict(self) -> dict[str, str]:
        return {key: value for key, value in asdict(self).items() if value}

    @classmethod
    def from_dict(cls, data: Any) -> SourceSpec:
        if not isinstance(data, dict):
            raise ParameterTypeError(f"a source spec must be a JSON object, got {type(data).__name__}")
        unknown = set(data) - {"kind", "path", "table", "url", "master"}
        if unknown:
            raise ParameterError(f"unknown fields in a source spec: {sorted(unknown)}")
        return cls(**{key: str(value) for key, value in data.items()})  # type: ignore[arg-type]
