"""The discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for
Differential Privacy", NeurIPS; CKS below)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from scipy import special

from dpdash import _validation as check
from dpdash import sampling
from dpdash._search import bracket, smallest_true
from dpdash.accuracy import integer_half_width, smallest_integer
from dpdash.mechanisms.base import IntegerNoiseMechanism
from dpdash.mechanisms.families import GaussianFamily
from dpdash.mechanisms.gaussian_calibration import analytic_gaussian_sigma
from dpdash.mechanisms.noise import SymmetricNoise

__all__ = ["DiscreteGaussian", "DiscreteGaussianNoise", "discrete_gaussian_delta"]

# Beyond this σ, tail sums use Euler–Maclaurin instead of adding terms one by one.
_DIRECT_SIGMA = 200.0
# Terms are added until they fall below e^-42 (< 2^-60) of the first one.
_LOG_NEGLIGIBLE = 42.0
# Euler–Maclaurin coefficients B_2j/(2j)! for j = 1..5.
_EM_COEFFICIENTS = (1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160)


def _log_tail_sum(n: int, sigma: float) -> float:
    """ln S(n), S(n) = Σ_{k ≥ n} e^(−k²/(2σ²)), for an integer n ≥ 1.

    Direct summation while the terms are few (σ ≤ 200, or far in the tail where they shrink fast);
    otherwise Euler–Maclaurin: S(n) = ∫_n^∞ f + f(n)/2 − Σ_j B_2j/(2j)!·f^(2j−1)(n), with
    f^(m)(x) = (−1/σ)^m He_m(x/σ) f(x). With σ > 200 and n/σ² < 0.05 the neglected terms are below
    10⁻¹⁶ of S(n).
    """
    two_var = 2.0 * sigma * sigma
    log_first = -(n * n) / two_var
    if sigma <= _DIRECT_SIGMA or n / sigma**2 >= 0.05:
        count = math.ceil(math.sqrt(n * n + _LOG_NEGLIGIBLE * two_var) - n) + 2
        k = np.arange(n, n + count, dtype=float)
        rel = -((k[1:] - n) * (k[1:] + n)) / two_var  # ln f(k) − ln f(n) for k > n, without cancellation
        # ln Σ_k f(k)/f(n) = ln(1 + Σ_{k>n} e^rel), every e^rel < 1: no shift needed (what logsumexp does)
        return log_first + math.log1p(float(np.exp(rel).sum()))
    u = n / sigma
    # ∫_n^∞ f = σ√(2π)·Φ(−u); relative to f(n) = e^(−u²/2):
    integral = sigma * math.sqrt(2.0 * math.pi) * math.exp(special.log_ndtr(-u) + u * u / 2.0)
    correction = 0.5
    for j, coefficient in enumerate(_EM_COEFFICIENTS, start=1):
        order = 2 * j - 1
        hermite = special.eval_hermitenorm(order, u)
        correction -= coefficient * (-1.0 / sigma) ** order * hermite
    return log_first + math.log(integral + correction)


def _log_normaliser(sigma: float) -> float:
    """ln Z, Z = Σ_k e^(−k²/(2σ²)) = 1 + 2·S(1)."""
    return math.log1p(2.0 * math.exp(_log_tail_sum(1, sigma)))


def _log_sf(m: int, sigma: float, log_z: float) -> float:
    """ln Pr[X > m] for X ~ N_Z(0, σ²) and an integer m."""
    if m >= 0:
        return _log_tail_sum(m + 1, sigma) - log_z
    # Pr[X > m] = 1 − Pr[X ≤ m] = 1 − Pr[X ≥ −m] by symmetry.
    return math.log1p(-math.exp(_log_tail_sum(-m, sigma) - log_z))


def discrete_gaussian_delta(epsilon: npt.ArrayLike, sigma: float, sensitivity: int) -> np.ndarray:
    """Exact δ(ε) of discrete Gaussian noise N_Z(0, σ²) on an integer query with sensitivity Δ
    (CKS Theorem 7, tight when the sensitivity is attained):

        δ(ε) = Pr[X > εσ²/Δ − Δ/2] − e^ε · Pr[X > εσ²/Δ + Δ/2],   X ~ N_Z(0, σ²).

    Evaluated in log space as P₁·(1 − exp(ε + ln P₂ − ln P₁)).
    """
    eps = np.asarray(epsilon, dtype=float)
    log_z = _log_normaliser(sigma)
    out = np.empty(eps.shape)
    for index, e in np.ndenumerate(eps):
        centre = e * sigma * sigma / sensitivity
        log_p1 = _log_sf(math.floor(centre - sensitivity / 2.0), sigma, log_z)
        log_p2 = _log_sf(math.floor(centre + sensitivity / 2.0), sigma, log_z)
        exponent = min(e + log_p2 - log_p1, 0.0)
        out[index] = math.exp(log_p1) * -math.expm1(exponent)
    return out


class DiscreteGaussianNoise(SymmetricNoise):
    """The discrete Gaussian N_Z(0, σ²): Pr[X = x] = e^(−x²/(2σ²))/Z on the integers.

    Offers the frozen-scipy-distribution methods dpdash uses (pmf, logpmf, cdf, sf, ppf, isf, mean,
    var, std, rvs), computed exactly to double precision (tails by direct summation or
    Euler–Maclaurin, the variance by Poisson summation). σ is a parameter, not the standard deviation,
    which is slightly smaller for σ < 1.

    >>> noise = DiscreteGaussianNoise(1.0)
    >>> round(float(noise.pmf(0)), 6), round(noise.var(), 6)
    (0.398942, 1.0)
    """

    __slots__ = ("_log_z", "sigma")

    def __init__(self, sigma: float) -> None:
        self.sigma = check.positive_finite(sigma, "sigma")
        self._log_z = _log_normaliser(self.sigma)

    def __repr__(self) -> str:
        return f"DiscreteGaussianNoise(sigma={self.sigma!r})"

    def logpmf(self, x: npt.ArrayLike) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.where(x == np.round(x), -(x * x) / (2.0 * self.sigma**2) - self._log_z, -np.inf)

    def pmf(self, x: npt.ArrayLike) -> np.ndarray:
        return np.exp(self.logpmf(x))

    def sf(self, x: npt.ArrayLike) -> np.ndarray:
        """Pr[X > x]."""
        return np.vectorize(self._sf_scalar, otypes=[float])(np.asarray(x, dtype=float))

    def _sf_scalar(self, x: float) -> float:
        if math.isinf(x):
            return 0.0 if x > 0 else 1.0
        return math.exp(_log_sf(math.floor(x), self.sigma, self._log_z))

    def cdf(self, x: npt.ArrayLike) -> np.ndarray:
        """Pr[X ≤ x] = Pr[X > −⌊x⌋ − 1] by symmetry (no cancellation in the lower tail)."""
        return self.sf(-np.floor(np.asarray(x, dtype=float)) - 1.0)

    def isf(self, q: npt.ArrayLike) -> np.ndarray:
        """The smallest integer x with Pr[X > x] ≤ q."""
        return np.vectorize(self._isf_scalar, otypes=[float])(np.asarray(q, dtype=float))

    def ppf(self, q: npt.ArrayLike) -> np.ndarray:
        """The smallest integer x with Pr[X ≤ x] ≥ q, i.e. Pr[X > x] ≤ 1 − q."""
        return self.isf(1.0 - np.asarray(q, dtype=float))

    def _isf_scalar(self, q: float) -> float:
        if not 0.0 <= q <= 1.0:
            return math.nan
        if q == 0.0:
            return math.inf
        if q == 1.0:
            return -math.inf
        log_q = math.log(q)
        guess = self.sigma * float(special.ndtri(1.0 - q))
        if q < 0.5:  # Pr[X > −1] > 1/2 > q, so the answer is ≥ 0
            return float(smallest_integer(lambda m: _log_sf(m, self.sigma, self._log_z) <= log_q, guess))
        # The answer is −y ≤ 0 with y the largest integer such that Pr[X ≥ y] ≥ 1 − q (by
        # symmetry Pr[X > −y] = 1 − Pr[X ≥ y]); find the smallest y′ = y + 1 where that fails.
        log_p = math.log1p(-q)
        y_next = smallest_integer(lambda y: _log_sf(y - 1, self.sigma, self._log_z) < log_p, -guess, lower=1)
        return float(1 - y_next)

    def log_abs_tail(self, m: int) -> float:
        """ln Pr[|X| > m] = ln 2 + ln Pr[X > m], for an integer m ≥ 0."""
        return math.log(2.0) + _log_sf(m, self.sigma, self._log_z)

    def half_width(self, tail: float) -> int:
        """The smallest integer a ≥ 0 with Pr[|X| > a] ≤ tail."""
        guess = self.sigma * float(special.ndtri(1.0 - tail / 2.0))  # the continuous Gaussian's
        return integer_half_width(self.log_abs_tail, tail, guess)

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        """Exact draws on OS randomness (``dpdash.sampling.discrete_gaussian``; the float σ taken as the
        exact binary rational it holds). Release-grade, unlike ``rvs``."""
        return sampling.discrete_gaussian(sigma=Fraction(self.sigma), size=shape)

    def var(self) -> float:
        """E[X²] = Σ x² e^(−x²/2σ²)/Z. By Poisson summation, Σ x² e^(−x²/2σ²) =
        σ√(2π)·Σ_n (σ² − 4π²σ⁴n²)e^(−2π²σ²n²) and Z = σ√(2π)·Σ_n e^(−2π²σ²n²); for σ < 3 the
        direct sum is used."""
        s = self.sigma
        if s < 3.0:
            x = np.arange(1, math.ceil(12.0 * s) + 2, dtype=float)
            return float(2.0 * np.sum(x * x * np.exp(-(x * x) / (2.0 * s * s) - self._log_z)))
        n = np.arange(1, 4, dtype=float)
        weights = np.exp(-2.0 * math.pi**2 * s * s * n * n)
        numerator = s * s + 2.0 * np.sum((s * s - 4.0 * math.pi**2 * s**4 * n * n) * weights)
        return float(numerator / (1.0 + 2.0 * np.sum(weights)))

    def _rvs(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """CKS Algorithm 3's rejection from discrete Laplace noise with scale t = ⌊σ⌋ + 1, accepting with
        probability e^(−(|y| − σ²/t)²/(2σ²))."""
        total = math.prod(shape)
        t = math.floor(self.sigma) + 1
        p = -math.expm1(-1.0 / t)
        out = np.empty(0, dtype=np.int64)
        while out.size < total:
            batch = max(2 * (total - out.size), 64)
            y = rng.geometric(p, batch).astype(np.int64) - rng.geometric(p, batch)
            accept_log = -((np.abs(y) - self.sigma**2 / t) ** 2) / (2.0 * self.sigma**2)
            out = np.concatenate([out, y[np.log(rng.random(batch)) < accept_log]])
        return out[:total].reshape(shape)


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscreteGaussian(GaussianFamily, IntegerNoiseMechanism):
    """Add discrete Gaussian noise N_Z(0, σ²) to an integer query: (ε, δ)-DP, exactly.

    Calibration: σ is the point where the exact privacy profile of CKS Theorem 7,
    δ(ε; σ) = Pr[X > εσ²/Δ − Δ/2] − e^ε·Pr[X > εσ²/Δ + Δ/2], crosses the target δ, found by bisection
    over the bits of σ (bracketed around the analytic continuous-Gaussian σ). So the stated (ε, δ)
    holds exactly at the returned σ, and fails at the next smaller double.

    Args:
        epsilon: ε > 0.
        delta: δ in (0, 1).
        sensitivity: Δ, an integer: neighbours change one coordinate by at most Δ. (Theorem 7 is
            one-dimensional; several answers each get independent noise, and the guarantee above is for
            neighbours that differ in one of them, e.g. histogram bins under add/remove.)

    zCDP: ρ = Δ²/(2σ²) (CKS Theorem 4).

    >>> m = DiscreteGaussian(epsilon=1.0, delta=1e-5, sensitivity=1)
    >>> round(m.scale, 3), m.accuracy(0.95)
    (3.74, 7)
    """

    name: ClassVar[str] = "Discrete Gaussian"
    sensitivity_norm: ClassVar[str] = "coordinate"

    sensitivity: int
    scale: float = field(init=False)  # σ
    _noise: DiscreteGaussianNoise = field(init=False, repr=False, compare=False)

    def _calibrate(self) -> None:
        log_target = math.log(self.delta)

        def private_enough(sigma: float) -> bool:
            value = float(discrete_gaussian_delta(self.epsilon, sigma, self.sensitivity))
            return value <= 0.0 or math.log(value) <= log_target

        guess = analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity)
        lo, hi = bracket(private_enough, guess, lower=1e-3, upper=1e12, what="noise scale sigma")
        self._set("scale", smallest_true(private_enough, lo, hi))
        self._set("_noise", DiscreteGaussianNoise(self.scale))

    @property
    def noise(self) -> DiscreteGaussianNoise:
        return self._noise

    def _profile(self, eps: np.ndarray) -> np.ndarray:
        return discrete_gaussian_delta(eps, self.scale, self.sensitivity)

    def _draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        return self._noise.rvs(size, random_state=rng)
