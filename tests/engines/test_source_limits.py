"""Connecting a source has limits (issue 25): files matched, folder depth, columns and time, each refused
with a message that names the limit and what to do, and nothing opened. The caps are lowered per test
(``SourceLimits``) so that the trees and tables stay small; never is /proc walked."""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpdash.engines import SourceLimits, open_duckdb, open_files, sources
from dpdash.engines.limits import MAX_SOURCE_COLUMNS, MAX_SOURCE_DEPTH, MAX_SOURCE_FILES, MAX_SOURCE_SECONDS
from dpdash.errors import ParameterError
from dpdash.loading._limits import MAX_COLUMNS


def write(path: Path, columns: int = 2) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({f"c{i}": pa.array([1, 2, 3]) for i in range(columns)}), path)
    return path


def test_a_folder_tree_deeper_than_the_limit_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "top.parquet")
    write(tmp_path / "a" / "b" / "c" / "d" / "deep.parquet")
    limits = SourceLimits(depth=3)
    for path in (tmp_path, f"{tmp_path}/**/*.parquet"):
        with pytest.raises(ParameterError, match=r"more than 3 folder levels deep .*closer to the files"):
            open_files(path, limits=limits)
    assert len(open_files(tmp_path, limits=SourceLimits(depth=4)).files) == 2


def test_more_files_than_the_limit_are_refused(tmp_path: Path) -> None:
    for i in range(6):
        write(tmp_path / "parts" / f"part-{i}.parquet")
    limits = SourceLimits(files=5)
    for path in (tmp_path / "parts", f"{tmp_path}/parts/*.parquet", f"{tmp_path}/**/part-*.parquet"):
        with pytest.raises(ParameterError, match=r"more than 5 files.*narrower folder or glob"):
            open_files(path, limits=limits)
    assert len(open_files(tmp_path / "parts", limits=SourceLimits(files=6)).files) == 6


def test_a_table_wider_than_the_limit_is_refused(tmp_path: Path) -> None:
    limits = SourceLimits(columns=10)
    wide = write(tmp_path / "wide.parquet", columns=11)
    with pytest.raises(ParameterError, match=r"has 11 columns, above dpdash's limit of 10.*only the columns"):
        open_files(wide, limits=limits)
    csv = tmp_path / "wide.csv"
    csv.write_text(",".join(f"c{i}" for i in range(11)) + "\n" + ",".join("1" * 11) + "\n")
    with pytest.raises(ParameterError, match="has 11 columns"):
        open_files(csv, limits=limits)
    database = tmp_path / "w.duckdb"
    with duckdb.connect(str(database)) as con:
        con.execute(f"CREATE TABLE wide AS SELECT * FROM read_parquet('{wide}')")
    with pytest.raises(ParameterError, match="has 11 columns"):
        open_duckdb(database, "wide", limits=limits)
    assert open_files(wide, limits=SourceLimits(columns=11)).columns[-1] == "c10"


def test_wide_files_are_refused_from_their_header_before_the_engine_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 20 000-column CSV took DuckDB's sniffer 15 s; its header is counted first (quoted text aside)."""
    limits = SourceLimits(columns=10)
    wide = tmp_path / "wide.csv"
    wide.write_text(";".join(f"c{i}" for i in range(11)) + "\n" + ";".join("1" * 11) + "\n")
    narrow = tmp_path / "narrow.csv"
    narrow.write_text('"a, b, c, d, e, f, g, h, i, j, k",z\n1,2\n')
    parquet = write(tmp_path / "wide.parquet", columns=11)

    def no_engine(config: object) -> None:
        raise AssertionError("the engine was started")

    monkeypatch.setattr(sources, "connect", no_engine)
    for path in (wide, parquet):
        with pytest.raises(ParameterError, match="has 11 columns"):
            open_files(path, limits=limits)
    monkeypatch.undo()
    source = open_files(narrow, limits=SourceLimits(columns=2))
    assert source.columns == ("a, b, c, d, e, f, g, h, i, j, k", "z")


def test_finding_files_past_the_time_limit_is_refused(tmp_path: Path) -> None:
    write(tmp_path / "a" / "x.parquet")
    with pytest.raises(ParameterError, match=r"took more than 1e-09 seconds.*narrower folder or glob"):
        open_files(f"{tmp_path}/**/*.parquet", limits=SourceLimits(seconds=1e-9))


def test_reading_the_schema_past_the_time_limit_is_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine is interrupted when the time is up (here, an engine that waits for the interruption)."""
    interrupted = threading.Event()

    class Slow:
        class con:  # DuckDB's connection, as Ibis names it
            interrupt = staticmethod(interrupted.set)

        closed = False

        def read_parquet(self, paths: object) -> object:
            if interrupted.wait(10):
                raise RuntimeError("INTERRUPT Error: Interrupted!")
            raise AssertionError("never interrupted")

        def disconnect(self) -> None:
            Slow.closed = True

    monkeypatch.setattr(sources, "connect", lambda config: Slow())
    with pytest.raises(ParameterError, match=r"reading the parquet schema of .* took more than 0.5 seconds"):
        open_files(write(tmp_path / "x.parquet"), limits=SourceLimits(seconds=0.5))
    assert Slow.closed


def test_a_walk_never_follows_a_link_back_up(tmp_path: Path) -> None:
    write(tmp_path / "data" / "x.parquet")
    (tmp_path / "data" / "loop").symlink_to(tmp_path)  # as /proc/self/root leads back to /
    source = open_files(f"{tmp_path}/**/*.parquet")
    assert source.files == (str(tmp_path / "data" / "x.parquet"),)
    assert open_files(tmp_path / "data").files == (str(tmp_path / "data" / "x.parquet"),)


def test_the_default_limits_are_sane() -> None:
    limits = SourceLimits()
    assert (limits.files, limits.depth, limits.columns, limits.seconds) == (
        MAX_SOURCE_FILES, MAX_SOURCE_DEPTH, MAX_SOURCE_COLUMNS, MAX_SOURCE_SECONDS
    )
    assert 1_000 <= MAX_SOURCE_FILES <= 100_000  # a year of hourly files fits; a filesystem does not
    assert 8 <= MAX_SOURCE_DEPTH <= 64  # year/month/day/hour partitions fit, with room
    assert 500 <= MAX_SOURCE_COLUMNS <= MAX_COLUMNS  # never wider than an upload may be
    assert 5 <= MAX_SOURCE_SECONDS <= 120  # one connect, while a person waits
    with pytest.raises(ParameterError, match="files must be a number > 0"):
        SourceLimits(files=0)
