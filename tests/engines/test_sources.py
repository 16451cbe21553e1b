"""Sources: a Parquet folder, a glob, a CSV file and a DuckDB database file give the answers of the
DataFrame they were written from; schema and row count come from the engine; the embedded DuckDB
has its memory limit and spill folder and loads no extension from outside."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from dpdash.engines import EngineConfig, evaluate, open_duckdb, open_files, open_frame
from dpdash.errors import ParameterError
from dpdash.facts import Facts
from dpdash.queries import Sum
from tests.engines.compare import check
from tests.engines.test_differential import ID, INCOME, queries, table

FACTS = Facts(rows_per_person=2, id_column=ID)


def write_parts(df: pd.DataFrame, folder: Path, parts: int = 3) -> None:
    folder.mkdir(parents=True)
    for i, part in enumerate(np.array_split(np.arange(len(df)), parts)):
        df.iloc[part].to_parquet(folder / f"part-{i}.parquet", index=False)


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return table(21, rows=1500, people=300)


@pytest.mark.slow
def test_a_parquet_folder_and_a_glob_answer_as_the_dataframe(df: pd.DataFrame, tmp_path: Path) -> None:
    write_parts(df, tmp_path / "data" / "2026")
    (tmp_path / "data" / "README.txt").write_text("not a table")  # ignored: not .parquet/.csv
    for source in (
        open_files(tmp_path / "data"),
        open_files(str(tmp_path / "data" / "2026" / "part-*.parquet")),
    ):
        assert source.row_count() == len(df)
        assert "3 files" in source.description
        for query in queries(FACTS):
            check(query, df, source)


@pytest.mark.slow
def test_a_csv_file_answers_as_the_dataframe(df: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "table.csv"
    df.to_csv(path, index=False)
    source = open_files(path)
    assert source.schema()[INCOME] == "float64"
    for query in queries(FACTS):
        check(query, df, source)


@pytest.mark.slow
def test_a_duckdb_file_answers_as_the_dataframe(df: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(path)) as con:
        con.register("frame", df)  # NaN stays NaN in DuckDB (not NULL): still a missing value
        con.execute('CREATE TABLE "my ""table""" AS SELECT * FROM frame')
    source = open_duckdb(path, 'my "table"')
    assert source.row_count() == len(df)
    assert source.schema() == {
        ID: "float64",
        INCOME: "float64",
        "région </script>": "string",
        "age": "float64",
        "kids": "int64",
        "flag": "boolean",
    }
    for query in queries(FACTS):
        check(query, df, source)
    with pytest.raises(ParameterError, match=r"no table 'nope' in .*tables: 'my \"table\"'"):
        open_duckdb(path, "nope")
    source.close()
    with duckdb.connect(str(path)) as con:  # closed: the file can be written again
        con.execute('INSERT INTO "my ""table""" SELECT * FROM "my ""table""" LIMIT 1')
    assert open_duckdb(path, 'my "table"').row_count() == len(df) + 1


def test_the_engine_runs_with_its_memory_limit_and_spill_folder(tmp_path: Path) -> None:
    config = EngineConfig(memory_limit="300MB", temp_directory=tmp_path / "spill", threads=1)
    source = open_frame(pd.DataFrame({"x": [1.0]}), config)
    row = source.backend.raw_sql(
        "SELECT current_setting('memory_limit'), current_setting('temp_directory'), "
        "current_setting('threads'), current_setting('autoinstall_known_extensions'), "
        "current_setting('autoload_known_extensions'), current_setting('preserve_insertion_order')"
    ).fetchone()
    assert row[0] in ("286.1 MiB", "300.0 MB") and row[1] == str(tmp_path / "spill")
    assert row[2:] == (1, False, False, False)


