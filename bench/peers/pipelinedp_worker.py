"""PipelineDP's worker for bench_peers.py (a venv of its own): ``DPEngine`` on the ``LocalBackend`` over the
panel's rows, read once per panel with pandas into (pid, industry, wage) tuples (the loading is timed apart).

Unit: ``max_contributions=c``: PipelineDP samples c of each person's rows uniformly across all partitions
(``SamplingPerPrivacyIdContributionBounder``), which is the unit "at most c rows per person" itself. The
per-partition pair (``max_partitions_contributed``, ``max_contributions_per_partition``) = (2, 1) or (1, 2)
would also bound a person to 2 rows, but keeps at most one row per category, or one category, and so
biases the histogram away from a uniform choice of 2 rows. Public partitions: the 8 categories for the
histogram, one constant key for the count and the sum. Noise: ``NoiseKind.LAPLACE`` (continuous Laplace,
also on the counts), ε through a ``NaiveBudgetAccountant(total_epsilon=ε, total_delta=0)`` per release.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pandas as pd
import pipeline_dp
from protocol import in_order, serve


def load(path: str, spec: dict[str, Any]) -> list[tuple[Any, ...]]:
    frame = pd.read_parquet(path, columns=["pid", "industry", "wage"])
    return list(zip(frame["pid"].tolist(), frame["industry"].tolist(), frame["wage"].tolist(), strict=True))


def aggregate(rows: list[tuple[Any, ...]], spec: dict[str, Any]) -> list[tuple[Any, Any]]:
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=spec["epsilon"], total_delta=0.0)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    bounds: dict[str, float] = {}
    if spec["query"] == "sum":
        metric = pipeline_dp.Metrics.SUM
        bounds = {"min_value": float(spec["bounds"][0]), "max_value": float(spec["bounds"][1])}
    else:
        metric = pipeline_dp.Metrics.COUNT
    params = pipeline_dp.AggregateParams(
        metrics=[metric],
        noise_kind=pipeline_dp.NoiseKind.LAPLACE,
        max_contributions=spec["rows_per_person"],
        output_noise_stddev=True,
        **bounds,
    )
    if spec["query"] == "histogram":
        partition, public = (lambda row: row[1]), list(spec["categories"])
    else:
        partition, public = (lambda row: 0), [0]
    extractors = pipeline_dp.DataExtractors(
        privacy_id_extractor=lambda row: row[0],
        partition_extractor=partition,
        value_extractor=lambda row: row[2],
    )
    result = engine.aggregate(rows, params, extractors, public_partitions=public)
    accountant.compute_budgets()
    return list(result)


def release(rows: list[tuple[Any, ...]], spec: dict[str, Any]) -> list[float]:
    out = aggregate(rows, spec)
    field = "sum" if spec["query"] == "sum" else "count"
    cells = {key: getattr(metrics, field) for key, metrics in out}
    if spec["query"] == "histogram":
        return in_order(cells, spec["categories"])
    return [cells[0]]


def describe(rows: list[tuple[Any, ...]], spec: dict[str, Any]) -> dict[str, Any]:
    field = "sum" if spec["query"] == "sum" else "count"
    _, metrics = aggregate(rows[:1000], spec)[0]
    stddev = getattr(metrics, f"{field}_noise_stddev")
    scale = stddev / 2**0.5  # a Laplace of scale b has sd b·√2
    return {"text": f"Laplace, noise sd {stddev:.6g}", "law": "laplace", "scale": scale}


if __name__ == "__main__":
    serve(f"pipeline-dp {version('pipeline-dp')}", load, release, describe)
