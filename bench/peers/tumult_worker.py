"""Tumult Analytics' worker for bench_peers.py (a venv of its own; Spark in local mode, ``local[2]``, in this
process's JVM): ``spark.read.parquet`` once per panel (lazy: Spark reads the file at each release).

Unit: ``protected_change=AddRowsWithID(id_column="pid")`` (one person's rows added or removed) and the
query's ``enforce(MaxRowsPerID(c))``, which keeps c of each person's rows ordered by a hash of the row
(a fixed function of the rows, as dpdash's). A fresh ``Session`` with ``PureDPBudget(ε)`` per release.
Noise, as Tumult chooses it for pure DP: geometric for the counts, Laplace for the float sum.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version
from typing import Any

# Spark's Python workers must run this venv's interpreter, not the first python on the PATH.
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable

from protocol import in_order, serve
from pyspark.sql import SparkSession
from tmlt.analytics import AddRowsWithID, KeySet, MaxRowsPerID, PureDPBudget, QueryBuilder, Session

_spark: list[SparkSession] = []


def spark(spec: dict[str, Any]) -> SparkSession:
    if not _spark:
        scratch = spec["scratch"]
        session = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "2g")
            .config("spark.sql.warehouse.dir", os.path.join(scratch, "spark-warehouse"))
            .config("spark.local.dir", os.path.join(scratch, "spark-local"))
            .getOrCreate()
        )
        session.sparkContext.setLogLevel("ERROR")
        _spark.append(session)
    return _spark[0]


def query(spec: dict[str, Any]) -> Any:
    builder = QueryBuilder("panel").enforce(MaxRowsPerID(spec["rows_per_person"]))
    if spec["query"] == "count":
        return builder.count()
    if spec["query"] == "histogram":
        return builder.groupby(KeySet.from_dict({"industry": list(spec["categories"])})).count()
    lower, upper = spec["bounds"]
    return builder.sum("wage", low=float(lower), high=float(upper))


def session(frame: Any, spec: dict[str, Any]) -> Session:
    return Session.from_dataframe(
        privacy_budget=PureDPBudget(spec["epsilon"]),
        source_id="panel",
        dataframe=frame,
        protected_change=AddRowsWithID(id_column="pid"),
    )


def release(frame: Any, spec: dict[str, Any]) -> list[float]:
    out = session(frame, spec).evaluate(query(spec), PureDPBudget(spec["epsilon"])).toPandas()
    if spec["query"] == "histogram":
        return in_order(dict(zip(out["industry"], out["count"], strict=True)), spec["categories"])
    return [out.iloc[0, 0]]


def describe(frame: Any, spec: dict[str, Any]) -> dict[str, Any]:
    # Session._noise_info is Tumult's own (private) account of the noise a query will get.
    (info,) = session(frame, spec)._noise_info(query(spec), PureDPBudget(spec["epsilon"]))
    name = info["noise_mechanism"].name.lower()
    return {
        "text": f"{name}, scale {info['noise_parameter']}",
        "law": "integer laplace" if name == "geometric" else "laplace",
        "scale": float(info["noise_parameter"]),
    }


if __name__ == "__main__":
    serve(
        f"tmlt.analytics {version('tmlt.analytics')}, tmlt.core {version('tmlt.core')}, "
        f"pyspark {version('pyspark')}",
        lambda path, spec: spark(spec).read.parquet(path),
        release,
        describe,
    )
