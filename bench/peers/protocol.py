"""The workers' side of bench_peers.py: read the spec, load each panel, time each release, print the answer.

Every worker (``bench/peers/<tool>_worker.py``) runs in its own process, in its tool's interpreter (the
project's venv for dpdash, a venv of its own for each peer), and imports nothing from dpdash or the
bench: only this file, which needs the standard library alone.

The spec (a JSON object, the worker's one argument):
    query: "count", "histogram" or "sum"; files: the Parquet panels (pid, industry, wage); repeats:
    releases per panel; epsilon; rows_per_person (c); categories (the public histogram keys, in order);
    bounds: [lower, upper] of the summed column; max_rows: a public bound on any panel's number of rows.

The answer (the worker's one line of output): version; noise, how the tool says it adds noise (``text``, its
own words; ``law``, one of ``LAWS``; ``scale``, the Laplace scale b); answers (per panel, per release, the
released values: one for a count or sum, one per category in the order given for a histogram); seconds
(the wall time of each release) and load_seconds (per panel).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

QUERIES = ("count", "histogram", "sum")
#: The noise laws the tools use here: the two-sided geometric of scale b (P(k) ∝ exp(−|k|/b)), the continuous
#: Laplace of scale b, and the continuous Laplace then ``int()`` (rounded towards zero: SmartNoise's counts).
LAWS = ("integer laplace", "laplace", "laplace, then int()")


def serve(
    version: str,
    load: Callable[[str, dict[str, Any]], Any],
    release: Callable[[Any, dict[str, Any]], list[float]],
    describe: Callable[[Any, dict[str, Any]], dict[str, Any]],
) -> None:
    """Run the spec in ``sys.argv[1]``: for each panel ``load(path, spec)`` (timed apart), then ``repeats``
    timed calls of ``release(data, spec)``; ``describe(data, spec)`` (untimed, once) says what noise the
    tool adds: ``{"text": ..., "law": ..., "scale": ...}``. Prints the answer as one JSON line on stdout."""
    spec = json.loads(sys.argv[1])
    if spec["query"] not in QUERIES:
        raise SystemExit(f"query must be one of {QUERIES}, got {spec['query']!r}")
    answers: list[list[list[float]]] = []
    seconds: list[float] = []
    load_seconds: list[float] = []
    noise: dict[str, Any] = {}
    for path in spec["files"]:
        start = time.perf_counter()
        data = load(path, spec)
        load_seconds.append(time.perf_counter() - start)
        if not noise:
            noise = describe(data, spec)
            if noise["law"] not in LAWS:
                raise SystemExit(f"noise law must be one of {LAWS}, got {noise['law']!r}")
        releases = []
        for _ in range(spec["repeats"]):
            start = time.perf_counter()
            values = [float(v) for v in release(data, spec)]
            seconds.append(time.perf_counter() - start)
            releases.append(values)
        answers.append(releases)
    answer = {
        "version": version,
        "noise": noise,
        "answers": answers,
        "seconds": seconds,
        "load_seconds": load_seconds,
    }
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def in_order(pairs: dict[Any, float], categories: list[str]) -> list[float]:
    """A histogram's released cells in the order of ``categories`` (a key the tool did not return: NaN)."""
    return [float(pairs.get(category, float("nan"))) for category in categories]
