"""The benchmarks' one timing helper."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(function: Callable[[], object], repeats: int = 3) -> float:
    """The fastest of ``repeats`` timed calls, in seconds, after one untimed warm-up call (which builds
    caches: sampler tables, release plans, imports)."""
    function()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best
