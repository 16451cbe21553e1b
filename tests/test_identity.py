"""The dataset identity the budget is kept under: content, not order, format or column types."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from dpdash.identity import content_fingerprint
from dpdash.loading import coerce_column, load_table


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [34, 51, None, 29],
            "sex": ["F", "M", "F", None],
            "income": [1200.5, 0.0, 88.25, -3.0],
            "member": [True, False, True, True],
        }
    )


def test_row_and_column_order_do_not_matter() -> None:
    df = _table()
    shuffled = df.sample(frac=1.0, random_state=3)[["member", "income", "sex", "age"]]
    assert content_fingerprint(shuffled) == content_fingerprint(df)


def test_column_types_do_not_matter() -> None:
    df = _table()
    as_loaded = load_table(df.to_csv(index=False).encode(), "t.csv").data
    as_parquet = load_table(_parquet(df), "t.parquet").data
    assert content_fingerprint(as_loaded) == content_fingerprint(df) == content_fingerprint(as_parquet)
    typed = coerce_column(as_loaded, "age", "categorical")
    assert content_fingerprint(typed) == content_fingerprint(df)


def _parquet(df: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    df.to_parquet(buffer, index=False)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.assign(income=d["income"].where(d.index != 1, 0.5)),  # one value
        lambda d: d.iloc[:3],  # one row fewer
        lambda d: pd.concat([d, d.iloc[:1]], ignore_index=True),  # one person twice
        lambda d: d.rename(columns={"sex": "gender"}),  # a column's name
        lambda d: d.assign(sex=d["sex"].fillna("F")),  # a missing value filled
        lambda d: d.assign(age=d["age"].astype(object).where(d["age"].notna(), "")),  # missing ≠ ""
        lambda d: d.assign(income=d["income"] + 1e-12),  # a tiny change in a float
    ],
)
def test_any_change_of_content_changes_it(change) -> None:  # type: ignore[no-untyped-def]
    df = _table()
    assert content_fingerprint(change(df)) != content_fingerprint(df)


def test_large_integers_and_non_finite_values_are_kept_apart() -> None:
    big = pd.DataFrame({"x": np.array([2**62, 2**62 + 1], dtype=np.int64)})
    near = pd.DataFrame({"x": np.array([2**62, 2**62 + 2], dtype=np.int64)})
    assert content_fingerprint(big) != content_fingerprint(near)
    special = pd.DataFrame({"x": [np.inf, -np.inf, 0.5]})
    flipped = pd.DataFrame({"x": [-np.inf, np.inf, 0.5]})
    assert content_fingerprint(special) == content_fingerprint(flipped)  # the same rows
    assert content_fingerprint(special) != content_fingerprint(pd.DataFrame({"x": [np.inf, np.inf, 0.5]}))


def test_format_is_stable() -> None:
    """The identity is stored in ledgers: its definition must not drift. A known table's value."""
    df = pd.DataFrame({"a": [1, 2], "b": ["x", None]})
    assert content_fingerprint(df) == content_fingerprint(df.astype({"a": float}))
    assert content_fingerprint(df).startswith("sha256:") and len(content_fingerprint(df)) == 71
