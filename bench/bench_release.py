"""Benchmark: the cost of a release-grade release of 10^6 answers, against numpy's plain Laplace draw.

Target (issue 3): a 10^6-value release costs no more than 50× numpy's ``Generator.laplace`` of 10^6
values, measured in the same run. Each figure is the best of 5 runs, after one warm-up call that builds
the samplers' tables and the release plan (both cached per parameter).

Run: ``.venv/bin/python bench/bench_release.py`` (or ``make bench``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.timing import best_of
from dpdash.mechanisms import (
    DiscreteGaussian,
    Gaussian,
    Geometric,
    Laplace,
    Staircase,
)

N = 1_000_000
TARGET_RATIO = 50.0


def main() -> int:
    rng = np.random.default_rng(0)
    real = rng.normal(100.0, 10.0, N)
    counts = rng.integers(0, 1000, N)
    baseline = best_of(lambda: rng.laplace(0.0, 1.0, N), repeats=5)
    print(f"baseline: numpy Generator.laplace, 10^6 draws: {baseline * 1e3:.1f} ms")
    print(f"{'release of 10^6 answers':<46} {'time':>9} {'ratio':>8}  target <= {TARGET_RATIO:g}x")
    rows = [
        ("Laplace(ε=1, Δ=1), real answers", Laplace(epsilon=1.0, sensitivity=1.0), real),
        (
            "Gaussian(ε=1, δ=1e-5, Δ=1), real answers",
            Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0),
            real,
        ),
        ("Staircase(ε=1, Δ=1), real answers", Staircase(epsilon=1.0, sensitivity=1.0), real),
        ("Geometric(ε=1, Δ=1), counts", Geometric(epsilon=1.0, sensitivity=1), counts),
        (
            "DiscreteGaussian(ε=1, δ=1e-5, Δ=1), counts",
            DiscreteGaussian(epsilon=1.0, delta=1e-5, sensitivity=1),
            counts,
        ),
    ]
    failed = False
    for label, mechanism, values in rows:
        seconds = best_of(lambda m=mechanism, v=values: m.release(v), repeats=5)
        ratio = seconds / baseline
        failed |= ratio > TARGET_RATIO
        verdict = "ok" if ratio <= TARGET_RATIO else "MISSED"
        print(f"{label:<46} {seconds * 1e3:>7.1f}ms {ratio:>7.1f}x  {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
