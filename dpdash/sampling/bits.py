"""Randomness from the operating system, as words, lazy uniforms and uniform integers.

Every random bit in ``dpdash.sampling`` comes from ``os.urandom`` (the kernel CSPRNG: getrandom(2)
on Linux); numpy's generators are never used for sampling. A *bit source* is a callable
``bits(n) -> bytes`` returning ``n`` bytes; it is ``os.urandom`` unless a test injects another one
through a sampler's private ``_bits=`` argument. The public API has no seed.

Uniforms. The samplers compare a uniform real V in [0, 1) with thresholds. V is never materialised:
its binary expansion is read lazily, most significant bits first:

- bits 1–16: one little-endian ``uint16`` word (2 bytes) per sample, drawn for every sample;
- bits 17–64: the top 48 bits of one little-endian ``uint64`` word (8 bytes), drawn only for the few
  samples the first 16 bits do not settle;
- bits 65 on: further little-endian ``uint64`` words, 64 bits each, drawn one at a time by
  :class:`LazyUniform` for the (probability ≈ 2^−60) samples that the first 64 bits do not settle.

Since the bits are independent and uniform, V is exactly uniform, and a comparison "V < T" that is
decided from a prefix of V (because the whole interval of reals with that prefix lies on one side of
T) equals the comparison made with infinitely many bits.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable

import numpy as np

from dpdash.sampling import _params
from dpdash.sampling.exact_math import Bounds

__all__ = [
    "MAX_UPPER",
    "BitSource",
    "LazyUniform",
    "random_u16",
    "random_u64",
    "uniform_integers",
]

#: A callable returning that many random bytes (``os.urandom``, or a test's deterministic source).
BitSource = Callable[[int], bytes]

#: The largest ``upper`` for :func:`uniform_integers`: results must fit in int64.
MAX_UPPER = 2**63


def _source(bits: BitSource | None) -> BitSource:
    return os.urandom if bits is None else bits


def _draw(n_bytes: int, bits: BitSource | None) -> bytes:
    data = _source(bits)(n_bytes)
    if len(data) != n_bytes:
        raise RuntimeError(f"the bit source returned {len(data)} bytes, expected {n_bytes}")
    return data


def random_u16(n: int, bits: BitSource | None = None) -> np.ndarray:
    """``n`` uniform 16-bit words (uint16) from ``2n`` bytes, each read little-endian."""
    return np.frombuffer(_draw(2 * n, bits), dtype="<u2").astype(np.uint16, copy=False)


def random_u64(n: int, bits: BitSource | None = None) -> np.ndarray:
    """``n`` uniform 64-bit words (uint64) from ``8n`` bytes, each read little-endian."""
    return np.frombuffer(_draw(8 * n, bits), dtype="<u8").astype(np.uint64, copy=False)


class LazyUniform:
    """A uniform V in [0, 1) known by a prefix of its binary expansion, extended on demand.

    ``V ∈ [prefix / 2**nbits, (prefix + 1) / 2**nbits)``; :meth:`less_than` decides ``V < T``
    exactly for a threshold T given by a bound function, reading 64 more bits of V whenever the
    current prefix and bound do not settle it. The loop ends with probability 1 because the bounds
    tighten as the precision grows (a bound at ``prec`` is a few units of 2^−prec wide), so each
    extra word settles the comparison except with probability about 2^−60.

    >>> v = LazyUniform(prefix=0b01, nbits=2)            # V ∈ [1/4, 1/2)
    >>> v.less_than(lambda prec: (1 << (prec - 1), 1 << (prec - 1)))     # V < 1/2 ?
    True
    """

    __slots__ = ("_bits", "nbits", "prefix")

    def __init__(self, prefix: int, nbits: int, bits: BitSource | None = None) -> None:
        self.prefix = prefix
        self.nbits = nbits
        self._bits = bits

    def extend(self) -> None:
        """Read the next 64 bits of V (one little-endian uint64 word)."""
        word = int.from_bytes(_draw(8, self._bits), "little")
        self.prefix = (self.prefix << 64) | word
        self.nbits += 64

    def less_than(self, bounds: Callable[[int], Bounds]) -> bool:
        """Whether ``V < T``, for ``bounds(prec) -> (lo, hi)`` with ``lo ≤ T·2**prec ≤ hi``.

        With ``prec = nbits + 64``: if ``(prefix + 1)·2**64 ≤ lo`` then every V with this prefix is
        below T; if ``prefix·2**64 ≥ hi`` then every such V is at or above T; otherwise read more
        bits.
        """
        while True:
            lo, hi = bounds(self.nbits + 64)
            if (self.prefix + 1) << 64 <= lo:
                return True
            if self.prefix << 64 >= hi:
                return False
            self.extend()


def uniform_integers(upper: int, size: _params.Size = 1, *, _bits: BitSource | None = None) -> np.ndarray:
    """Uniform integers on {0, …, upper − 1}, exactly, from OS randomness.

    Algorithm: rejection ("draw k = ⌈log2 upper⌉ random bits, keep the value if it is < upper, else
    draw again"), so there is no modulo bias: every accepted value has probability exactly
    2^−k / P(accept) = 1/upper. Each round accepts with probability upper/2^k > 1/2.

    Args:
        upper: the number of values, an integer in [1, 2**63] (the results are int64).
        size: the number of draws, or a shape.

    Returns:
        An int64 array of shape ``size``.

    Raises:
        ParameterError: ``upper`` outside [1, 2**63] or a negative size.
        ParameterTypeError: a non-integer ``upper`` or ``size``.

    >>> x = uniform_integers(6, 1000)
    >>> x.dtype, x.shape, bool((x >= 0).all() and (x < 6).all())
    (dtype('int64'), (1000,), True)
    """
    upper = _params.integer_in(upper, "upper", 1, MAX_UPPER, "2**63")
    shape = _params.shape(size)
    n = math.prod(shape)
    out = np.zeros(n, dtype=np.int64)
    if upper == 1 or n == 0:
        return out.reshape(shape)
    k = (upper - 1).bit_length()
    limit = np.uint64(upper)
    todo = np.arange(n)
    while todo.size:
        words = random_u64(todo.size, _bits) >> np.uint64(64 - k)
        ok = words < limit
        out[todo[ok]] = words[ok].astype(np.int64)
        todo = todo[~ok]
    return out.reshape(shape)
