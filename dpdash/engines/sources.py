"""Where a table lives: a pandas DataFrame, Parquet or CSV files (a file, a folder, a glob), or a table
in a DuckDB database file. Each becomes a :class:`Source`: an Ibis table on a backend, whose schema
and row count come from the engine (nothing but aggregates is read back)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dpdash.engines.connection import EngineConfig, connect
from dpdash.engines.limits import SourceLimits
from dpdash.engines.walk import find_files
from dpdash.errors import DPDashError, ParameterError, ParameterTypeError

__all__ = ["Source", "SourceChangedError", "open_duckdb", "open_files", "open_frame"]

_READERS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "csv"}


class SourceChangedError(DPDashError):
    """A connected source's files changed after it was opened: connect it again."""


@dataclass(frozen=True, slots=True, eq=False)
class Source:
    """A table inside an engine. ``table``: an Ibis table expression; ``backend``: what runs it;
    ``description``: where it comes from, in words (never a password); ``location``: the same as one
    machine-readable string (``kind:...``, never a password), what the dataset fingerprint is built on;
    ``owned``: whether :meth:`close` ends the backend's connection (not a Spark session, which is shared);
    ``files``: the local files it reads, as resolved real paths (their size and modification time enter
    :meth:`fingerprint`); ``names``: what a roles file's ``name = "…"`` rule can match, taken from what
    is read, never from how it was typed (files: each file's real path and file name; PostgreSQL:
    ``schema.table`` as the database resolves it, and ``table``; Spark: ``database.table`` as its catalog
    resolves it, and ``table``; DuckDB: the table).

    Both ``location`` and ``names`` are canonical: every spelling of the same data (a glob, a folder, a
    relative path, ``visits`` or ``public.visits``) gives the same ones, so the same identity."""

    table: Any
    backend: Any
    description: str
    location: str = ""
    owned: bool = True
    files: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    _seen: tuple[tuple[int, ...], ...] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self._seen is None:
            object.__setattr__(self, "_seen", self._file_states())

    def _file_states(self) -> tuple[tuple[int, ...], ...]:
        """Per file: device, inode, size, modification and change time (ns); ``()`` for a file gone."""
        states = []
        for name in self.files:
            try:
                stat = os.stat(name)
            except OSError:
                states.append(())
                continue
            states.append((stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns))
        return tuple(states)

    def check_unchanged(self) -> None:
        """Nothing if every file is as it was when the source was opened (one ``stat`` per file: no data is
        read); else a ``SourceChangedError``. A rewritten, replaced or removed file is other data, whose
        releases must not spend the budget of what was connected."""
        now = self._file_states()
        changed = [name for name, before, after in zip(self.files, self._seen or (), now, strict=True)
                   if before != after]  # fmt: skip
        if changed:
            shown = ", ".join(repr(name) for name in changed[:3]) + (" …" if len(changed) > 3 else "")
            raise SourceChangedError(
                f"the file changed since it was connected ({shown}): connect it again on the Data page (a "
                "changed file is another table, checked against the budgets in the ledger there); nothing "
                "was spent"
            )

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.table.columns)

    def schema(self) -> dict[str, str]:
        """Column name → the engine's type, e.g. ``{"age": "int64", "region": "string"}``."""
        return {name: str(dtype) for name, dtype in self.table.schema().items()}

    def fingerprint(self) -> str:
        """The dataset's identity without reading the table twice: ``"sha256:<hex>"`` of the location (no
        password), the engine's schema (names and types, in order), the engine's row count and, for local
        files (Parquet, CSV, a DuckDB file), each file's absolute path, size in bytes and modification time
        in ns. A rewritten file, another table or a new column is another dataset. A PostgreSQL or Spark
        table is identified by location, schema and row count only: an update that keeps all three is not
        seen."""
        digest = hashlib.sha256()
        parts: list[object] = [self.location, list(self.schema().items()), self.row_count()]
        for name in self.files:
            stat = Path(name).stat()
            parts.append([os.path.realpath(name), stat.st_size, stat.st_mtime_ns])
        digest.update(json.dumps(parts, ensure_ascii=False).encode())
        return "sha256:" + digest.hexdigest()

    def empty_frame(self) -> pd.DataFrame:
        """No rows, the columns with the pandas types of the engine's schema: what decisions made from
        column types alone (an integer column allows integer noise) read, without reading the data."""
        return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in self.table.schema().to_pandas()})

    def row_count(self) -> int:
        """The number of rows, counted by the engine."""
        return int(self.execute(self.table.count()))

    def execute(self, expr: Any) -> Any:
        """Run an aggregate expression on this source's backend; an engine failure (out of memory, a
        file that changed or vanished, a value out of range) becomes a ParameterError that says so."""
        try:
            return self.backend.execute(expr)
        except Exception as error:  # the engine's own exception types (duckdb.Error, ...)
            if isinstance(error, DPDashError):
                raise
            raise ParameterError(
                f"the engine could not compute this on {self.description}: {error}"
            ) from None

    def close(self) -> None:
        """Close the engine's connection (a DuckDB file opened read only is released)."""
        if self.owned:
            self.backend.disconnect()

    def head(self, rows: int = 200) -> pd.DataFrame:
        """The first ``rows`` rows the engine returns, in no particular order. NOT PRIVATE: a sample of
        the raw data for the data owner's eyes only."""
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
            raise ParameterError(f"rows must be an integer >= 0, got rows={rows!r}")
        return self.execute(self.table.limit(rows))


