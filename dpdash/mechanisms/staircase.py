"""The staircase mechanism (Geng & Viswanath 2014, "The Optimal Noise-Adding Mechanism in Differential
Privacy", IEEE Trans. Inf. Theory; G&V below)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from dpdash import _validation as check
from dpdash import sampling
from dpdash.accuracy import integer_half_width
from dpdash.errors import ParameterError
from dpdash.mechanisms.base import NoiseMechanism
from dpdash.mechanisms.grid import ReleasePlan, grid_for
from dpdash.mechanisms.noise import SymmetricNoise
from dpdash.sampling.geometric import sample_geometric

__all__ = ["DiscreteStaircaseNoise", "Staircase", "StaircaseNoise", "optimal_gamma"]

COSTS = ("l1", "l2")


def optimal_gamma(epsilon: float, cost: str = "l1") -> float:
    """The γ that minimises the staircase's cost at this ε (G&V, Theorems 4 and 5).

    ``"l1"`` (expected |noise|): γ* = 1/(1 + e^(ε/2)).
    ``"l2"`` (variance): γ* = −b/(1 − b) + (b − 2b² + 2b⁴ − b⁵)^(1/3)/(2^(1/3)(1 − b)²), b = e^(−ε).
    """
    epsilon = check.epsilon(epsilon)
    cost = check.one_of(cost, "cost", COSTS)
    if cost == "l1":
        return 1.0 / (1.0 + math.exp(epsilon / 2.0))
    b = math.exp(-epsilon)
    one_minus_b = -math.expm1(-epsilon)
    cubic = b - 2 * b**2 + 2 * b**4 - b**5
    return -b / one_minus_b + cubic ** (1.0 / 3.0) / (2.0 ** (1.0 / 3.0) * one_minus_b**2)


class StaircaseNoise(SymmetricNoise):
    """The staircase distribution with parameters ε, Δ, γ (G&V, Definition 2).

    For x ≥ 0 in the k-th stair, x ∈ [kΔ, (k+1)Δ):
        f(x) = a·b^k on [kΔ, (k+γ)Δ) and a·b^(k+1) on [(k+γ)Δ, (k+1)Δ), f(−x) = f(x),
    with b = e^(−ε) and a = (1 − b)/(2Δ(γ + (1 − γ)b)). Each stair holds mass (1 − b)b^k/2, so
    Pr[X ≥ kΔ] = b^k/2, which gives closed forms for the tails, quantiles and moments.

    >>> noise = StaircaseNoise(epsilon=1.0, sensitivity=1.0, gamma=0.5)
    >>> float(noise.cdf(0.0)), round(float(noise.isf(noise.sf(2.3))), 12)
    (0.5, 2.3)
    """

    __slots__ = ("_a", "_b", "_one_minus_b", "epsilon", "gamma", "width")

    def __init__(self, epsilon: float, sensitivity: float, gamma: float) -> None:
        self.epsilon = check.epsilon(epsilon)
        self.width = check.sensitivity(sensitivity)
        self.gamma = float(gamma)
        self._b = math.exp(-self.epsilon)
        self._one_minus_b = -math.expm1(-self.epsilon)
        self._a = self._one_minus_b / (2.0 * self.width * (self.gamma + (1.0 - self.gamma) * self._b))

    def __repr__(self) -> str:
        return f"StaircaseNoise(epsilon={self.epsilon!r}, sensitivity={self.width!r}, gamma={self.gamma!r})"

    def pdf(self, x: npt.ArrayLike) -> np.ndarray:
        y = np.abs(np.asarray(x, dtype=float)) / self.width
        k = np.floor(y)
        upper_step = (y - k) >= self.gamma
        return self._a * np.exp(-self.epsilon * (k + upper_step))

    def sf(self, x: npt.ArrayLike) -> np.ndarray:
        """Pr[X > x]: for x = (k + u)Δ ≥ 0, b^k/2 − a·b^k·uΔ on the high step (u < γ) and
        b^(k+1)/2 + a·b^(k+1)·(1 − u)Δ on the low step."""
        x = np.asarray(x, dtype=float)
        y = np.abs(x) / self.width
        k = np.floor(y)
        u = y - k
        bk = np.exp(-self.epsilon * k)
        high = bk * (0.5 - self._a * u * self.width)
        low = bk * self._b * (0.5 + self._a * (1.0 - u) * self.width)
        upper_tail = np.where(u < self.gamma, high, low)
        return np.where(x >= 0, upper_tail, 1.0 - upper_tail)

    def cdf(self, x: npt.ArrayLike) -> np.ndarray:
        return self.sf(-np.asarray(x, dtype=float))

    def isf(self, q: npt.ArrayLike) -> np.ndarray:
        """The x with Pr[X > x] = q (inverting ``sf`` stair by stair)."""
        q = np.asarray(q, dtype=float)
        s = np.where(q <= 0.5, q, 1.0 - q)  # upper-tail probability, then mirror
        with np.errstate(divide="ignore", invalid="ignore"):
            # The stair k with b^(k+1)/2 < s ≤ b^k/2.
            k = np.floor(np.log(2.0 * s) / -self.epsilon)
            bk = np.exp(-self.epsilon * k)
            k = np.where(s > bk / 2.0, k - 1, k)  # guard the rounding of the logarithm
            bk = np.exp(-self.epsilon * k)
            k = np.where(s <= bk * self._b / 2.0, k + 1, k)
            bk = np.exp(-self.epsilon * k)
            at_step = bk * (0.5 - self._a * self.gamma * self.width)  # Pr[X > (k + γ)Δ]
            u_high = (bk / 2.0 - s) / (self._a * bk)
            u_low = self.width - (s - bk * self._b / 2.0) / (self._a * bk * self._b)
            x = k * self.width + np.where(s >= at_step, u_high, u_low)
        x = np.where(s == 0.0, np.inf, x)
        out = np.where(q <= 0.5, x, -x)
        return np.where((q < 0) | (q > 1) | np.isnan(q), np.nan, out)

    def ppf(self, q: npt.ArrayLike) -> np.ndarray:
        """The x with Pr[X ≤ x] = q, i.e. −isf(q) by symmetry (no cancellation in 1 − q)."""
        return -self.isf(q)

    def _power_sums(self) -> tuple[float, float, float, float]:
        """S_j = Σ_k k^j b^k for j = 0..3, in closed form."""
        b, m = self._b, self._one_minus_b
        return 1 / m, b / m**2, b * (1 + b) / m**3, b * (1 + 4 * b + b * b) / m**4

    def mean_absolute(self) -> float:
        """E|X| = 2a Σ_k [b^k ∫ over the high step of x + b^(k+1) ∫ over the low step of x]."""
        s0, s1, _, _ = self._power_sums()
        g, b, d = self.gamma, self._b, self.width
        high = 2 * g * s1 + g * g * s0
        low = b * (2 * (1 - g) * s1 + (1 - g * g) * s0)
        return float(2 * self._a * d * d / 2 * (high + low))

    def var(self) -> float:
        """E[X²] = (2aΔ³/3)·Σ_k [b^k((k+γ)³ − k³) + b^(k+1)((k+1)³ − (k+γ)³)], summed in closed form."""
        s0, s1, s2, _ = self._power_sums()
        g, b, d = self.gamma, self._b, self.width
        high = 3 * g * s2 + 3 * g * g * s1 + g**3 * s0
        low = b * (3 * (1 - g) * s2 + 3 * (1 - g * g) * s1 + (1 - g**3) * s0)
        return float(2 * self._a * d**3 / 3 * (high + low))

    def _rvs(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """G&V's generative description: a sign, a stair G ~ Geometric(1 − b) on {0, 1, ...}, the high step
        with probability γ/(γ + (1 − γ)b), and a uniform position on the chosen step."""
        sign = rng.choice(np.array([-1.0, 1.0]), shape)
        stair = rng.geometric(self._one_minus_b, shape) - 1.0
        p_high = self.gamma / (self.gamma + (1.0 - self.gamma) * self._b)
        high = rng.random(shape) < p_high
        u = rng.random(shape)
        offset = np.where(high, self.gamma * u, self.gamma + (1.0 - self.gamma) * u)
        return sign * (stair + offset) * self.width


class DiscreteStaircaseNoise:
    """The staircase on the integers, for releases on a grid: Pr[z] ∝ r^s(|z|), r = e^(−ε), with
    s(n) = ⌊n/W⌋ + [n mod W ≥ c]: stairs W units wide, the first c units of each on the high step.

    It is ε-DP for integer shifts |v| ≤ W: s is non-decreasing and s(n + W) = s(n) + 1, so
    ||z| − |z − v|| ≤ W implies |s(|z|) − s(|z − v|)| ≤ 1 and the pmf ratio is at most e^ε (the
    argument of G&V's Theorem 3, on ℤ). Sums over a tail have the closed form
    S(m) = Σ_(n ≥ m) r^s(n) = r^G·[(c − j)⁺ + (W − max(j, c))·r] + r^(G+1)·(c + (W − c)r)/(1 − r),
    for m = GW + j.
    """

    __slots__ = ("_log_total", "epsilon", "threshold", "width")

    def __init__(self, epsilon: float, width: int, threshold: int) -> None:
        self.epsilon = check.epsilon(epsilon)
        self.width = check.positive_int(width, "width")
        if not 0 <= threshold <= width:
            raise ParameterError(f"threshold must be an integer in [0, width], got threshold={threshold!r}")
        self.threshold = int(threshold)
        at_zero = 1.0 if self.threshold > 0 else math.exp(-self.epsilon)
        self._log_total = math.log(2.0 * math.exp(self._log_upper_sum(0)) - at_zero)

    def _log_upper_sum(self, m: int) -> float:
        stair, j = divmod(m, self.width)
        r = math.exp(-self.epsilon)
        c, w = self.threshold, self.width
        inside = max(c - j, 0) + (w - max(j, c)) * r
        beyond = r * (c + (w - c) * r) / -math.expm1(-self.epsilon)
        return -self.epsilon * stair + math.log(inside + beyond)

    def log_abs_tail(self, m: int) -> float:
        """ln Pr[|Z| > m] for an integer m ≥ 0."""
        return math.log(2.0) + self._log_upper_sum(m + 1) - self._log_total

    def half_width(self, tail: float) -> int:
        """The smallest integer a ≥ 0 with Pr[|Z| > a] ≤ tail."""
        guess = self.width * (math.log(2.0 / tail) / self.epsilon - 1.0)  # whole stairs only
        return integer_half_width(self.log_abs_tail, tail, guess)

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        """Exact draws on OS randomness (``dpdash.sampling``): a stair G with Pr[G ≥ g] = e^(−εg), a
        position j uniform on the stair kept with probability e^(−ε) when j ≥ c (else redrawn), a sign;
        (−, 0) is rejected so that 0 is not counted twice (as in CKS Algorithm 2)."""
        n = math.prod(shape)
        epsilon = Fraction(self.epsilon)
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        while todo.size:
            stair = sample_geometric(1 / epsilon, todo.size)
            position = sampling.uniform_integers(self.width, todo.size)
            high = np.flatnonzero(position >= self.threshold)
            while high.size:  # keep a high-step position with probability e^(−ε)
                kept = sampling.bernoulli_exp(epsilon, high.size).astype(bool)
                redo = high[~kept]
                position[redo] = sampling.uniform_integers(self.width, redo.size)
                high = redo[position[redo] >= self.threshold]
            magnitude = stair * self.width + position
            negative = sampling.uniform_integers(2, todo.size).astype(bool)
            valid = ~(negative & (magnitude == 0))
            out[todo[valid]] = np.where(negative, -magnitude, magnitude)[valid]
            todo = todo[~valid]
        return out.reshape(shape)


@dataclass(frozen=True, slots=True, kw_only=True)
class Staircase(NoiseMechanism):
    """Add staircase noise: (ε, 0)-DP, with the least expected |noise| among all ε-DP additive noises
    (G&V Theorem 4). At large ε its expected |noise| falls like Δe^(−ε/2), against Δ/ε for Laplace.

    Args:
        epsilon: ε > 0.
        sensitivity: Δ: neighbours change one coordinate by at most Δ (the staircase's guarantee is
            per coordinate; it does not scale with an ℓ1 norm as Laplace noise does).
        gamma: the step position γ in [0, 1]; ``None`` (default) takes the ℓ1-optimal
            γ* = 1/(1 + e^(ε/2)). Pass ``optimal_gamma(epsilon, "l2")`` for the least variance.

    ``scale`` is Δ, the width of one stair.

    >>> m = Staircase(epsilon=1.0, sensitivity=1.0)
    >>> round(m.gamma, 4), round(m.accuracy(0.95), 4)
    (0.3775, 2.9959)
    """

    name: ClassVar[str] = "Staircase"
    sensitivity_norm: ClassVar[str] = "coordinate"
    delta: ClassVar[float] = 0.0  # pure ε-DP

    epsilon: float
    sensitivity: float
    gamma: float | None = None
    _noise: StaircaseNoise = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._set("epsilon", check.epsilon(self.epsilon))
        self._check_sensitivity()
        if self.gamma is None:
            self._set("gamma", optimal_gamma(self.epsilon, "l1"))
        else:
            gamma = check.non_negative_finite(self.gamma, "gamma")
            if gamma > 1.0:
                raise ParameterError(f"gamma must be a number in [0, 1], got gamma={self.gamma!r}")
            self._set("gamma", gamma)
        self._set("_noise", StaircaseNoise(self.epsilon, self.sensitivity, self.gamma))

    @property
    def scale(self) -> float:
        """Δ, the width of one stair."""
        return self.sensitivity

    @property
    def noise(self) -> StaircaseNoise:
        return self._noise

    def tail(self, half_width: float) -> float:
        """Pr[|X| > a] = 2·Pr[X > a]."""
        a = check.non_negative_finite(half_width, "half_width")
        return float(2.0 * self._noise.sf(a))

    def _half_width(self, tail: float) -> float:
        return float(self._noise.isf(tail / 2.0))

    def _profile(self, eps: np.ndarray) -> np.ndarray:
        # The loss ln f(x)/f(x − Δ) takes only the values ε, 0, −ε; it is ε on x ≤ 0 (mass 1/2) and on
        # 0 < x < min(γ, 1 − γ)Δ (density a), so δ(ε′) = Pr[L = ε]·(1 − e^(ε′ − ε)) for ε′ < ε.
        noise = self._noise
        mass = 0.5 + noise._a * min(self.gamma, 1.0 - self.gamma) * self.sensitivity
        return np.where(eps < self.epsilon, mass * -np.expm1(eps - self.epsilon), 0.0)

    def _draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        return self._noise.rvs(size, random_state=rng)

    def release_plan(self, k: int = 1) -> ReleasePlan:
        """Round the answers to a grid g = 2^j and add an exact discrete staircase in grid units.

        Neighbours change one answer by at most Δ; after rounding (≤ g/2 each side) it differs by at
        most W = ⌊Δ/g⌋ + 1 units, and the discrete staircase with stairs W units wide is ε-DP for such
        shifts (see ``DiscreteStaircaseNoise``). Its high step covers c = ⌈γW⌉ of the W units.
        """
        check.positive_int(k, "k")
        grid = grid_for(self.sensitivity, 1)
        width = math.floor(self.sensitivity / grid.step) + 1
        threshold = math.ceil(Fraction(self.gamma) * width)
        return ReleasePlan(grid, DiscreteStaircaseNoise(self.epsilon, width, threshold))