def test_no_extension_is_downloaded(df: pd.DataFrame, tmp_path: Path) -> None:
    write_parts(df, tmp_path / "data")
    df.to_csv(tmp_path / "t.csv", index=False)
    for source in (open_files(tmp_path / "data"), open_files(tmp_path / "t.csv")):
        evaluate(queries(FACTS)[10], source)
        loaded = source.backend.raw_sql(
            "SELECT extension_name, install_mode FROM duckdb_extensions() WHERE loaded"
        ).fetchall()
        assert loaded and all(mode == "STATICALLY_LINKED" for _, mode in loaded), loaded


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("nowhere/*.parquet", "no Parquet or CSV file at"),
        ("https://example.org/t.parquet", "only local files are read"),
    ],
)
def test_bad_paths_are_refused_clearly(path: str, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        open_files(path)


def test_a_folder_of_mixed_formats_is_refused(df: pd.DataFrame, tmp_path: Path) -> None:
    df.to_csv(tmp_path / "a.csv", index=False)
    df.to_parquet(tmp_path / "b.parquet", index=False)
    with pytest.raises(ParameterError, match="must hold files of one format"):
        open_files(tmp_path)
    assert open_files(tmp_path, format="parquet").row_count() == len(df)
    with pytest.raises(ParameterError, match="no DuckDB database file"):
        open_duckdb(tmp_path / "missing.duckdb", "t")


def test_the_owner_sample_and_engine_failures(df: pd.DataFrame, tmp_path: Path) -> None:
    write_parts(df, tmp_path / "data")
    source = open_files(tmp_path / "data")
    sample = source.head()
    assert len(sample) == 200 and list(sample.columns) == list(df.columns)
    for part in (tmp_path / "data").iterdir():
        part.unlink()  # the files vanish after the source was opened
    with pytest.raises(ParameterError, match="the engine could not compute this on parquet"):
        evaluate(queries(FACTS)[0], source)


@pytest.mark.slow
def test_a_truncation_larger_than_the_memory_limit_spills_to_disk(tmp_path: Path) -> None:
    rows = 1_000_000
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"pid": rng.integers(0, rows // 4, rows), "x": rng.normal(0, 1, rows)})
    df.to_parquet(tmp_path / "big.parquet", index=False)
    query = Sum(column="x", bounds=(-1, 1), facts=Facts(rows_per_person=2, id_column="pid"))
    no_disk = open_files(tmp_path / "big.parquet", config=EngineConfig(memory_limit="32MB", threads=1))
    no_disk.backend.raw_sql("SET max_temp_directory_size='0KiB'")
    with pytest.raises(ParameterError, match="Out of Memory"):  # it does not fit in 32 MB ...
        evaluate(query, no_disk)
    config = EngineConfig(memory_limit="32MB", temp_directory=tmp_path / "spill", threads=1)
    spilled = evaluate(query, open_files(tmp_path / "big.parquet", config=config))  # ... but spills
    assert spilled.values[0] == pytest.approx(query.evaluate(df).values[0], rel=1e-9)


def test_the_fingerprint_follows_the_files_not_a_second_read(df: pd.DataFrame, tmp_path: Path) -> None:
    write_parts(df, tmp_path / "data")
    first = open_files(tmp_path / "data").fingerprint()
    assert open_files(tmp_path / "data").fingerprint() == first  # the same files: the same dataset
    assert open_files(str(tmp_path / "data" / "part-*.parquet")).fingerprint() == first  # the same files
    part = tmp_path / "data" / "part-1.parquet"
    stat = part.stat()
    os.utime(part, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # rewritten, same bytes
    assert open_files(tmp_path / "data").fingerprint() != first
    second = open_files(tmp_path / "data").fingerprint()
    df.iloc[:10].to_parquet(tmp_path / "data" / "part-9.parquet", index=False)  # a file more
    assert open_files(tmp_path / "data").fingerprint() not in (first, second)
    path = tmp_path / "w.duckdb"
    with duckdb.connect(str(path)) as con:
        con.register("frame", df)
        con.execute("CREATE TABLE a AS SELECT * FROM frame")
        con.execute("CREATE TABLE b AS SELECT * FROM frame")
    a, b = open_duckdb(path, "a"), open_duckdb(path, "b")
    assert a.fingerprint() != b.fingerprint()  # another table of the same file
    a.close(), b.close()


def test_every_spelling_of_the_same_file_is_one_identity(
    df: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file, a bracket glob, a star glob, its folder, a relative path and a link to it read the same data:
    one location, one fingerprint, the same names for roles (issue 25, item 4)."""
    folder = tmp_path / "data"
    folder.mkdir()
    df.to_parquet(folder / "visits.parquet", index=False)
    (tmp_path / "link.parquet").symlink_to(folder / "visits.parquet")
    monkeypatch.chdir(tmp_path)
    spellings = [folder / "visits.parquet", f"{folder}/visits.parque[t]", f"{folder}/*.parquet", folder,
                 f"{folder}/", "data/visits.parquet", "./data/../data/visits.parquet",
                 "link.parquet"]  # fmt: skip
    sources = [open_files(spelling) for spelling in spellings]
    real = os.path.realpath(folder / "visits.parquet")
    assert {s.location for s in sources} == {f"parquet:{real}"}
    assert {s.fingerprint() for s in sources} == {sources[0].fingerprint()}
    assert {s.names for s in sources} == {(real, "visits.parquet")}
    for source in sources:
        source.close()


@pytest.mark.parametrize("how", ["rewritten", "replaced", "times put back", "removed"])
def test_a_file_changed_after_it_was_opened_is_not_released_from(
    df: pd.DataFrame, tmp_path: Path, how: str
) -> None:
    """Rewritten in place (same size), replaced by another file, rewritten with its times put back, or
    removed: the release is refused before anything is drawn (issue 25, item 9)."""
    from dpdash.engines import SourceChangedError
    from dpdash.queries import Count
    from dpdash.release import release

    path = tmp_path / "visits.csv"
    df.to_csv(path, index=False)
    source = open_files(path)
    identity = source.fingerprint()
    assert release(Count(), "geometric", source, epsilon=1.0, identity=identity).dataset_identity == identity
    before = path.stat()
    text = path.read_text()
    other = text.replace(",1", ",2", 1)
    assert len(other) == len(text) and other != text
    if how == "replaced":
        (tmp_path / "new.csv").write_text(other)
        os.replace(tmp_path / "new.csv", path)
    elif how == "removed":
        path.unlink()
    else:
        path.write_text(other)
    if how == "times put back":
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(SourceChangedError, match=r"changed since it was connected.*connect it again"):
        release(Count(), "geometric", source, epsilon=1.0, identity=identity)
    source.close()


def test_a_release_spends_only_the_identity_of_what_it_read(df: pd.DataFrame, tmp_path: Path) -> None:
    """Given the identity of another table (a source opened again after its file changed), the release is
    refused: its answer would spend a budget kept for other data (issue 25, item 9)."""
    from dpdash.engines import SourceChangedError
    from dpdash.queries import Count
    from dpdash.release import release

    path = tmp_path / "visits.parquet"
    df.to_parquet(path, index=False)
    identity = open_files(path).fingerprint()
    df.iloc[:-1].to_parquet(path, index=False)
    with pytest.raises(SourceChangedError, match="changed since it was connected"):
        release(Count(), "geometric", open_files(path), epsilon=1.0, identity=identity)
