"""One release's privacy loss distribution on a grid (``pld``): pessimistic, by dp_accounting's "connect the
dots" for the Laplace and Gaussian losses, and exact for the integer-valued mechanisms (geometric, discrete
Gaussian); as a dense pmf with its mass at infinity."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpdash.accounting import events as ev

__all__ = ["DEFAULT_INTERVAL", "single_pld"]


# dp_accounting's default grid of privacy losses (PLDAccountant, from_*_mechanism).
DEFAULT_INTERVAL = 1e-4


@dataclass(frozen=True, slots=True)
class _Pmf:
    """Privacy-loss masses on the grid: loss (lower + i)·interval has mass probs[i]; +∞ has ``infinity``."""

    lower: int
    probs: np.ndarray
    infinity: float


def single_pld(setting: ev.PrivacyEvent, interval: float = DEFAULT_INTERVAL) -> Any:
    """dp_accounting's pessimistic ``PrivacyLossDistribution`` of one release with this setting.

    Laplace: ``from_laplace_mechanism(1/ε)`` (as ``PLDAccountant`` does for ``LaplaceDpEvent(1/ε)``);
    Gaussian: ``from_gaussian_mechanism(σ/Δ₂)``; geometric: ``from_discrete_laplace_mechanism(ε/Δ₁, Δ₁)``;
    discrete Gaussian: ``from_discrete_gaussian_mechanism(σ, Δ)``; pure ε and approximate (ε, δ) events:
    ``from_privacy_parameters(ε, δ)``, the worst-case pair for the guarantee.
    """
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    if isinstance(setting, (ev.LaplaceEvent, ev.GaussianEvent)):
        # dp_accounting's own construction (connect the dots, pessimistic), with the inverse privacy loss
        # computed for all grid losses at once (``_vectorised``): the same arithmetic, so the same bits.
        return pld.PrivacyLossDistribution(_connect_dots(_vectorised(setting), interval))
    if isinstance(setting, ev.GeometricEvent):
        return pld.from_discrete_laplace_mechanism(
            setting.noise_parameter, sensitivity=setting.sensitivity, value_discretization_interval=interval
        )
    if isinstance(setting, ev.DiscreteGaussianEvent):
        return pld.PrivacyLossDistribution(_discrete_gaussian_pmf(setting, interval))
    if isinstance(setting, (ev.PureDPEvent, ev.ApproxDPEvent)):
        params = common.DifferentialPrivacyParameters(setting.epsilon, setting.delta)
        return pld.from_privacy_parameters(params, value_discretization_interval=interval)
    raise AssertionError(f"no privacy loss distribution for {setting!r}")  # refused before


def _vectorised(setting: ev.LaplaceEvent | ev.GaussianEvent) -> Any:
    """dp_accounting's privacy loss of ``from_laplace_mechanism(1/ε)`` or ``from_gaussian_mechanism(σ/Δ₂)``
    (sensitivity 1, no subsampling, REMOVE adjacency, as those functions build it), whose
    ``get_delta_for_epsilon`` of an array of ε finds the inverse privacy losses with numpy instead of one
    Python call per ε: the same IEEE operations in the same order, so the same numbers (tested).

    δ(ε) = μ_upper_cdf(x) − e^ε·μ_lower_cdf(x) at x = inverse privacy loss of ε (dp_accounting
    ``MonotonePrivacyLoss.get_delta_for_epsilon``); the inverse is −Δ/2 − ε·σ²/Δ for the Gaussian and, for
    Laplace with parameter b, ∞ / (−Δ − εb)/2 / −∞ as εb ≤ −Δ / in between / > Δ.
    """
    laplace, gaussian = _vectorised_classes()
    if isinstance(setting, ev.GaussianEvent):
        return gaussian(setting.noise_multiplier)
    return laplace(1.0 / setting.epsilon)


def _connect_dots(loss: Any, interval: float) -> Any:
    """The pmf of dp_accounting's ``_create_pld_pmf_from_monotone_privacy_loss(loss, use_connect_dots=True)``
    for a continuous mechanism (pessimistic connect-the-dots on a fixed grid; Doroshenko et al. 2022,
    Algorithm 1), made dense directly rather than through the dict of grid index → mass it builds there
    (a Python object per grid point): the same operations on the same arrays, so the same bits (tested).

    On the grid ε_i = (lower + i)·d from the bounds' ε_lower to ε_upper, with δ_i = δ(ε_i) made
    non-increasing: p_0 = 1 − δ_0 + (δ_1 − δ_0)/(e^d − 1), p_i = ((δ_{i+1} − δ_i) − e^d·(δ_i − δ_{i−1}))
    /(e^d − 1), p_n = (δ_n − δ_{n−1})/(e^(−d) − 1), each clipped at 0, and mass δ_n at +∞
    (``pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap``).
    """
    from dp_accounting.pld import pld_pmf

    bounds = loss.connect_dots_bounds()
    lower = math.floor(bounds.epsilon_lower / interval)
    upper = math.ceil(bounds.epsilon_upper / interval)
    deltas = np.asarray(loss.get_delta_for_epsilon(np.arange(lower, upper + 1) * interval), dtype=np.float64)
    tolerance = pld_pmf._DELTA_DIFF_TOLERANCE  # pylint: disable=protected-access
    if upper == lower or np.any((deltas < 0) | (deltas > 1)) or np.any(np.diff(deltas) > tolerance):
        # a single grid point, or δs that are not a profile: dp_accounting's own (and its error)
        return pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(interval, lower, upper, deltas)
    deltas = np.minimum.accumulate(deltas)
    diffs = np.diff(deltas)
    probs = np.zeros_like(deltas)
    probs[0] = 1 - deltas[0] + diffs[0] / math.expm1(interval)
    probs[1:-1] = (diffs[1:] - diffs[:-1] * math.exp(interval)) / math.expm1(interval)
    probs[-1] = diffs[-1] / math.expm1(-interval)
    return pld_pmf.DensePLDPmf(interval, lower, np.maximum(0.0, probs), deltas[-1], True)


@functools.cache
def _vectorised_classes() -> tuple[type, type]:
    """The Laplace and Gaussian privacy losses of ``_vectorised`` (dp_accounting is imported when needed)."""
    from dp_accounting.pld import privacy_loss_mechanism as mechanisms

    class Vectorised:
        def get_delta_for_epsilon(self, epsilon: Any) -> Any:
            if np.ndim(epsilon) == 0:
                return super().get_delta_for_epsilon(epsilon)  # type: ignore[misc]
            epsilons = np.asarray(epsilon, dtype=float)
            cutoffs = self._inverse(epsilons)  # type: ignore[attr-defined]
            deltas = self.mu_upper_cdf(cutoffs) - np.exp(  # type: ignore[attr-defined]
                epsilons + self.mu_lower_log_cdf(cutoffs)  # type: ignore[attr-defined]
            )
            return np.clip(deltas, 0, 1)

    class Laplace(Vectorised, mechanisms.LaplacePrivacyLoss):
        def _inverse(self, losses: np.ndarray) -> np.ndarray:
            threshold = losses * self._parameter
            middle = 0.5 * (-self.sensitivity - threshold)
            above = np.where(threshold <= -self.sensitivity, np.inf, middle)
            return np.where(threshold > self.sensitivity, -np.inf, above)

    class Gaussian(Vectorised, mechanisms.GaussianPrivacyLoss):
        def _inverse(self, losses: np.ndarray) -> np.ndarray:
            return -0.5 * self.sensitivity - losses * (self._standard_deviation**2) / self.sensitivity

    return Laplace, Gaussian


def _discrete_gaussian_pmf(setting: ev.DiscreteGaussianEvent, interval: float) -> Any:
    """The REMOVE pmf of dp_accounting's ``from_discrete_gaussian_mechanism(σ, Δ)`` (privacy buckets,
    pessimistic), with its per-x Python loop done by numpy, to the same bits (tested).

    dp_accounting adds, for each integer x in [−T, T − Δ] in increasing order, the mass
    P[X ≤ x] − P[X ≤ x − 1] to the bucket ⌈L(x)/interval⌉, where L(x) = Δ(−Δ/2 − x)/σ² (T = ⌈11.6σ⌉;
    ``DiscreteGaussianPrivacyLoss``). L falls with x, so each bucket's x form one run: its mass is the
    same left-to-right sum (``np.add.accumulate`` is sequential), and buckets are made in the same order.
    """
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld import privacy_loss_mechanism as mechanisms

    loss = mechanisms.DiscreteGaussianPrivacyLoss(setting.sigma, sensitivity=setting.sensitivity)
    tail = loss.privacy_loss_tail()
    masses: dict[int, Any] = {}
    for value, mass in tail.tail_probability_mass_function.items():
        if value != math.inf:
            key = math.ceil(value / interval)
            masses[key] = masses.get(key, 0) + mass
    xs = list(range(math.ceil(tail.lower_x_truncation) - 1, math.floor(tail.upper_x_truncation) + 1))
    cdf = loss.mu_upper_cdf(xs)
    probs = cdf[1:] - cdf[:-1]
    sensitivity, sigma = loss.sensitivity, loss._sigma  # pylint: disable=protected-access
    losses = sensitivity * (-0.5 * sensitivity - np.asarray(xs[1:])) / (sigma**2)
    keys = np.ceil(losses / interval)
    starts = np.concatenate(([0], np.flatnonzero(np.diff(keys)) + 1))
    lengths = np.diff(np.append(starts, len(keys)))
    buckets = [int(key) for key in keys[starts]]
    # One row per bucket: its earlier mass (0 if none), then its run of masses, padded with zeros (x + 0 = x).
    rows = np.zeros((len(buckets), int(lengths.max()) + 1))
    rows[:, 0] = [masses.get(key, 0) for key in buckets]
    columns = np.arange(len(keys)) - np.repeat(starts, lengths) + 1
    rows[np.repeat(np.arange(len(buckets)), lengths), columns] = probs
    masses.update(zip(buckets, np.add.accumulate(rows, axis=1)[:, -1], strict=True))
    infinity = tail.tail_probability_mass_function.get(math.inf, 0)
    return pld_pmf.create_pmf(masses, interval, infinity, pessimistic_estimate=True)


def _dense(pmf: Any) -> _Pmf:
    dense = pmf.to_dense_pmf()
    probs = np.clip(np.asarray(dense._probs, dtype=float), 0.0, None)  # pylint: disable=protected-access
    probs.setflags(write=False)
    return _Pmf(int(dense._lower_loss), probs, float(dense._infinity_mass))  # pylint: disable=protected-access
