"""Throughput of the exact samplers against numpy's (inexact) ones, measured in the same run.

Run from the repository root: ``.venv/bin/python bench/bench_sampling.py``. For each scale it times
10^6 draws (best of several repeats, tables already built) of

- ``dpdash.sampling.discrete_laplace`` against ``numpy.random.Generator.laplace``, and
- ``dpdash.sampling.discrete_gaussian`` against ``numpy.random.Generator.normal``,

and prints samples per second, the time ratio (ours / numpy; > 1 means slower than numpy) and the
one-off table construction time of the first call at that scale. The targets from the issue are
checked at the end: discrete Laplace ≥ 10^6 samples/s at scale 10, discrete Gaussian ≥ 3·10^5
samples/s at scales 1, 10 and 1000.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.timing import best_of
from dpdash.sampling import discrete_gaussian, discrete_laplace

DRAWS = 1_000_000
REPEATS = 5
SCALES = [1, 10, 1000]
LAPLACE_TARGET = 1_000_000  # samples/s at scale 10
GAUSSIAN_TARGET = 300_000  # samples/s at every scale in SCALES


def main() -> int:
    rng = np.random.default_rng()
    rows = []
    for name, ours, theirs in [
        ("discrete_laplace", discrete_laplace, lambda s: rng.laplace(scale=s, size=DRAWS)),
        ("discrete_gaussian", discrete_gaussian, lambda s: rng.normal(scale=s, size=DRAWS)),
    ]:
        for scale in SCALES:
            start = time.perf_counter()
            ours(scale, 1)  # builds and caches the tables for this scale
            build = time.perf_counter() - start
            t_ours = best_of(lambda ours=ours, scale=scale: ours(scale, DRAWS), REPEATS)
            t_numpy = best_of(lambda theirs=theirs, scale=scale: theirs(scale), REPEATS)
            rows.append((name, scale, DRAWS / t_ours, DRAWS / t_numpy, t_ours / t_numpy, build))

    cpus = os.cpu_count()
    print(f"{DRAWS:,} draws a call, best of {REPEATS}; {cpus} CPUs, numpy {np.__version__}")
    header = (
        f"{'sampler':<18} {'scale':>6} {'exact /s':>14} {'numpy /s':>14} {'ratio':>7} {'table':>9}"
    )
    print(header)
    print("-" * len(header))
    for name, scale, ours_rate, numpy_rate, ratio, build in rows:
        print(
            f"{name:<18} {scale:>6} {ours_rate:>14,.0f} {numpy_rate:>14,.0f} {ratio:>6.2f}x "
            f"{build * 1e3:>7.1f}ms"
        )
    print("ratio = exact time / numpy time for the same number of draws (numpy is not exact).")

    laplace_10 = next(r[2] for r in rows if r[0] == "discrete_laplace" and r[1] == 10)
    gaussian_min = min(r[2] for r in rows if r[0] == "discrete_gaussian")
    ok_laplace = laplace_10 >= LAPLACE_TARGET
    ok_gaussian = gaussian_min >= GAUSSIAN_TARGET
    print(
        f"target discrete_laplace(10) >= {LAPLACE_TARGET:,}/s: {laplace_10:,.0f}/s "
        f"{'ok' if ok_laplace else 'MISSED'}"
    )
    print(
        f"target discrete_gaussian >= {GAUSSIAN_TARGET:,}/s at scales {SCALES}: "
        f"slowest {gaussian_min:,.0f}/s {'ok' if ok_gaussian else 'MISSED'}"
    )
    return 0 if ok_laplace and ok_gaussian else 1


if __name__ == "__main__":
    sys.exit(main())
