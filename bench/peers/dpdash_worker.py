"""dpdash's worker for bench_peers.py (the project's venv): ``dpdash.release`` on the Parquet file opened
in place (``open_files``: DuckDB reads it at each release), with the unit
``Facts(rows_per_person=c, id_column="pid", bounding=…)``: ``"sample"`` (each person's c rows a uniform
choice, a fixed function of their rows; geometric noise for the count and histogram, Laplace for the sum)
or ``"weight"`` (each of a person's n rows counts min(1, c/n), the expectation of that choice; geometric
noise for the count, whose answer Σ min(n, c) stays whole, Laplace for the fractional histogram and sum).
Every noise is drawn by the release-grade samplers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol import serve

import dpdash
from dpdash.engines import open_files
from dpdash.facts import Facts
from dpdash.mechanisms import Geometric, Laplace
from dpdash.queries import Count, Histogram, Sum


def query(spec: dict[str, Any]) -> tuple[Any, type]:
    bounding = spec.get("bounding", "sample")
    facts = Facts(rows_per_person=spec["rows_per_person"], id_column="pid", bounding=bounding)
    if spec["query"] == "count":
        return Count(facts=facts), Geometric
    if spec["query"] == "histogram":
        histogram = Histogram(column="industry", categories=spec["categories"], outside="drop", facts=facts)
        return histogram, (Laplace if bounding == "weight" else Geometric)
    return Sum(column="wage", bounds=tuple(spec["bounds"]), facts=facts), Laplace


def release(source: Any, spec: dict[str, Any]) -> list[float]:
    spec_query, mechanism = query(spec)
    return list(dpdash.release(spec_query, mechanism, source, epsilon=spec["epsilon"]).values)


def describe(source: Any, spec: dict[str, Any]) -> dict[str, Any]:
    spec_query, mechanism = query(spec)
    sensitivity = spec_query.l1_sensitivity
    return {
        "text": f"{mechanism.__name__}(epsilon={spec['epsilon']}, sensitivity={sensitivity})",
        "law": "integer laplace" if mechanism is Geometric else "laplace",
        "scale": sensitivity / spec["epsilon"],
    }


if __name__ == "__main__":
    serve("this checkout", lambda path, spec: open_files(path), release, describe)
