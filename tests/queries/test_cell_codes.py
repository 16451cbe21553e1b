"""``cell_codes`` looks each distinct value up once; its cells must be those of a lookup per row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpdash.queries.histogram import cell_codes

CASES = {
    "strings with missing and outside": (
        pd.Series(["a", None, "b", "zz", "a", np.nan], dtype="string"), ("a", "b", "c")),
    "python-object strings": (pd.Series(["b", "b", "x", None], dtype=object), ("a", "b")),
    "whole numbers stored as floats": (pd.Series([1.0, 2.0, np.nan, 3.0, -0.0]), (0, 1, 2)),
    "booleans": (pd.Series([True, False, None], dtype=object), (False, True)),
    "a categorical column": (pd.Series(pd.Categorical(["y", "x", None, "w"], categories=["w", "x", "y"])),
                             ("x", "y")),
    "nothing but missing": (pd.Series([None, None], dtype=object), ("a",)),
    "no rows": (pd.Series([], dtype=object), ("a",)),
}  # fmt: skip


@pytest.mark.parametrize("outside", ["other", "drop"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_cells_are_those_of_a_lookup_per_row(case: str, outside: str) -> None:
    series, categories = CASES[case]
    cells = cell_codes(series, categories=categories, outside=outside)
    missing = series.isna().to_numpy()
    found = [None if gone else next((i for i, c in enumerate(categories) if c == v), None)
             for v, gone in zip(series.tolist(), missing, strict=True)]  # fmt: skip
    beyond = len(categories) if outside == "other" else -1
    per_row = [-1 if gone else beyond if i is None else i for i, gone in zip(found, missing, strict=True)]
    assert cells.codes.tolist() == per_row
    assert cells.missing == int(missing.sum())
    assert cells.outside == sum(1 for i, gone in zip(found, missing, strict=True) if not gone and i is None)
