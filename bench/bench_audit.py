"""Benchmark: an empirical privacy audit of 10^6 release-grade trials per side.

Target (issue 8): 10^6 trials of a Laplace count audit in ≤ 10 s on the 2-core machine. Printed with
the ratio against a baseline measured in the same run: numpy drawing the same 2 × 10^6 Laplace values
and sorting them, the least any threshold audit must do (with fast, non-release-grade sampling).
Each figure is the best of 3 runs after one warm-up.

Run: ``.venv/bin/python bench/bench_audit.py`` (or ``make bench``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pandas as pd

from bench.timing import best_of
from dpdash.audit import audit, mechanism_target, query_target
from dpdash.audit.neighbours import worst_case_neighbour
from dpdash.mechanisms import ExponentialMechanism, Geometric, Laplace
from dpdash.queries import Count

N = 1_000_000
TARGET_SECONDS = 10.0


def main() -> int:
    rng = np.random.default_rng(0)
    baseline = best_of(lambda: np.sort(np.concatenate([rng.laplace(0, 1, N), rng.laplace(1, 1, N)])))
    print(f"baseline: numpy draws 2 x 10^6 Laplace values and sorts them: {baseline * 1e3:.0f} ms")
    table = pd.DataFrame({"age": rng.integers(0, 90, 10_000)})
    count = Count()
    neighbour = worst_case_neighbour(count, "laplace", table).table
    rows = [
        (
            "Laplace count query (10 000 rows, +1 person)",
            lambda: audit(query_target(count, "laplace", table, neighbour, epsilon=1.0), trials=N),
        ),
        (
            "Laplace(ε=1, Δ=1) on answers 0 and 1",
            lambda: audit(mechanism_target(Laplace(epsilon=1.0, sensitivity=1.0), 0.0, 1.0), trials=N),
        ),
        (
            "Geometric(ε=1, Δ=1) on counts 0 and 1",
            lambda: audit(mechanism_target(Geometric(epsilon=1.0, sensitivity=1), 0, 1), trials=N),
        ),
        (
            "Exponential mechanism, 5 candidates",
            lambda: audit(
                mechanism_target(
                    ExponentialMechanism(epsilon=1.0, sensitivity=1.0), [0, 1, 1, 1, 1], [1, 0, 0, 0, 0]
                ),
                trials=N,
            ),
        ),
    ]
    print(f"{'audit, 10^6 trials per side':<46} {'time':>8} {'ratio':>8}  target <= {TARGET_SECONDS:g} s")
    failed = False
    for label, run in rows:
        seconds = best_of(run)
        ok = seconds <= TARGET_SECONDS
        failed |= not ok and label.startswith("Laplace count")
        print(f"{label:<46} {seconds:>7.2f}s {seconds / baseline:>7.1f}x  {'ok' if ok else 'MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
