"""SmartNoise SQL's worker for bench_peers.py (a venv of its own): ``snsql.from_df`` on the panel read once
per panel with pandas (the loading is timed apart), a fresh connection with ``Privacy(epsilon=ε, delta=0)``
per release.

Unit: table metadata ``row_privacy: false``, ``pid`` the ``private_id``, ``max_ids: c`` with
``sample_max_ids: true`` (each person's rows beyond c dropped by a random ``ROW_NUMBER``), so each person
adds at most c rows; ``censor_dims: false`` (the 8 categories are public: no threshold on the groups, and
no δ). ``wage`` declared on [lower, upper] (clamped). Noise: SmartNoise's ``Laplace`` mechanism, OpenDP's
continuous Laplace on floats, for every column; a count is then made an integer by ``int()``, which rounds
towards zero (its mechanism map names the counts' mechanism ``discrete_laplace``, but the class that adds
the noise is this one).
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pandas as pd
import snsql
from protocol import in_order, serve

SQL = {
    "count": "SELECT COUNT(*) AS n FROM bench.panel",
    "histogram": "SELECT industry, COUNT(*) AS n FROM bench.panel GROUP BY industry",
    "sum": "SELECT SUM(wage) AS s FROM bench.panel",
}


def connect(frame: pd.DataFrame, spec: dict[str, Any]) -> Any:
    lower, upper = spec["bounds"]
    table = {
        "row_privacy": False,
        "max_ids": spec["rows_per_person"],
        "sample_max_ids": True,
        "censor_dims": False,
        "pid": {"type": "int", "private_id": True},
        "industry": {"type": "string"},
        "wage": {"type": "float", "lower": float(lower), "upper": float(upper)},
    }
    privacy = snsql.Privacy(epsilon=spec["epsilon"], delta=0.0)
    return snsql.from_df(frame, privacy=privacy, metadata={"": {"bench": {"panel": table}}})


def release(frame: pd.DataFrame, spec: dict[str, Any]) -> list[float]:
    _header, *rows = connect(frame, spec).execute(SQL[spec["query"]])
    if spec["query"] == "histogram":
        return in_order({key: n for key, n in rows}, spec["categories"])
    return [rows[0][0]]


def describe(frame: pd.DataFrame, spec: dict[str, Any]) -> dict[str, Any]:
    # The rewritten query's mechanisms (SmartNoise's private helpers) carry the scale it will use.
    conn = connect(frame.head(100), spec)
    subquery, _ = conn._rewrite_ast(conn.parse_query_string(SQL[spec["query"]]))
    ((name, mechanism),) = conn._get_mechanism_map(subquery).items()
    label = f"{type(mechanism).__name__} (labelled {mechanism.mechanism.name})"
    return {
        "text": f"{name}: {label}, scale {mechanism.scale:.6g}",
        "law": "laplace" if spec["query"] == "sum" else "laplace, then int()",
        "scale": float(mechanism.scale),
    }


if __name__ == "__main__":
    serve(
        f"smartnoise-sql {version('smartnoise-sql')}, opendp {version('opendp')}",
        lambda path, spec: pd.read_parquet(path, columns=["pid", "industry", "wage"]),
        release,
        describe,
    )
