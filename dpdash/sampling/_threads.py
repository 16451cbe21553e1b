"""Split large sampling calls across threads (the heavy numpy work and os.urandom release the GIL).

Draws from different threads are independent (each thread reads its own bytes from the kernel
CSPRNG) and identically distributed, so concatenating them gives ``n`` i.i.d. draws. Calls with an
injected bit source stay on one thread so that tests are deterministic.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dpdash.sampling.bits import BitSource

__all__ = ["MIN_PARALLEL", "sample_in_threads"]

#: Calls with fewer draws than this stay on the calling thread.
MIN_PARALLEL = 2**17

_WORKERS = max(1, min(4, os.cpu_count() or 1))
_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0


def _executor() -> ThreadPoolExecutor:
    """The shared pool, created on first use (and anew in a forked child: its threads are gone)."""
    global _pool, _pool_pid
    with _lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="dpdash-sampling")
            _pool_pid = os.getpid()
        return _pool


def sample_in_threads(
    sample: Callable[[int, BitSource | None], np.ndarray], n: int, bits: BitSource | None
) -> np.ndarray:
    """``sample(n, bits)``, computed in up to one chunk per CPU for large ``n`` and OS randomness.

    The first draw is made on the calling thread, which also builds any table ``sample`` caches, so
    worker threads never build the same table twice.
    """
    if bits is not None or n < MIN_PARALLEL or _WORKERS == 1:
        return sample(n, bits)
    first = sample(1, None)
    rest = n - 1
    sizes = [rest // _WORKERS + (1 if i < rest % _WORKERS else 0) for i in range(_WORKERS)]
    chunks = list(_executor().map(lambda k: sample(k, None), sizes))
    return np.concatenate([first, *chunks])
