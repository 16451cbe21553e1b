"""How much work connecting a source may cause (issue 25): files matched, folder depth walked, columns,
and time spent finding and reading the files. Each limit hit is a ``ParameterError`` that says which and
what to do; nothing is opened (the caller keeps its current table).

The upload limits (``dpdash.loading._limits``) bound one file's bytes and cells; a connected source is read
in place and may be much larger, so its limits bound what connecting does before a query runs: walking
folders (a glob such as ``/**/*.parquet`` would walk the whole filesystem, ``/proc`` included), opening
file footers, and the schema every page lays out.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpdash.errors import ParameterError

__all__ = ["MAX_SOURCE_COLUMNS", "MAX_SOURCE_DEPTH", "MAX_SOURCE_FILES", "MAX_SOURCE_SECONDS", "SourceLimits"]

#: The most files a folder or a glob may match.
MAX_SOURCE_FILES = 10_000
#: The most folder levels walked below a folder, or below a glob's fixed start (``data/`` in
#: ``data/**/*.parquet``).
MAX_SOURCE_DEPTH = 20
#: The most columns a connected table may have.
MAX_SOURCE_COLUMNS = 2_000
#: The most seconds spent finding files and reading their schema.
MAX_SOURCE_SECONDS = 30.0


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceLimits:
    """The limits of one connect (defaults: the module's constants)."""

    files: int = MAX_SOURCE_FILES
    depth: int = MAX_SOURCE_DEPTH
    columns: int = MAX_SOURCE_COLUMNS
    seconds: float = MAX_SOURCE_SECONDS

    def __post_init__(self) -> None:
        for name in ("files", "depth", "columns", "seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ParameterError(f"{name} must be a number > 0, got {name}={value!r}")

    def refuse_files(self, path: str) -> None:
        raise ParameterError(
            f"{path!r} matches more than {self.files:,} file{'s' * (self.files != 1)}, dpdash's limit for "
            "one source: give a narrower folder or glob (e.g. one year's folder), or merge the files into "
            "fewer, larger ones"
        )

    def refuse_depth(self, path: str, folder: str) -> None:
        raise ParameterError(
            f"finding the files of {path!r} went more than {self.depth} folder levels deep (at {folder!r}), "
            "dpdash's limit: give a folder or glob that starts closer to the files, without **"
        )

    def refuse_time(self, path: str, doing: str) -> None:
        raise ParameterError(
            f"{doing} {path!r} took more than {self.seconds:g} seconds, dpdash's limit: give a narrower "
            "folder or glob, or fewer, larger files"
        )

    def check_columns(self, n: int, shown: str) -> None:
        """Refuse a table of more than ``columns`` columns."""
        if n > self.columns:
            raise ParameterError(
                f"{shown} has {n:,} columns, above dpdash's limit of {self.columns:,} for a connected table: "
                "connect a view or a file with only the columns you need"
            )
