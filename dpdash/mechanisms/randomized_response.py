"""Randomized response, binary (Warner 1965) and k-ary ("generalised", Kairouz, Oh & Viswanath 2016;
Wang, Blocki, Li & Jha 2017), with the unbiased estimator of the shares and its variance."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from scipy import stats

from dpdash import _validation as check
from dpdash import sampling
from dpdash.errors import ParameterError
from dpdash.sampling.exact_math import Bounds, exp_bounds
from dpdash.sampling.thresholds import IndexedThresholds

__all__ = ["RandomizedResponse"]

_PREC = 128
_GUARD = 16


@dataclass(frozen=True, slots=True, kw_only=True)
class RandomizedResponse:
    """Each respondent reports their true category with probability p = e^ε/(e^ε + k − 1) and each
    other category with probability q = 1/(e^ε + k − 1); k = 2 is the binary mechanism, whose p is
    e^ε/(1 + e^ε). The ratio p/q = e^ε makes each report ε-DP with respect to that respondent's value
    (ε-local DP); δ(ε′) = (e^ε − e^ε′)⁺/(e^ε + k − 1).

    Estimator. With n reports of which a share ȳ_v is v, E[ȳ_v] = q + π_v·(p − q), so
    π̂_v = (ȳ_v − q)/(p − q) is unbiased for the true share π_v. For respondents drawn from a
    population with share π_v its variance is ỹ(1 − ỹ)/(n(p − q)²), ỹ = q + π_v(p − q) (n·ȳ_v is
    Binomial(n, ỹ)); for k = 2, p − q = 2p − 1 as in MATH.md: at ε = 1, n = 1000, π = 0.5,
    p = 0.731059 and the variance is 0.0011707. For a fixed table it is smaller by π_v(1 − π_v)/n
    (``estimator_variance(fixed=True)``).

    Release-grade sampling, exact: each report keeps the true value unless an exact Bernoulli trial
    with probability (k − 1)q = (k − 1)e^(−ε)/(1 + (k − 1)e^(−ε)) (an irrational number, compared with
    a lazily read uniform through rigorous bounds on e^(−ε), as ``dpdash.sampling.bernoulli_exp``
    does) says "replace"; the replacement is an exact uniform draw among the k − 1 other categories.

    Args:
        epsilon: ε > 0.
        categories: k ≥ 2, the number of categories (values are 0 … k − 1).

    >>> rr = RandomizedResponse(epsilon=1.0)
    >>> round(rr.keep_probability, 6), round(rr.estimator_variance(share=0.5, n=1000), 7)
    (0.731059, 0.0011707)
    >>> reports = rr.release([0, 1, 1, 0])
    >>> reports.shape, set(reports.tolist()) <= {0, 1}
    ((4,), True)
    """

    name: ClassVar[str] = "Randomized response"
    delta: ClassVar[float] = 0.0

    epsilon: float
    categories: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check.epsilon(self.epsilon))
        k = check.positive_int(self.categories, "categories")
        if k < 2:
            raise ParameterError(f"categories must be an integer >= 2, got categories={self.categories!r}")
        object.__setattr__(self, "categories", k)

    # ---- the mechanism ------------------------------------------------------------------------------
    @property
    def keep_probability(self) -> float:
        """p = e^ε/(e^ε + k − 1) = 1/(1 + (k − 1)e^(−ε))."""
        return 1.0 / (1.0 + (self.categories - 1) * math.exp(-self.epsilon))

    @property
    def other_probability(self) -> float:
        """q = 1/(e^ε + k − 1), the probability of reporting one given other category."""
        return math.exp(-self.epsilon) / (1.0 + (self.categories - 1) * math.exp(-self.epsilon))

    @property
    def replace_probability(self) -> float:
        """(k − 1)·q: the probability that a report is not the true value."""
        return (self.categories - 1) * self.other_probability

    @property
    def rho(self) -> float:
        """ε²/2 (ε-DP implies ε²/2-zCDP)."""
        return self.epsilon**2 / 2.0

    def transition_matrix(self) -> np.ndarray:
        """T[v, w] = Pr[report w | true value v]: p on the diagonal, q elsewhere."""
        k = self.categories
        t = np.full((k, k), self.other_probability)
        np.fill_diagonal(t, self.keep_probability)
        return t

    def privacy_profile(self, epsilons: npt.ArrayLike) -> np.ndarray:
        """δ(ε′) = (p − e^ε′·q)⁺ = (e^ε − e^ε′)⁺/(e^ε + k − 1), for one respondent's report."""
        eps = check.non_negative_array(epsilons, "epsilons").astype(float)
        return np.clip(self.keep_probability - np.exp(eps) * self.other_probability, 0.0, 1.0)

    # ---- estimation -----------------------------------------------------------------------------------
    def estimate(self, reports: npt.ArrayLike) -> np.ndarray:
        """π̂_v = (ȳ_v − q)/(p − q) for every category v, from the reports (unbiased; may leave [0, 1])."""
        r = self._values(reports, "reports")
        return self.estimate_from_counts(np.bincount(r, minlength=self.categories))

    def estimate_from_counts(self, counts: npt.ArrayLike) -> np.ndarray:
        """π̂ from the number of reports of each category."""
        c = np.asarray(counts, dtype=float)
        if c.shape != (self.categories,) or np.any(c < 0) or not np.all(np.isfinite(c)):
            raise ParameterError(
                f"counts must be {self.categories} non-negative numbers, got counts={counts!r}"
            )
        n = c.sum()
        if n == 0:
            raise ParameterError("counts must hold at least one report")
        p, q = self.keep_probability, self.other_probability
        return (c / n - q) / (p - q)

    def observed_share(self, share: float) -> float:
        """ỹ = q + π(p − q): the expected share of reports of a category whose true share is π."""
        pi = check.non_negative_finite(share, "share")
        if pi > 1.0:
            raise ParameterError(f"share must be a number in [0, 1], got share={share!r}")
        return self.other_probability + pi * (self.keep_probability - self.other_probability)

    def estimator_variance(self, *, share: float, n: int, fixed: bool = False) -> float:
        """Var[π̂] for n respondents and true share π.

        ``fixed=False`` (MATH.md): respondents drawn at random from a population with share π, so each
        report is v with probability ỹ and n·ȳ is Binomial(n, ỹ): Var = ỹ(1 − ỹ)/(n(p − q)²).
        ``fixed=True``: the n respondents' values are given (a table with n·π of them in v), so only the
        mechanism is random: n·ȳ is Binomial(nπ, p) + Binomial(n(1 − π), q), and
        Var = (π·p(1 − p) + (1 − π)·q(1 − q))/(n(p − q)²) = the above − π(1 − π)/n.
        """
        y = self.observed_share(share)  # validates the share
        pi = float(share)
        n = check.positive_int(n, "n")
        p, q = self.keep_probability, self.other_probability
        spread = pi * p * (1.0 - p) + (1.0 - pi) * q * (1.0 - q) if fixed else y * (1.0 - y)
        return spread / (n * (p - q) ** 2)

    def accuracy(self, *, n: int, confidence: float = 0.95, share: float | None = None) -> float:
        """The smallest a with Pr[|π̂ − π| ≤ a] ≥ confidence for one category.

        Exact for respondents drawn from a population (n·ȳ ~ Binomial(n, ỹ)) at the given share;
        ``share=None`` takes the largest such a over the shares 0, 0.01, …, 1 and the share with
        ỹ = 1/2. For a fixed table the report count is a sum of independent Bernoulli trials with mean
        probability ỹ, which lies in any interval around its mean that is at least one count wide on
        each side with at least the binomial's probability (Hoeffding, "On the distribution of the
        number of successes in independent trials", 1956), so a is then conservative.
        """
        n = check.positive_int(n, "n")
        c = check.open_unit(confidence, "confidence")
        p, q = self.keep_probability, self.other_probability
        if share is None:
            candidates = [q + t * (p - q) for t in np.linspace(0.0, 1.0, 101)] + [min(max(0.5, q), p)]
        else:
            candidates = [self.observed_share(share)]
        radius = max(_binomial_radius(n, y, c) for y in candidates)
        return float(radius / (n * (p - q)))

    # ---- sampling -------------------------------------------------------------------------------------
    def _values(self, values: npt.ArrayLike, name: str) -> np.ndarray:
        array = check.numeric_array(values, name, kinds="iubf")
        wrong = f"{name} must be category indices 0 … {self.categories - 1}, got {name}={values!r}"
        if array.dtype.kind == "f" and not (np.all(np.isfinite(array)) and np.all(array == np.round(array))):
            raise ParameterError(wrong)
        if array.size and (array.min() < 0 or array.max() >= self.categories):  # before any int64 cast
            raise ParameterError(wrong)
        return array.astype(np.int64).ravel()

    def simulate(
        self, values: npt.ArrayLike, size: int = 1, rng: np.random.Generator | int | None = None
    ) -> np.ndarray:
        """``size`` possible report vectors for ``values`` (shape (size, n)), for previews only."""
        v = self._values(values, "values")
        n = check.draws(size, "size", v.size)
        generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        replace = generator.random((n, v.size)) < self.replace_probability
        shift = generator.integers(1, self.categories, (n, v.size))
        return np.where(replace, (v[None, :] + shift) % self.categories, v[None, :])

    def release(self, values: npt.ArrayLike) -> np.ndarray:
        """Each respondent's report, exact on OS randomness (class docstring). No seed, on purpose.
        (One draw of ``release_trials``: the same code.)"""
        return self.release_trials(values, 1).reshape(np.shape(values))

    def release_trials(self, values: npt.ArrayLike, n: int) -> np.ndarray:
        """n independent outputs of ``release(values)``, release-grade (exact trials on OS randomness, the
        same code as ``release``): int64 reports of shape (n, *shape(values)), each of the n·size(values)
        reports drawn independently. For an empirical privacy audit."""
        v = self._values(values, "values")
        count = check.draws(n, "n", v.size)
        truth = np.tile(v, count)
        out = truth.copy()
        if truth.size:
            replace = _replace_table(Fraction(self.epsilon), self.categories).less(None, truth.size)
            where = np.flatnonzero(replace)
            if where.size:
                other = sampling.uniform_integers(self.categories - 1, where.size)
                out[where] = other + (other >= truth[where])  # uniform over the k − 1 other values
        return out.reshape((count, *np.shape(values)))

    def parameters(self) -> dict[str, float | int]:
        return {"epsilon": self.epsilon, "categories": self.categories}


