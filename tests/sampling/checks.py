"""Statistical checks and a scripted bit source for the tests of ``dpdash.sampling``.

The samplers draw from the OS CSPRNG and take no seed, so statistical tests cannot be made
reproducible by seeding; they use large samples and a low false-alarm threshold instead: each
goodness-of-fit test fails when its p-value is below ``P_MIN = 1e-6`` (a correct sampler fails one
given test with probability 10^−6, the suite's few dozen such tests together with probability under
10^−4 a run; at 1e-4 a correct sampler did fail one in a run).
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
from scipy import stats

#: Fail a goodness-of-fit test below this p-value.
P_MIN = 1e-6
#: Pool neighbouring values until every bin expects at least this many draws.
MIN_EXPECTED = 20


def pool(expected: np.ndarray, min_expected: float = MIN_EXPECTED) -> np.ndarray:
    """Bin labels for consecutive cells so that each bin's expected count is ≥ ``min_expected``.

    Greedy from the left; the remainder at the right end joins the last bin. Unimodal distributions
    thus keep single values near the mode and pooled tails.
    """
    labels = np.empty(expected.size, dtype=np.int64)
    label, acc = 0, 0.0
    for i, e in enumerate(expected):
        labels[i] = label
        acc += e
        if acc >= min_expected:
            label += 1
            acc = 0.0
    if acc < min_expected and label > 0:
        labels[labels == label] = label - 1
    return labels


def chisquare_pmf(samples: np.ndarray, values: np.ndarray, probs: np.ndarray) -> tuple[float, int]:
    """Pooled chi-square test of integer ``samples`` against a pmf on consecutive ``values``.

    ``probs`` need not sum to exactly 1 (the window may leave out a negligible tail): it is
    normalised, and samples outside the window count in the end cells.

    Returns:
        The p-value and the number of bins.
    """
    n = samples.size
    idx = np.clip(samples - values[0], 0, values.size - 1)
    counts = np.bincount(idx, minlength=values.size).astype(float)
    expected = n * probs / probs.sum()
    labels = pool(expected)
    obs = np.bincount(labels, weights=counts)
    exp = np.bincount(labels, weights=expected)
    return float(stats.chisquare(obs, exp).pvalue), int(obs.size)


def chisquare_cdf(samples: np.ndarray, edges: np.ndarray, cdf) -> tuple[float, int]:
    """Chi-square test with bins (−∞, e_0], (e_0, e_1], …, (e_last, ∞) given a CDF at integers."""
    edges = np.unique(edges)
    cum = np.concatenate([[0.0], cdf(edges), [1.0]])
    expected = samples.size * np.diff(cum)
    counts = np.bincount(np.searchsorted(edges, samples, side="left"), minlength=edges.size + 1)
    return float(stats.chisquare(counts, expected).pvalue), int(counts.size)


def chisquare_two_sample(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample chi-square (homogeneity) test of two integer samples, sparse values pooled."""
    low = min(a.min(), b.min())
    size = max(a.max(), b.max()) - low + 1
    ca = np.bincount(a - low, minlength=size).astype(float)
    cb = np.bincount(b - low, minlength=size).astype(float)
    # under H0 the smaller sample's expected count in a cell is its share of the combined count
    share = min(a.size, b.size) / (a.size + b.size)
    labels = pool((ca + cb) * share, min_expected=10)
    table = np.vstack([np.bincount(labels, weights=ca), np.bincount(labels, weights=cb)])
    return float(stats.chi2_contingency(table).pvalue)


def within_standard_errors(successes: int, n: int, p: float, k: float = 5.0) -> bool:
    """Whether a binomial count is within ``k`` standard errors of ``n·p`` (exact at p = 0, 1)."""
    se = (n * p * (1 - p)) ** 0.5
    return abs(successes - n * p) <= k * se


def discrete_gaussian_pmf(sigma_squared: float, half_width: int) -> tuple[np.ndarray, np.ndarray]:
    """The discrete Gaussian pmf on [−half_width, half_width], normalised by direct summation."""
    values = np.arange(-half_width, half_width + 1)
    weights = np.exp(-(values.astype(float) ** 2) / (2 * sigma_squared))
    return values, weights / weights.sum()


class ScriptedBits:
    """A deterministic bit source: the given chunks in order, each request's size checked."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)

    def __call__(self, n: int) -> bytes:
        assert self.chunks, f"the sampler asked for {n} more bytes than scripted"
        chunk = self.chunks.pop(0)
        assert len(chunk) == n, f"the sampler asked for {n} bytes, the script has {len(chunk)}"
        return chunk

    @property
    def done(self) -> bool:
        return not self.chunks


def prefix_script(prefix64: int, *more_words: int) -> list[bytes]:
    """Chunks making a uniform's first 64 bits ``prefix64``, then 64-bit ``more_words``.

    The samplers read a uniform as a 16-bit little-endian word (bits 1–16), the top 48 bits of a
    little-endian 64-bit word (bits 17–64), then whole little-endian 64-bit words.
    """
    high16 = prefix64 >> 48
    low48 = prefix64 & (2**48 - 1)
    chunks = [high16.to_bytes(2, "little"), (low48 << 16).to_bytes(8, "little")]
    chunks += [w.to_bytes(8, "little") for w in more_words]
    return chunks


def decide(value: Decimal, prefix: int, nbits: int) -> bool | None:
    """``V < value`` for all V with this ``nbits``-bit prefix (True/False); None if unsettled."""
    with localcontext() as ctx:
        ctx.prec = 700
        scaled = value * (Decimal(2) ** nbits)
        if prefix + 1 <= scaled:
            return True
        if prefix >= scaled:
            return False
        return None


def floor_scaled(value: Decimal, nbits: int) -> int:
    """⌊value · 2**nbits⌋ with ample decimal precision."""
    with localcontext() as ctx:
        ctx.prec = 700
        return int((value * (Decimal(2) ** nbits)).to_integral_value(rounding="ROUND_FLOOR"))


def exp_decimal(x) -> Decimal:
    """e^x for a rational x, to 600 significant digits (Decimal's exp is correctly rounded)."""
    with localcontext() as ctx:
        ctx.prec = 600
        return (Decimal(x.numerator) / Decimal(x.denominator)).exp()