def open_frame(df: pd.DataFrame, config: EngineConfig | None = None) -> Source:
    """A pandas DataFrame queried by DuckDB (NaN in a float column arrives as a missing value)."""
    import ibis

    if not isinstance(df, pd.DataFrame):
        raise ParameterTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    names = [c for c in df.columns if not isinstance(c, str)]
    if names:
        raise ParameterError(f"column names must be strings for the engine, got {names[:5]!r}")
    return Source(ibis.memtable(df), connect(config), f"a DataFrame of {len(df)} rows", "dataframe")


def open_files(
    path: str | Path,
    *,
    format: str | None = None,
    config: EngineConfig | None = None,
    limits: SourceLimits | None = None,
) -> Source:
    """Parquet or CSV: one file, a folder of them (every ``*.parquet``/``*.csv`` inside, recursively),
    or a glob such as ``data/2026-*.parquet``. ``format``: ``"parquet"`` or ``"csv"`` (default: from
    the file names). Read in place by DuckDB's built-in readers. ``limits``: how many files, folder
    levels, columns and seconds finding and opening them may take (default ``SourceLimits()``); past one,
    a ``ParameterError`` says which, and nothing is opened."""
    limits = limits or SourceLimits()
    started = time.monotonic()
    paths, kind = _expand(str(path), format, limits)
    first = _parquet_columns(paths[0]) if kind == "parquet" else _csv_columns(paths[0])
    limits.check_columns(first, repr(paths[0]))
    backend = connect(config)
    left = max(0.0, limits.seconds - (time.monotonic() - started))
    late = threading.Event()
    timer = threading.Timer(left, lambda: (late.set(), backend.con.interrupt()))
    timer.start()
    try:
        table = backend.read_parquet(paths) if kind == "parquet" else backend.read_csv(paths)
    except Exception as error:  # duckdb's own exception types
        timer.cancel()
        backend.disconnect()
        if late.is_set():
            limits.refuse_time(str(path), f"reading the {kind} schema of")
        raise ParameterError(f"could not read {str(path)!r} as {kind}: {error}") from None
    timer.cancel()
    timer.join()
    described = f"{kind} {str(path)!r} ({len(paths)} file{'s' * (len(paths) != 1)})"
    try:
        if late.is_set():
            limits.refuse_time(str(path), f"reading the {kind} schema of")
        limits.check_columns(len(table.columns), described)
    except ParameterError:
        backend.disconnect()
        raise
    # Identity from what is read: the resolved files, however the path, folder or glob was spelled.
    location = f"{kind}:{paths[0]}" if len(paths) == 1 else f"{kind}:{json.dumps(paths, ensure_ascii=False)}"
    names = tuple(dict.fromkeys([*paths, *(Path(p).name for p in paths)]))
    return Source(table, backend, described, location, files=tuple(paths), names=names)


def open_duckdb(
    path: str | Path, table: str, *, config: EngineConfig | None = None, limits: SourceLimits | None = None
) -> Source:
    """A table (or view) in a DuckDB database file, opened read only (at most ``limits.columns`` columns)."""
    if not Path(path).is_file():
        raise ParameterError(f"no DuckDB database file at {str(path)!r}")
    backend = connect(config, path, read_only=True)
    names = backend.list_tables()
    if table not in names:
        shown = ", ".join(repr(n) for n in names[:20]) or "none"
        backend.disconnect()
        raise ParameterError(f"no table {table!r} in {str(path)!r} (tables: {shown})")
    described = f"table {table!r} of DuckDB file {str(path)!r}"
    real = os.path.realpath(path)
    location = f"duckdb:{real}#{table}"
    expr = backend.table(table)
    try:
        (limits or SourceLimits()).check_columns(len(expr.columns), described)
    except ParameterError:
        backend.disconnect()
        raise
    return Source(expr, backend, described, location, files=(real,), names=(table,))


def _expand(path: str, format: str | None, limits: SourceLimits) -> tuple[list[str], str]:
    if format is not None and format not in ("parquet", "csv"):
        raise ParameterError(f"format must be 'parquet' or 'csv', got format={format!r}")
    if "://" in path:
        raise ParameterError(f"only local files are read, got {path!r}")
    if Path(path).is_file():
        found = [path]
    else:
        readable = {s for s, kind in _READERS.items() if format in (None, kind)}
        found = find_files(path, limits, keep=lambda name: Path(name).suffix.lower() in readable)
    if not found:
        raise ParameterError(f"no Parquet or CSV file at {path!r}")
    kinds = {format or _READERS.get(Path(p).suffix.lower()) for p in found}
    if None in kinds or len(kinds) != 1:
        raise ParameterError(
            f"{path!r} must hold files of one format, .parquet or .csv (or give format=), got "
            f"{sorted({Path(p).suffix or '(none)' for p in found})}"
        )
    return sorted({os.path.realpath(p) for p in found}), kinds.pop()  # one file, whatever spelling reached it


def _csv_columns(path: str) -> int:
    """At most how many columns a CSV file's header has (its fields under the separator that splits it the
    most, quoted text left out), counted on its first MB before DuckDB's sniffer builds a column for each;
    0 when it cannot be read (DuckDB then says why)."""
    try:
        with open(path, "rb") as file:
            head = file.read(1_000_000)
    except OSError:
        return 0
    header = re.sub(rb'"[^"]*"', b"", head.lstrip(b"\r\n").split(b"\n", 1)[0])
    return 1 + max(header.count(separator) for separator in (b",", b";", b"\t", b"|"))


def _parquet_columns(path: str) -> int:
    """The columns in a Parquet file's footer (0 when it cannot be read: DuckDB then says why)."""
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata.num_columns
    except Exception:  # pyarrow's own exception types, or an OSError
        return 0