def _binomial_radius(n: int, y: float, confidence: float) -> float:
    """The smallest r with Pr[|X − ny| ≤ r] ≥ confidence for X ~ Binomial(n, y), r a distance from ny to
    an integer (bisection on r, then snapped to the farthest integer the interval includes)."""
    mean = n * y

    def coverage(r: float) -> float:
        upper, lower = math.floor(mean + r), math.ceil(mean - r)
        return float(stats.binom.cdf(upper, n, y) - stats.binom.cdf(lower - 1, n, y))

    lo, hi = 0.0, float(n) + 1.0
    for _ in range(200):
        if coverage(lo) >= confidence:
            break
        mid = (lo + hi) / 2.0
        if coverage(mid) >= confidence:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-9:
            break
    r = lo if coverage(lo) >= confidence else hi
    return max(mean - math.ceil(mean - r), math.floor(mean + r) - mean, 0.0)


def _replace_bounds(epsilon: Fraction, k: int, prec: int) -> Bounds:
    """Bounds on T·2^prec, T = (k − 1)x/(1 + (k − 1)x) with x = e^(−ε): increasing in x, so the bounds on
    x give bounds on T, rounded outward."""
    work = prec + _GUARD
    lo, hi = exp_bounds(-epsilon, work)
    one = 1 << work
    t_lo = ((k - 1) * lo << prec) // (one + (k - 1) * lo)
    t_hi = -((-((k - 1) * hi << prec)) // (one + (k - 1) * hi))
    return t_lo, t_hi


@lru_cache(maxsize=128)
def _replace_table(epsilon: Fraction, k: int) -> IndexedThresholds:
    """The one-entry table of the replacement probability (k − 1)e^(−ε)/(1 + (k − 1)e^(−ε))."""
    lo, hi = _replace_bounds(epsilon, k, _PREC)
    return IndexedThresholds([lo], [hi], _PREC, lambda _key, prec: _replace_bounds(epsilon, k, prec))
