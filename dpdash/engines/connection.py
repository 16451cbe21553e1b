"""The embedded engine: an in-process DuckDB with a memory limit and a folder to spill to.

Nothing here downloads anything: extension auto-install and auto-load are switched off, and only
DuckDB's built-in Parquet and CSV readers are used (no httpfs, no remote paths).
"""

from __future__ import annotations

import functools
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dpdash.errors import ParameterError

__all__ = ["DEFAULT_MEMORY_LIMIT", "EngineConfig", "connect"]

#: DuckDB's memory limit unless told otherwise: past it, sorts, joins and windows spill to disk.
DEFAULT_MEMORY_LIMIT = "2GB"


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineConfig:
    """How the embedded DuckDB runs.

    Args:
        memory_limit: DuckDB's ``memory_limit`` (e.g. ``"2GB"``, ``"512MB"``).
        temp_directory: where it spills; default one private folder per process under the system temp
            folder (the same settings each time, so one database file can be opened twice).
        threads: worker threads; ``None`` lets DuckDB use every core.
    """

    memory_limit: str = DEFAULT_MEMORY_LIMIT
    temp_directory: str | Path | None = None
    threads: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.memory_limit, str) or not self.memory_limit.strip():
            raise ParameterError(f"memory_limit must be a size such as '2GB', got {self.memory_limit!r}")
        if self.threads is not None and (
            isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1
        ):
            raise ParameterError(f"threads must be an integer >= 1 or None, got threads={self.threads!r}")

    def settings(self) -> dict[str, Any]:
        """The DuckDB settings this configuration stands for."""
        temp = self.temp_directory or _default_temp()
        out: dict[str, Any] = {
            "memory_limit": self.memory_limit,
            "temp_directory": str(temp),
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "preserve_insertion_order": False,  # no answer depends on row order: less memory
        }
        if self.threads is not None:
            out["threads"] = self.threads
        return out


@functools.cache
def _default_temp() -> str:
    return tempfile.mkdtemp(prefix="dpdash-duckdb-")


def connect(
    config: EngineConfig | None = None, database: str | Path = ":memory:", *, read_only: bool = False
):
    """An Ibis DuckDB backend: in memory, or on a DuckDB database file (read only when asked)."""
    import ibis  # imported here: the pandas path of dpdash never needs it

    settings = (config or EngineConfig()).settings()
    try:
        return ibis.duckdb.connect(str(database), read_only=read_only, **settings)
    except Exception as error:  # duckdb raises its own exception types
        raise ParameterError(f"could not open DuckDB on {str(database)!r}: {error}") from None
