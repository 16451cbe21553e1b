"""Where a connected table lives (``SourceSpec``): validated, password-free, kept by the workspace, and
opened again to the same dataset; ``release`` and ``calibrate`` take a source as they take a DataFrame
(issue 15: the app's Connect section)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpdash.datasets import PublicFacts
from dpdash.engines import SourceSpec, open_frame
from dpdash.engines.spec import url_password
from dpdash.errors import DPDashError, ParameterError
from dpdash.facts import Facts, Neighbours
from dpdash.mechanisms import Geometric, Laplace, RandomizedResponse
from dpdash.queries import Count, Histogram, Mean, Sum
from dpdash.release import calibrate, release
from dpdash.workspace import Workspace


def frame(rows: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": rng.integers(0, rows // 2, rows),
        "age": rng.integers(-3, 105, rows),
        "score": rng.normal(50, 20, rows),
        "region": rng.choice(["a", "b", "c"], rows),
    })  # fmt: skip


def test_a_spec_never_holds_a_password() -> None:
    spec = SourceSpec.postgres("postgresql://ana:p%40ss@db.example:5433/clinic?sslmode=require", "visits")
    assert spec.url == "postgresql://ana@db.example:5433/clinic" and "p%40ss" not in repr(spec)
    assert url_password("postgresql://ana:p%40ss@db/x") == "p@ss"
    assert url_password("postgresql://ana@db/x") is None
    with pytest.raises(ParameterError, match="holds a password"):
        SourceSpec(kind="postgres", url="postgresql://ana:secret@db/clinic", table="t")
    with pytest.raises(ParameterError, match="holds a password"):
        SourceSpec.from_dict({"kind": "postgres", "url": "postgresql://a:b@h/d", "table": "t"})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "files"}, "a files source needs path"),
        ({"kind": "duckdb", "path": "w.duckdb"}, "a duckdb source needs table"),
        ({"kind": "postgres", "table": "t"}, "needs url"),
        ({"kind": "spark", "table": "t"}, "needs master"),
        ({"kind": "s3", "path": "x"}, "kind must be one of"),
        ({"kind": "files", "path": "a\x00b"}, "NUL"),
    ],
)
def test_a_spec_says_what_is_missing(fields: dict[str, str], message: str) -> None:
    with pytest.raises(DPDashError, match=message):
        SourceSpec(**fields)  # type: ignore[arg-type]


def test_a_spec_round_trips_and_rejects_unknown_fields() -> None:
    for spec in (
        SourceSpec(kind="files", path="/d/*.parquet"),
        SourceSpec(kind="duckdb", path="w", table="t"),
        SourceSpec(kind="spark", master="local[2]", table="db.t"),
    ):
        assert SourceSpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(ParameterError, match="unknown fields"):
        SourceSpec.from_dict({"kind": "files", "path": "x", "password": "y"})


def test_the_workspace_keeps_a_connection_and_no_bytes(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    spec = SourceSpec(kind="files", path=str(tmp_path / "data"))
    identity = "sha256:" + "cd" * 32
    ws.store_connection(identity, connection=spec, name="visits")
    unit = Facts(rows_per_person=2, id_column="id")
    ws.update(identity, facts=PublicFacts(bounds={"age": (0, 100)}, unit=unit))
    kept = ws.table(identity)
    assert kept is not None and kept.connection == spec and kept.n_bytes == 0 and kept.example is None
    assert kept.facts.unit.rows_per_person == 2
    ws.store_connection(identity, connection=spec, name="another name")  # the same source again: kept as is
    assert ws.table(identity).name == "visits" and ws.table(identity).facts.unit.rows_per_person == 2
    assert not (tmp_path / "ws" / "tables" / ("cd" * 32) / "source.bin").exists()


def test_a_folder_spec_opens_to_the_same_dataset(tmp_path: Path) -> None:
    df = frame()
    (tmp_path / "data").mkdir()
    df.to_parquet(tmp_path / "data" / "one.parquet")
    spec = SourceSpec(kind="files", path=str(tmp_path / "data"))
    first, second = spec.open(), spec.open()
    try:
        assert first.fingerprint() == second.fingerprint() and first.fingerprint().startswith("sha256:")
        assert first.row_count() == len(df)
    finally:
        first.close(), second.close()


@pytest.mark.parametrize("facts", [Facts(), Facts(rows_per_person=2, id_column="id")], ids=["rows", "c=2"])
def test_release_on_a_source_has_the_dataframe_true_answers(facts: Facts) -> None:
    df = frame(seed=1)
    source = open_frame(df)
    try:
        for query, mechanism in [
            (Count(facts=facts), Geometric),
            (Sum(column="age", bounds=(0, 100), facts=facts), Geometric),
            (Mean(column="score", bounds=(0, 100), facts=facts), Laplace),
            (Histogram(column="region", categories=("a", "b"), facts=facts), Laplace),
        ]:
            on_source = release(query, mechanism, source, epsilon=1.0)
            on_frame = release(query, mechanism, df, epsilon=1.0)
            assert on_source.true_values == pytest.approx(on_frame.true_values, rel=1e-9, abs=0)
            assert on_source.report.rows_used == on_frame.report.rows_used  # the rest: test_differential
            assert on_source.dataset_identity == on_source.dataset_fingerprint == source.fingerprint()
            assert on_source.accuracy.method == on_frame.accuracy.method  # a mean's: at the noisy pieces
    finally:
        source.close()


def test_calibrate_reads_only_the_schema_of_a_source() -> None:
    df = frame(seed=2)
    source = open_frame(df)
    try:
        # An integer column with integer bounds takes integer noise, as the DataFrame's does; a float one not.
        ages = Sum(column="age", bounds=(0, 100))
        on_source = calibrate(ages, Geometric, source, epsilon=1.0)
        on_frame = calibrate(ages, Geometric, df, epsilon=1.0)
        assert [p.mechanism for p in on_source] == [p.mechanism for p in on_frame]
        with pytest.raises(ParameterError, match="integer-valued"):
            calibrate(Sum(column="score", bounds=(0, 100)), Geometric, source, epsilon=1.0)
        with pytest.raises(ParameterError, match="needs the rows in memory"):
            swaps = Facts(neighbours=Neighbours.SUBSTITUTE)
            release(Histogram(column="region", categories=("a", "b", "c"), facts=swaps), RandomizedResponse,
                    source, epsilon=1.0)  # fmt: skip
    finally:
        source.close()
