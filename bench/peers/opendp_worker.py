"""OpenDP's worker for bench_peers.py (a venv of its own with ``opendp[polars]``): the Polars context on
the Parquet file scanned lazily (``pl.scan_parquet``: Polars reads it at each release).

Unit: ``privacy_unit=dp.unit_of(contributions=1, identifier="pid")`` (one person's rows added or removed),
then ``truncate_per_group(c)``, which keeps c of each person's rows chosen by a random shuffle. A fresh
``Context`` (ε spent once, ``split_evenly_over=1``) per release, as a user releasing one query would write
it; ``release()`` includes the Context's calibration (a binary search over the noise scale). Counts: integer
Laplace; the float sum: Laplace, which OpenDP calibrates with a margin ``max_length`` (the public bound on the
table's rows, required for a float sum) so that the floating-point error of the sum is paid for.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import opendp.prelude as dp
import polars as pl
from protocol import in_order, serve

dp.enable_features("contrib")


def query(lf: pl.LazyFrame, spec: dict[str, Any]) -> Any:
    context = dp.Context.compositor(
        data=lf,
        privacy_unit=dp.unit_of(contributions=1, identifier="pid"),
        privacy_loss=dp.loss_of(epsilon=spec["epsilon"]),
        split_evenly_over=1,
        margins=[dp.polars.Margin(by=[], max_length=spec["max_rows"])],
    )
    truncated = context.query().truncate_per_group(spec["rows_per_person"])
    if spec["query"] == "count":
        return truncated.select(dp.len(signed=True))
    if spec["query"] == "histogram":
        keys = pl.LazyFrame({"industry": spec["categories"]})
        return truncated.group_by("industry").agg(dp.len(signed=True)).with_keys(keys)
    lower, upper = spec["bounds"]
    return truncated.select(pl.col("wage").fill_null(0.0).dp.sum((float(lower), float(upper))))


def release(lf: pl.LazyFrame, spec: dict[str, Any]) -> list[float]:
    frame = query(lf, spec).release().collect()
    if spec["query"] == "histogram":
        return in_order(dict(zip(frame["industry"], frame["len"], strict=True)), spec["categories"])
    return [frame.item()]


def describe(lf: pl.LazyFrame, spec: dict[str, Any]) -> dict[str, Any]:
    (row,) = query(lf, spec).summarize().iter_rows(named=True)
    return {
        "text": f"{row['aggregate']}: {row['distribution']}, scale {row['scale']:.6g}",
        "law": "integer laplace" if row["distribution"] == "Integer Laplace" else "laplace",
        "scale": row["scale"],
    }


if __name__ == "__main__":
    serve(
        f"opendp {version('opendp')}, polars {version('polars')}",
        lambda path, spec: pl.scan_parquet(path),
        release,
        describe,
    )
