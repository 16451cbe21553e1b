"""MST recovers the shape of a structured table at ε = 1; a preview is seeded and reproducible, a release
is a fresh draw; bad input gets a clear message."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpdash
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.synthetic import quality, synthesize, tvd
from tests.synthetic.helpers import COLOURS, ID, SHAPES, facts, table

COLUMNS = ["colour", "shape", "size"]


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return table(21, rows=20_000)


@pytest.fixture(scope="module")
def small(df: pd.DataFrame) -> pd.DataFrame:
    return df.iloc[:3000].reset_index(drop=True)


@pytest.fixture(scope="module")
def seeded(small: pd.DataFrame):  # type: ignore[no-untyped-def]
    """A preview of ``small`` with seed 9, drawn once for the tests that compare another draw with it."""
    return synthesize(small, facts(), epsilon=1.0, delta=1e-6, rng=9, columns=COLUMNS)


@pytest.mark.slow
def test_mst_keeps_the_marginals_and_the_association(df: pd.DataFrame) -> None:
    """At ε = 1, δ = 1e-6 (ρ ≈ 0.0244) each of the 3 one-way marginals gets ρ/9, σ = 1/√(2ρ/9) ≈ 13.6 per
    cell; over K ≤ 17 cells the noise moves E Σ|Z| ≈ K·σ·√(2/π) ≈ 185 rows of 20 000, a TVD near 0.005, to
    which the model fit and the rounding of rows add little. The bound 0.02 leaves a factor 4 for the
    tail (a TVD of 0.02 needs Σ|Z| ≈ 800 rows, over 20 standard deviations of Σ|Z| above its mean).
    The associated pair: an independent draw from the true one-way marginals is off by TVD ≈ 0.6
    (85% of the rows on the diagonal); MST measures that pair (it is the tree's heaviest edge), and must
    be within 0.05 (σ ≈ 11 on 25 cells: noise TVD ≈ 0.006)."""
    s = synthesize(df, facts(), epsilon=1.0, delta=1e-6, rng=5, columns=COLUMNS)
    q = quality(df, s)
    assert max(q.one_way.values()) < 0.02, q.one_way
    assert ("colour", "shape") in q.two_way
    assert q.two_way[("colour", "shape")] < 0.05
    rng = np.random.default_rng(0)
    independent = pd.DataFrame({c: rng.permutation(df[c].to_numpy()) for c in COLUMNS})
    codes_true, codes_ind = s.domain.codes(df), s.domain.codes(independent)
    shape = (len(COLOURS) + 1, len(SHAPES) + 1)
    joint = [np.bincount(c["colour"] * shape[1] + c["shape"], minlength=shape[0] * shape[1])
             for c in (codes_true, codes_ind)]  # fmt: skip
    assert tvd(*joint) > 0.5 > 10 * q.two_way[("colour", "shape")]
    # The association matrices: Cramér's V of colour × shape is strong on both sides and close.
    v_true = q.association_true.loc["colour", "shape"]
    assert v_true > 0.7 and abs(q.association_difference.loc["colour", "shape"]) < 0.05


@pytest.mark.slow
def test_preview_is_seeded_and_a_release_is_a_fresh_draw(small: pd.DataFrame, seeded) -> None:  # type: ignore[no-untyped-def]
    a = seeded
    b = synthesize(small, facts(), epsilon=1.0, delta=1e-6, rng=9, columns=COLUMNS)
    assert not a.release_grade and a.measurements == b.measurements and a.table.equals(b.table)
    released = dpdash.synthesize(small, facts(), epsilon=1.0, delta=1e-6, columns=COLUMNS)
    assert released.release_grade and all(m.release_grade for m in released.measurements)
    assert released.measurements != a.measurements and not released.table.equals(a.table)
    assert list(released.table.columns) == COLUMNS


def test_rows_and_one_column(df: pd.DataFrame) -> None:
    s = synthesize(df.iloc[:2000], facts(), epsilon=2.0, delta=1e-6, rng=1, columns=["colour"], rows=123)
    assert len(s.table) == 123 and s.selections == () and len(s.measurements) == 1
    assert set(s.table["colour"]) <= {*COLOURS, "(other)"}


def test_default_columns_leave_out_the_id_column(df: pd.DataFrame) -> None:
    from dpdash.facts import Facts

    s = synthesize(df.iloc[:2000], facts(Facts(id_column=ID)), epsilon=1.0, delta=1e-6, rng=2)
    assert list(s.table.columns) == COLUMNS


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"method": "gan"}, ParameterError, "method"),
        ({"method": "aim"}, ParameterError, "needs a workload"),
        ({"workload": [("colour", "shape")]}, ParameterError, "workload is for method='aim'"),
        ({"epsilon": -1.0}, ParameterError, "epsilon"),
        ({"delta": 0.0}, ParameterError, "delta"),
        ({"rows": 0}, ParameterError, "rows"),
        ({"rng": "seed"}, ParameterTypeError, "rng"),
        ({"columns": ["colour", "weight"]}, ParameterError, "no declared bounds or categories"),
    ],
)
def test_bad_input_is_refused_clearly(df: pd.DataFrame, kwargs: dict, error: type, message: str) -> None:
    arguments = {"epsilon": 1.0, "delta": 1e-6, "rng": 0, "columns": COLUMNS, **kwargs}
    with pytest.raises(error, match=message):
        synthesize(df.iloc[:100], facts(), **arguments)


def test_weighted_bounding_is_refused(df: pd.DataFrame) -> None:
    from dpdash.facts import Facts

    unit = Facts(rows_per_person=2, id_column=ID, bounding="weight")
    with pytest.raises(ParameterError, match="bounding='sample'"):
        synthesize(df.iloc[:500], facts(unit), epsilon=1.0, delta=1e-6, rng=0, columns=COLUMNS)


def test_a_source_gives_the_dataframes_preview(small: pd.DataFrame, seeded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The same seed on the table as a Parquet file (DuckDB) and as a DataFrame: the same true counts, so
    the same noisy marginals, choices and rows; the budget identity is the source's fingerprint."""
    from dpdash.engines import open_files

    small.to_parquet(tmp_path / "t.parquet")
    source = open_files(tmp_path / "t.parquet")
    a = seeded
    b = synthesize(source, facts(), epsilon=1.0, delta=1e-6, rng=9, columns=COLUMNS)
    assert a.measurements == b.measurements and a.selections == b.selections
    assert a.table.equals(b.table)
    assert b.dataset_identity == source.fingerprint()
