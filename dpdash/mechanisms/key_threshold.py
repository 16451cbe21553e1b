"""Counts per key when the keys are not public: geometric noise, then only the keys whose noisy count
reaches a threshold are released (partition selection; Korolova et al. 2009, Wilson et al. PoPETs 2020,
MATH.md "Keys that are not public").

A person touches at most k keys with at most m rows in each (``dpdash.facts.GroupBounds``, enforced by
truncation on the id column), under add/remove neighbours. Each key present in the data gets its count
plus discrete Laplace noise Z with r = e^(−ε/(k·m)) (the geometric mechanism at ℓ1 sensitivity k·m), and
is released when count + Z ≥ τ, τ = m + t, t the smallest integer ≥ 1 with Pr[Z ≥ t] = r^t/(1 + r) ≤ δ/k.

Why (ε, δ)-DP. Let S be the keys that only the added person has (|S| = s ≤ k, each with count ≤ m). Each
key of S is released with probability ≤ Pr[Z ≥ τ − m] ≤ δ/k, so p = Pr[some key of S released] ≤ s·δ/k.
The other keys' counts move by at most (k − s)·m in ℓ1: that part is ε' = ε(k − s)/k-DP. Hence
Pr[M(D) ∈ A] ≤ e^ε'·Pr[M(D′) ∈ A] + p, and Pr[M(D′) ∈ A] ≤ e^ε'/(1 − p)·Pr[M(D) ∈ A], which is at most
e^ε when s·δ/k ≤ 1 − e^(−ε·s/k) for every s ≤ k, that is when δ ≤ 1 − e^(−ε) (checked).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dpdash import _validation as check
from dpdash.errors import ParameterError
from dpdash.mechanisms.geometric import Geometric

__all__ = ["KeyThreshold", "threshold_for"]


def threshold_for(epsilon: float, delta: float, max_groups: int, max_rows_per_group: int) -> int:
    """τ = m + t, t the smallest integer ≥ 1 with r^t/(1 + r) ≤ δ/k, r = e^(−ε/(k·m)) (module docstring).

    >>> threshold_for(1.0, 1e-6, 1, 1)
    15
    """
    k, m = max_groups, max_rows_per_group
    log_r = -epsilon / (k * m)
    log_target = math.log(delta / k)

    def passes(t: int) -> bool:  # ln Pr[Z ≥ t] = t·ln r − ln(1 + r) ≤ ln(δ/k)
        return t * log_r - math.log1p(math.exp(log_r)) <= log_target

    t = max(1, math.ceil((log_target + math.log1p(math.exp(log_r))) / log_r))
    while t > 1 and passes(t - 1):
        t -= 1
    while not passes(t):
        t += 1
    return m + t


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyThreshold:
    """Geometric noise on each key's count, and only keys whose noisy count reaches τ: (ε, δ)-DP under
    add/remove neighbours when a person touches at most k keys with at most m rows each.

    Args:
        epsilon: ε > 0.
        delta: δ in (0, 1 − e^(−ε)]: the chance that a key only one person has is released is ≤ δ/k.
        max_groups: k ≥ 1.
        max_rows_per_group: m ≥ 1 (1: each count is a count of distinct people).

    >>> m = KeyThreshold(epsilon=1.0, delta=1e-6, max_groups=2, max_rows_per_group=1)
    >>> m.threshold, m.sensitivity, m.scale
    (30, 2, 2.0)
    """

    name: ClassVar[str] = "Geometric with a key threshold"
    sensitivity_norm: ClassVar[str] = "l1"

    epsilon: float
    delta: float
    max_groups: int
    max_rows_per_group: int
    threshold: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check.epsilon(self.epsilon))
        object.__setattr__(self, "delta", check.open_unit(self.delta, "delta"))
        object.__setattr__(self, "max_groups", check.positive_int(self.max_groups, "max_groups"))
        object.__setattr__(
            self, "max_rows_per_group", check.positive_int(self.max_rows_per_group, "max_rows_per_group")
        )
        if self.delta > -math.expm1(-self.epsilon):
            raise ParameterError(
                f"delta={self.delta:g} is too large for epsilon={self.epsilon:g}: key selection needs "
                f"delta ≤ 1 − e^(−epsilon) = {-math.expm1(-self.epsilon):.3g}; give a smaller delta"
            )
        tau = threshold_for(self.epsilon, self.delta, self.max_groups, self.max_rows_per_group)
        object.__setattr__(self, "threshold", tau)

    @property
    def sensitivity(self) -> int:
        """k·m, the ℓ1 sensitivity of the counts of the keys that stay."""
        return self.max_groups * self.max_rows_per_group

    @property
    def scale(self) -> float:
        """b = k·m/ε (r = e^(−1/b))."""
        return self.sensitivity / self.epsilon

    @property
    def noise_mechanism(self) -> Geometric:
        """The geometric mechanism that noises every count."""
        return Geometric(epsilon=self.epsilon, sensitivity=self.sensitivity)

    def keep_chance(self, counts: Any) -> np.ndarray:
        """Pr[count + Z ≥ τ] per true count n: r^(τ−n)/(1 + r) when n < τ, else 1 − r^(n−τ+1)/(1 + r)."""
        n = np.asarray(counts, dtype=np.float64)
        log_r = -self.epsilon / self.sensitivity
        log_norm = math.log1p(math.exp(log_r))
        # Each branch's exponent is clipped at 0 where the other branch applies (no overflow).
        below = np.exp(np.minimum((self.threshold - n) * log_r, 0.0) - log_norm)
        above = -np.expm1(np.minimum((n - self.threshold + 1) * log_r, 0.0) - log_norm)
        return np.where(n < self.threshold, below, above)

    def release(self, counts: Any) -> tuple[np.ndarray, np.ndarray]:
        """(noisy counts, kept) with the release-grade exact sampler (OS randomness): publish the noisy
        counts where kept only."""
        noisy = np.asarray(self.noise_mechanism.release(np.asarray(counts, dtype=np.int64)), dtype=np.int64)
        return noisy, noisy >= self.threshold

    def simulate(
        self, counts: Any, size: int, rng: np.random.Generator | int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``size`` possible releases (rows) as ``release`` makes them, with numpy's generator: for
        previews only, never for publishing."""
        values = np.atleast_1d(np.asarray(counts, dtype=np.int64))
        noisy = np.asarray(self.noise_mechanism.simulate(values, size, rng=rng)).astype(np.int64)
        noisy = noisy.reshape(size, values.size)
        return noisy, noisy >= self.threshold

    def describe(self) -> str:
        return (
            f"geometric noise of scale {self.scale:.4g} on each key's count (k = {self.max_groups} keys, "
            f"m = {self.max_rows_per_group} rows each), keys kept when the noisy count ≥ τ = {self.threshold}"
        )
