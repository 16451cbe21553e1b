"""Exact Bernoulli trials on OS randomness: Bernoulli(p) and Bernoulli(exp(−γ)) for rational p, γ.

Both are one comparison "V < T" of a lazily read uniform V with the success probability T, made
exactly (:mod:`dpdash.sampling.thresholds`): T = p is bounded by integer division, T = exp(−γ) by
the rigorous Taylor bounds of :mod:`dpdash.sampling.exact_math`. P(V < T) = T for a uniform V, so
each result is exactly Bernoulli(T). Almost every trial reads 16 random bits; about 2^−16 of them
read 64, and about 2^−60 read more.

Reference: Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS
2020, Algorithm 1 samples Bernoulli(exp(−γ)) with Bernoulli(γ/k) trials only; it is the test oracle
in :mod:`dpdash.sampling.reference`. The inversion here gives the same law with fewer random bits.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from dpdash.sampling import _params
from dpdash.sampling.bits import BitSource
from dpdash.sampling.exact_math import Bounds, exp_bounds, rational_bounds
from dpdash.sampling.thresholds import IndexedThresholds

__all__ = ["bernoulli", "bernoulli_exp"]

_PREC = 128


@lru_cache(maxsize=128)
def probability_table(p: Fraction) -> IndexedThresholds:
    """The one-entry table of the threshold p."""

    def bounds(_key: int, prec: int) -> Bounds:
        return rational_bounds(p, prec)

    lo, hi = rational_bounds(p, _PREC)
    return IndexedThresholds([lo], [hi], _PREC, bounds)


@lru_cache(maxsize=128)
def exp_table(gamma: Fraction) -> IndexedThresholds:
    """The one-entry table of the threshold exp(−γ)."""

    def bounds(_key: int, prec: int) -> Bounds:
        return exp_bounds(-gamma, prec)

    lo, hi = exp_bounds(-gamma, _PREC)
    return IndexedThresholds([lo], [hi], _PREC, bounds)


def _trials(table: IndexedThresholds, size: _params.Size, bits: BitSource | None) -> np.ndarray:
    shape = _params.shape(size)
    n = math.prod(shape)
    return table.less(None, n, bits).astype(np.int64).reshape(shape)


def bernoulli(
    p: _params.RationalLike, size: _params.Size = 1, *, _bits: BitSource | None = None
) -> np.ndarray:
    """Exact Bernoulli(p) trials: 1 with probability p, else 0.

    Args:
        p: a rational in [0, 1]; a float is taken as the exact binary number it holds.
        size: the number of trials, or a shape.

    Returns:
        An int64 array of 0s and 1s of shape ``size``.

    Raises:
        ParameterError: p outside [0, 1] or not finite, or a negative size.
        ParameterTypeError: p or size of the wrong type.

    >>> from fractions import Fraction
    >>> bernoulli(Fraction(1, 3), 4).shape
    (4,)
    >>> bernoulli(1, 3).tolist(), bernoulli(0, 2).tolist()
    ([1, 1, 1], [0, 0])
    """
    p = _params.probability(p, "p")
    return _trials(probability_table(p), size, _bits)


def bernoulli_exp(
    gamma: _params.RationalLike, size: _params.Size = 1, *, _bits: BitSource | None = None
) -> np.ndarray:
    """Exact Bernoulli(exp(−γ)) trials for a rational γ ≥ 0 (Canonne, Kamath & Steinke 2020).

    Args:
        gamma: γ, a finite rational ≥ 0; a float is taken as the exact binary number it holds.
        size: the number of trials, or a shape.

    Returns:
        An int64 array of 0s and 1s of shape ``size``; 1 has probability exp(−γ).

    Raises:
        ParameterError: γ < 0 or not finite, or a negative size.
        ParameterTypeError: γ or size of the wrong type.

    >>> bernoulli_exp(0, 3).tolist()
    [1, 1, 1]
    """
    gamma = _params.non_negative(gamma, "gamma")
    return _trials(exp_table(gamma), size, _bits)
