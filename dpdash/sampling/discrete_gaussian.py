"""Exact discrete Gaussian noise on OS randomness: P(X = x) ∝ exp(−x²/(2σ²)), x ∈ ℤ.

Reference: C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy",
NeurIPS 2020 (arXiv:2004.00010), Algorithm 3, vectorised here; the plain version is in
:mod:`dpdash.sampling.reference`.

Algorithm 3 (rejection from the discrete Laplace). With t = ⌊σ⌋ + 1 and c = σ²/t: draw
Y ~ discrete Laplace with scale t; accept it with probability

    A(|Y|) = exp(−(|Y| − c)² / (2σ²));

otherwise draw again. Since P(Y = y)·A(|y|) ∝ exp(−|y|/t − (|y| − c)²/(2σ²)) = exp(−y²/(2σ²))·const
(the cross terms cancel because c/σ² = 1/t), accepted values have exactly the discrete Gaussian law.
About 3/4 of proposals are accepted for large σ (e^(−1/2)·√(π/2) ≈ 0.76), so a batch of n samples
takes about 1.3·n proposals, processed as whole arrays round after round.

The acceptance decisions are exact Bernoulli trials against a precomputed table
(:class:`~dpdash.sampling.thresholds.IndexedThresholds`):

- for t ≤ 5461 the table holds A(y) itself for y < 12t + 2, built by the recurrences
  A(y+1) = A(y)·R_y and R_(y+1) = R_y·e^(−1/σ²) (R_0 = e^((2c−1)/(2σ²))) on rigorous bounds;
- for larger σ the table holds *brackets*: entry k bounds every A(y) for km ≤ y < (k+1)m (m ≥ 2, at
  most 65 536 entries). A is unimodal with its peak at c, so on a bracket it lies between its
  values at the two ends (or reaches up to 1 if c is inside). The bracket's bounds settle all but a
  fraction ≈ m/σ of decisions; the rest compare the uniform with exact bounds on A(y) itself.
- |Y| beyond the table (probability < 10^−5 per proposal) is compared with exact bounds directly.

Every comparison reads as many random bits as it needs and is exact (see
:mod:`dpdash.sampling.thresholds`); no floating-point arithmetic takes part.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache, partial
from math import ceil, floor, isqrt

import numpy as np

from dpdash.errors import ParameterTypeError
from dpdash.sampling import _params
from dpdash.sampling._threads import sample_in_threads
from dpdash.sampling.bits import BitSource
from dpdash.sampling.discrete_laplace import sample_discrete_laplace
from dpdash.sampling.exact_math import Bounds, exp_bounds, mul_bounds
from dpdash.sampling.geometric import TAIL_FACTOR, check_width, table_precision
from dpdash.sampling.thresholds import IndexedThresholds

__all__ = ["MAX_SIGMA", "discrete_gaussian"]

#: The largest accepted σ (so σ² ≤ 2**80); see :data:`dpdash.sampling.discrete_laplace.MAX_SCALE`.
MAX_SIGMA = 2**40

_MAX_ENTRIES = 2**16


@dataclass(frozen=True, slots=True)
class AcceptanceTable:
    """Acceptance probabilities A(y) = exp(−(y − c)²/(2σ²)) of Algorithm 3 for one σ².

    Entry k < entries covers y ∈ [k·spacing, (k+1)·spacing); entry ``entries`` is a sentinel for all
    larger y, decided against exact bounds on demand.
    """

    thresholds: IndexedThresholds
    laplace_scale: int
    center: Fraction
    spacing: int
    entries: int


def acceptance_bounds(sigma_squared: Fraction, center: Fraction, y: int, prec: int) -> Bounds:
    """Exact bound on A(y) = exp(−(y − c)²/(2σ²)) at ``prec``."""
    return exp_bounds(-((y - center) ** 2) / (2 * sigma_squared), prec)


@lru_cache(maxsize=32)
def acceptance_table(sigma_squared: Fraction) -> AcceptanceTable:
    """Build (once per σ²) the table of acceptance probabilities of Algorithm 3."""
    t = isqrt(floor(sigma_squared)) + 1  # ⌊σ⌋ + 1, exactly
    c = sigma_squared / t
    y_max = TAIL_FACTOR * t + 2
    m = max(1, ceil(Fraction(y_max, _MAX_ENTRIES)))
    entries = ceil(Fraction(y_max, m))
    prec = table_precision(entries)
    while True:
        one = 1 << prec
        a = exp_bounds(-(c * c) / (2 * sigma_squared), prec)  # A(0)
        ratio = exp_bounds((2 * m * c - m * m) / (2 * sigma_squared), prec)  # A(m)/A(0)
        step = exp_bounds(Fraction(-m * m) / sigma_squared, prec)
        grid_lo, grid_hi = [a[0]], [a[1]]
        for _ in range(entries):
            a = mul_bounds(a, ratio, prec)
            ratio = mul_bounds(ratio, step, prec)
            grid_lo.append(a[0])
            grid_hi.append(a[1])
        if check_width(grid_lo, grid_hi, prec):
            break
        prec *= 2
    if m == 1:
        lows, highs = grid_lo[:entries], grid_hi[:entries]
    else:
        lows = [min(grid_lo[k], grid_lo[k + 1]) for k in range(entries)]
        highs = [one if k * m < c < (k + 1) * m else max(grid_hi[k], grid_hi[k + 1]) for k in range(entries)]
    # the sentinel entry for y ≥ entries·m: the trivial bounds 0 ≤ A(y) ≤ 1
    lows, highs = [*lows, 0], [*highs, one]
    bounds = partial(acceptance_bounds, sigma_squared, c)
    return AcceptanceTable(IndexedThresholds(lows, highs, prec, bounds), t, c, m, entries)


def _accept(table: AcceptanceTable, y: np.ndarray, bits: BitSource | None) -> np.ndarray:
    """Exact Bernoulli(A(y_i)) decisions for y_i ≥ 0, one fresh uniform each.

    y beyond the table maps to the sentinel entry, whose bounds [0, 1] settle nothing, so those
    decisions are taken against exact bounds on A(y) itself.
    """
    bracket = np.minimum(y if table.spacing == 1 else y // table.spacing, table.entries)
    return table.thresholds.less(bracket, y.size, bits, keys=y)


def sample_discrete_gaussian(sigma_squared: Fraction, n: int, bits: BitSource | None = None) -> np.ndarray:
    """``n`` exact discrete Gaussian draws for a validated rational σ², as int64 (no checks).

    Proposals are made in batches sized from the acceptance count so far, and the first ``n``
    accepted values are kept: in rejection sampling the accepted values form an i.i.d. sequence with
    the target law, independent of which proposals were rejected, so any prefix of it is i.i.d. too.
    """
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    table = acceptance_table(sigma_squared)
    scale = Fraction(table.laplace_scale)
    chunks = []
    proposed = accepted = 0
    while accepted < n:
        need = n - accepted
        # batch ≈ need / (acceptance rate so far) + 5%; need·3/2 at first (every rate is ≥ 0.46)
        batch = need * 3 // 2 if not proposed else need * proposed // max(accepted, 1)
        batch += batch // 20 + 16
        y = sample_discrete_laplace(scale, batch, bits)
        kept = y[_accept(table, np.abs(y), bits)]
        chunks.append(kept)
        proposed += batch
        accepted += kept.size
    return np.concatenate(chunks)[:n]


def discrete_gaussian(
    sigma: _params.RationalLike | None = None,
    size: _params.Size = 1,
    *,
    sigma_squared: _params.RationalLike | None = None,
    _bits: BitSource | None = None,
) -> np.ndarray:
    """Exact discrete Gaussian noise: P(X = x) = exp(−x²/(2σ²)) / Σ_(z∈ℤ) exp(−z²/(2σ²)).

    Release-grade: OS randomness and exact rational arithmetic only; Canonne, Kamath & Steinke 2020,
    Algorithm 3, vectorised (see the module docstring). Added to an integer query with ℓ2
    sensitivity Δ it gives ρ = Δ²/(2σ²) zero-concentrated DP.

    Give exactly one of ``sigma`` (a rational σ) or ``sigma_squared`` (a rational σ², so that σ
    itself may be irrational, e.g. ``sigma_squared=2``).

    Args:
        sigma: σ, a rational in (0, 2**40]; a float is taken as the exact binary number it holds.
        size: the number of draws, or a shape.
        sigma_squared: σ², a rational in (0, 2**80].

    Returns:
        An int64 array of shape ``size``.

    Raises:
        ParameterError: a parameter that is not finite, ≤ 0 or too large, or a negative size.
        ParameterTypeError: a parameter of the wrong type, or not exactly one of
        sigma/sigma_squared.

    >>> x = discrete_gaussian(3, 4)
    >>> x.dtype, x.shape
    (dtype('int64'), (4,))
    >>> discrete_gaussian(sigma_squared=2, size=(2, 3)).shape
    (2, 3)
    """
    if (sigma is None) == (sigma_squared is None):
        raise ParameterTypeError(
            f"give exactly one of sigma and sigma_squared, got sigma={sigma!r}, "
            f"sigma_squared={sigma_squared!r}"
        )
    if sigma is not None:
        s = _params.positive_scale(sigma, "sigma", MAX_SIGMA, "2**40")
        s2 = s * s
    else:
        s2 = _params.positive_scale(sigma_squared, "sigma_squared", MAX_SIGMA**2, "2**80")
    shape = _params.shape(size)

    def sample(n: int, bits: BitSource | None) -> np.ndarray:
        return sample_discrete_gaussian(s2, n, bits)

    return sample_in_threads(sample, math.prod(shape), _bits).reshape(shape)
