"""Report Noisy Max (Dwork & Roth 2014, §3.3, Claim 3.9) on integer scores, with exact discrete noise."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from dpdash import _validation as check
from dpdash import sampling
from dpdash.accuracy import simultaneous_tail
from dpdash.errors import ParameterError
from dpdash.mechanisms.geometric import DiscreteLaplaceNoise
from dpdash.mechanisms.selection import SelectionMechanism, exact_utilities, row_chunks
from dpdash.sampling.discrete_laplace import MAX_SCALE

__all__ = ["ReportNoisyMax"]

# Window half-width, in noise scales, beyond which the selection probabilities neglect < 3·10⁻²⁰.
_LOG_NEGLIGIBLE = 45.0
# Most (value, candidate) terms ``probabilities`` sums: about ten seconds.
_MAX_TERMS = 2**26


def _integer_scores(utilities: npt.ArrayLike) -> np.ndarray:
    exact = exact_utilities(utilities)
    if any(u.denominator != 1 for u in exact):
        raise ParameterError(
            "utilities must be integers (counts) for report-noisy-max with discrete noise, got "
            f"{[float(u) for u in exact[:5]]}{' ...' if len(exact) > 5 else ''}; use the exponential "
            "mechanism or permute-and-flip for real-valued utilities"
        )
    values = [int(u) for u in exact]
    if max(abs(v) for v in values) >= 2**62:
        raise ParameterError(
            f"utilities must have magnitude below 2**62 for report-noisy-max (int64 scores), got "
            f"{max(values, key=abs)!r}; shift the scores"
        )
    return np.array(values, dtype=np.int64)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportNoisyMax(SelectionMechanism):
    """Add independent noise to each of m integer scores (counts) and return only the index of the
    largest noisy score (ties: the lowest index).

    The textbook mechanism adds Lap(1/ε) to counting queries (Dwork & Roth, Claim 3.9). dpdash adds its
    integer analogue, discrete Laplace noise Pr[Z = z] ∝ exp(−|z|/b), because the scores are integers
    and the noise must be sampled exactly:

    - b = Δu/ε for ``monotone`` scores (neighbours move every score in the same direction by at most
      Δu: counts under add/remove), b = 2Δu/ε otherwise. (ε, 0)-DP. The proof of Claim 3.9 carries over
      verbatim: fixing the other noises, candidate i wins exactly when its noise is ≥ an integer
      threshold r*, which moves by at most Δu (monotone) or 2Δu between neighbours, and the discrete
      Laplace has Pr[Z ≥ r + Δ] ≥ e^(−Δ/b)·Pr[Z ≥ r] for every integer r. Lowest-index tie-breaking
      keeps "i wins" a threshold event.
    - Only the index is released; releasing the noisy scores too would cost far more (their vector has
      sensitivity m·Δu).

    Exact selection probabilities: with F the noise cdf,
    Pr[i] = Σ_v Pr[Z = v − s_i]·Π_(j<i) F(v − s_j − 1)·Π_(j>i) F(v − s_j), summed over the values v
    within 45 noise scales (plus ln m) of the top score (the neglected mass is below 3·10⁻²⁰).

    Release-grade: exact discrete Laplace draws (``dpdash.sampling.discrete_laplace``) on OS randomness.

    Args:
        epsilon: ε > 0.
        sensitivity: Δu, an integer ≥ 1 (counts: c rows per person).
        monotone: True (default) for counts under add/remove.

    >>> rnm = ReportNoisyMax(epsilon=1.0, sensitivity=1)
    >>> rnm.noise_scale
    1.0
    >>> rnm.probabilities([10, 12, 11]).round(4).tolist()
    [0.1204, 0.7257, 0.1539]
    """

    name: ClassVar[str] = "Report noisy max"

    sensitivity: int = 1  # the base class's fields, with the defaults of counts
    monotone: bool = True

    def __post_init__(self) -> None:
        self._validate()
        sensitivity = check.integer_sensitivity(self.sensitivity, "report-noisy-max")
        object.__setattr__(self, "sensitivity", sensitivity)

    @property
    def _scale(self) -> Fraction:
        return 1 / self.factor  # b = Δu/ε (monotone) or 2Δu/ε, exactly

    def _drawable_scale(self) -> Fraction:
        """b, refused beyond the exact sampler's limit (numpy's sampler would saturate there too)."""
        if self._scale > MAX_SCALE:
            raise ParameterError(
                f"the noise scale b = {self.noise_scale:.3g} of report-noisy-max exceeds 2**40, the largest "
                "the exact sampler draws; use a larger epsilon or a smaller sensitivity"
            )
        return self._scale

    @property
    def noise_scale(self) -> float:
        """b: Δu/ε for monotone scores, 2Δu/ε otherwise."""
        return float(self._scale)

    def probabilities(self, utilities: npt.ArrayLike) -> np.ndarray:
        """The exact winning probability of each candidate (class docstring)."""
        s = _integer_scores(utilities)
        m = s.size
        if m == 1:
            return np.ones(1)
        b = self.noise_scale
        log_r = -1.0 / b
        log_norm = math.log(-math.expm1(log_r)) - math.log1p(math.exp(log_r))  # ln((1 − r)/(1 + r))
        half = math.ceil(b * (_LOG_NEGLIGIBLE + math.log(m))) + 1
        if (2 * half + 1) * m > _MAX_TERMS:
            raise ParameterError(
                f"the exact selection probabilities at noise scale b = {b:.3g} need {2 * half + 1:,} terms "
                f"per candidate, more than dpdash sums ({_MAX_TERMS:,} in all); use a larger epsilon to see "
                "them (release and simulate still work)"
            )
        top = int(s.max())
        values = np.arange(top - half, top + half + 1, dtype=np.int64)
        out = np.zeros(m)
        for start in range(0, values.size, 512):
            v = values[start : start + 512]
            z = v[None, :] - s[:, None]  # (m, V)
            log_le = _log_cdf(z, log_r)  # ln F(v − s_j)
            log_lt = _log_cdf(z - 1, log_r)  # ln F(v − s_j − 1)
            # For candidate i: Σ_(j<i) ln F(v − s_j − 1) + Σ_(j>i) ln F(v − s_j).
            before = np.vstack([np.zeros((1, v.size)), np.cumsum(log_lt, axis=0)[:-1]])
            after = np.vstack([np.cumsum(log_le[::-1], axis=0)[::-1][1:], np.zeros((1, v.size))])
            log_pmf = log_norm + np.abs(z) * log_r
            out += np.exp(log_pmf + before + after).sum(axis=1)
        return out

    def release_trials(self, values: npt.ArrayLike, n: int) -> np.ndarray:
        """n independent selections argmax_i (s_i + Z_i), exact discrete Laplace Z_i of scale b drawn for
        every row and candidate (``dpdash.sampling.discrete_laplace``); ties: the lowest index."""
        s = _integer_scores(values)
        count = check.draws(n, "n", s.size)
        scale = self._drawable_scale()
        out = np.zeros(count, dtype=np.int64)
        for start, stop in row_chunks(count, s.size):
            noisy = s[None, :] + sampling.discrete_laplace(scale, (stop - start, s.size))
            out[start:stop] = np.argmax(noisy, axis=1)  # argmax returns the first maximum
        return out

    def _draw(self, utilities: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        s = np.rint(utilities).astype(np.int64)
        p = -math.expm1(-1.0 / self.noise_scale)
        shape = (size, s.size)
        noise = rng.geometric(p, shape).astype(np.int64) - rng.geometric(p, shape).astype(np.int64)
        return np.argmax(s[None, :] + noise, axis=1)

    def simulate(
        self, utilities: npt.ArrayLike, size: int, rng: np.random.Generator | int | None = None
    ) -> np.ndarray:
        """``size`` possible selections (previews only): the same discrete noise, drawn with numpy."""
        s = _integer_scores(utilities)
        n = check.draws(size, "size", s.size)
        self._drawable_scale()
        generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        return self._draw(s.astype(float), generator, n)

    def utility_gap(self, confidence: float = 0.95, candidates: int = 1) -> float:
        """2a, a the exact half-width with Pr[max_r |Z_r| ≤ a] ≥ confidence: the winner w has
        s_w + Z_w ≥ s* + Z*, so s_w ≥ s* − (Z_w − Z*) ≥ s* − 2·max_r |Z_r|."""
        m = check.positive_int(candidates, "candidates")
        return 2.0 * DiscreteLaplaceNoise(self._scale).half_width(simultaneous_tail(confidence, m))


def _log_cdf(z: np.ndarray, log_r: float) -> np.ndarray:
    """ln Pr[Z ≤ z] for discrete Laplace: z ≤ 0: −z·ln r − ln(1 + r); z ≥ 0: ln(1 − r^(z+1)/(1 + r))."""
    log_1pr = math.log1p(math.exp(log_r))
    neg = -z * log_r - log_1pr
    with np.errstate(over="ignore"):
        pos = np.log1p(-np.exp((np.maximum(z, 0) + 1) * log_r - log_1pr))
    return np.where(z < 0, neg, pos)
