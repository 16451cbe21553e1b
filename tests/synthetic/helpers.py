"""A small structured table for the synthetic-table tests: two strongly associated categorical columns,
a numeric column that depends on one of them, and an id column (seeded)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpdash.datasets import PublicFacts
from dpdash.facts import Facts

ID = "person"
COLOURS = ("red", "green", "blue", "grey")
SHAPES = ("round", "square", "flat", "tall")


def table(seed: int, rows: int = 20_000) -> pd.DataFrame:
    """``shape`` follows ``colour`` (the same index) for 85% of the rows, else uniform; ``size`` is larger
    for the first two colours; a few missing values and values outside the declared facts."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(len(COLOURS), rows, p=[0.4, 0.3, 0.2, 0.1])
    shape = np.where(rng.random(rows) < 0.85, colour, rng.integers(0, len(SHAPES), rows))
    size = rng.normal(np.where(colour < 2, 60.0, 35.0), 10.0)
    df = pd.DataFrame({
        ID: rng.integers(0, rows // 2, rows),
        "colour": np.array(COLOURS, dtype=object)[colour],
        "shape": np.array(SHAPES, dtype=object)[shape],
        "size": size,
    })  # fmt: skip
    df.loc[df.index[:5], "colour"] = "purple"  # outside the declared categories: "(other)"
    df.loc[df.index[5:8], "size"] = np.nan
    return df


def facts(unit: Facts | None = None) -> PublicFacts:
    return PublicFacts(
        bounds={"size": (0, 100)},
        categories={"colour": list(COLOURS), "shape": list(SHAPES)},
        unit=unit if unit is not None else Facts(),
    )
