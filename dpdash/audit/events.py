"""The distinguishing event: chosen on one half of the trials, counted on the other.

The trials' outputs are reduced to one number each (a statistic) and binned: exactly, by value, when
they take at most ``MAX_EXACT_VALUES`` values (integer noise, selected indices), otherwise into bins at
quantiles of the pooled search half. Candidate events are unions of bins of two shapes:

- ``"thresholds"``: every prefix and every suffix of the bins in value order ({y ≤ t}, {y > t}): by
  Neyman–Pearson the best events when the likelihood ratio is monotone in y (Laplace, Gaussian,
  geometric, discrete Gaussian and staircase noise on an answer or a projection);
- ``"sets"``: prefixes of the bins sorted by their empirical ratio, for unordered outputs with few
  values (a selected index, a reported category); DP-Sniper (Bichsel et al. 2021) learns such
  likelihood-ratio sets with a classifier.

Each candidate, in each direction (first over second, second over first), is scored by the lower bound
it would give on the search half; the best one is then counted on the evaluation half, which it has
not seen, so the Clopper–Pearson bounds hold for it as for any fixed event.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpdash.audit.bounds import epsilon_lower_bound

__all__ = ["FAMILIES", "MAX_EXACT_VALUES", "Binning", "Event", "best_event"]

#: At most this many distinct values: one bin per value; otherwise quantile bins.
MAX_EXACT_VALUES = 2048
#: Quantile bins: about this many search trials per bin, between 16 and 1024 bins.
TRIALS_PER_BIN = 200


@dataclass(frozen=True, slots=True)
class Binning:
    """Bins of a statistic: exact values (``values``) or intervals between ``edges``
    ((−∞, e₀], (e₀, e₁], …, (e_last, ∞))."""

    values: np.ndarray | None
    edges: np.ndarray | None

    @staticmethod
    def fit(first: np.ndarray, second: np.ndarray, *, ordered: bool = False) -> Binning:
        """Bins for the pooled search samples. With few distinct values v₀ < … < v_last: one bin per value,
        exact (``ordered=False``: a value the search never saw is in no bin), or for ordered statistics the
        intervals (−∞, v₀], (v₀, v₁], …, (v_(last−1), ∞), so that a threshold event is exactly {y ≤ v}
        or {y > v} for every output, seen or not."""
        pooled = np.concatenate([first, second])
        distinct = np.unique(pooled)
        if distinct.size <= MAX_EXACT_VALUES:
            return Binning(None, distinct[:-1]) if ordered else Binning(distinct, None)
        bins = int(np.clip(pooled.size // TRIALS_PER_BIN, 16, 1024))
        edges = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, bins + 1)[1:-1], method="inverted_cdf"))
        return Binning(None, edges)

    @property
    def size(self) -> int:
        return int(self.values.size) if self.values is not None else int(self.edges.size) + 1  # type: ignore[union-attr]

    def index(self, samples: np.ndarray) -> np.ndarray:
        """The bin of each sample; −1 for an exact value the search half never produced (in no event)."""
        if self.values is None:
            return np.searchsorted(self.edges, samples, side="left")  # type: ignore[arg-type]
        where = np.searchsorted(self.values, samples)
        clipped = np.minimum(where, self.values.size - 1)
        return np.where(self.values[clipped] == samples, clipped, -1)

    def counts(self, samples: np.ndarray) -> np.ndarray:
        """Samples per bin."""
        idx = self.index(samples)
        return np.bincount(idx[idx >= 0], minlength=self.size)

    def describe(self, selected: np.ndarray) -> str:
        """The event in words: intervals of the statistic (or a set of values)."""
        bins = np.flatnonzero(selected)
        if self.values is not None:
            shown = self.values[bins]
            if bins.size == self.size:
                return "any output"
            if bins.size and bins[-1] - bins[0] + 1 == bins.size:  # contiguous in value order
                lo, hi = shown[0], shown[-1]
                if bins[0] == 0:
                    return f"output ≤ {_fmt(hi)}"
                if bins[-1] == self.size - 1:
                    return f"output ≥ {_fmt(lo)}"
                return f"{_fmt(lo)} ≤ output ≤ {_fmt(hi)}"
            listed = ", ".join(_fmt(v) for v in shown[:12])
            return f"output in {{{listed}{', …' if shown.size > 12 else ''}}}"
        parts = [_interval(lo, hi) for lo, hi in self.intervals(selected)]
        return " or ".join(parts[:6]) + (" or …" if len(parts) > 6 else "")

    def intervals(self, selected: np.ndarray) -> list[tuple[float, float]]:
        """The event as disjoint intervals (lo, hi] of the statistic (exact values: [v, v])."""
        bins = np.flatnonzero(selected)
        if self.values is not None:
            return [(float(self.values[b]), float(self.values[b])) for b in bins]
        lows = np.concatenate([[-np.inf], self.edges])  # type: ignore[list-item]
        highs = np.concatenate([self.edges, [np.inf]])  # type: ignore[list-item]
        out: list[tuple[float, float]] = []
        for b in bins:
            if out and out[-1][1] == lows[b]:
                out[-1] = (out[-1][0], float(highs[b]))
            else:
                out.append((float(lows[b]), float(highs[b])))
        return out


@dataclass(frozen=True, slots=True)
class Event:
    """A set of bins, and which side it favours: ``forward`` means Pr[first ∈ S] ≫ Pr[second ∈ S]."""

    binning: Binning
    selected: np.ndarray  # bool per bin
    forward: bool
    search_bound: float  # the lower bound it gave on the search half

    def hits(self, samples: np.ndarray) -> int:
        """How many samples fall in the event."""
        idx = self.binning.index(samples)
        return int(np.count_nonzero(self.selected[idx[idx >= 0]]))

    def contains(self, samples: np.ndarray) -> np.ndarray:
        """A bool per sample."""
        idx = self.binning.index(samples)
        return np.where(idx >= 0, self.selected[np.maximum(idx, 0)], False)

    def describe(self) -> str:
        return self.binning.describe(self.selected)


#: The event families: thresholds suit an ordered statistic whose likelihood ratio is monotone (noisy
#: answers, projections); likelihood-ratio sets suit unordered outputs with few values (a selected index,
#: a reported category), where ordering bins by their estimated ratio does not overfit.
FAMILIES = ("thresholds", "sets")


def _orders(counts_a: np.ndarray, counts_b: np.ndarray, family: str) -> list[np.ndarray]:
    """Bin orders whose prefixes are the candidate events for "a over b"."""
    size = counts_a.size
    if family == "thresholds":
        return [np.arange(size), np.arange(size)[::-1]]
    ratio = (counts_a + 0.5) / (counts_b + 0.5)
    return [np.argsort(-ratio, kind="stable")]


def best_event(
    first: np.ndarray, second: np.ndarray, *, delta: float, confidence: float, family: str = "thresholds"
) -> Event:
    """The candidate event with the largest lower bound on the search samples ``first``, ``second``:
    every prefix of every order of ``_orders``, in both directions."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got family={family!r}")
    binning = Binning.fit(first, second, ordered=family == "thresholds")
    counts = (binning.counts(first), binning.counts(second))
    best: Event | None = None
    for forward in (True, False):
        (ca, na), (cb, nb) = ((counts[0], first.size), (counts[1], second.size))[:: 1 if forward else -1]
        for order in _orders(ca, cb, family):
            scores = epsilon_lower_bound(
                np.cumsum(ca[order]), na, np.cumsum(cb[order]), nb, delta=delta, confidence=confidence
            )
            k = int(np.argmax(scores))
            if best is None or scores[k] > best.search_bound:
                selected = np.zeros(binning.size, dtype=bool)
                selected[order[: k + 1]] = True
                best = Event(binning, selected, forward, float(scores[k]))
    assert best is not None
    return best


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def _interval(lo: float, hi: float) -> str:
    if np.isinf(lo) and np.isinf(hi):
        return "any output"
    if np.isinf(lo):
        return f"output ≤ {_fmt(hi)}"
    if np.isinf(hi):
        return f"output > {_fmt(lo)}"
    return f"{_fmt(lo)} < output ≤ {_fmt(hi)}"
