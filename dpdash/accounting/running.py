"""Running totals: a growing history's composed state under each accountant, so that adding a release
composes only the new events.

A ledger's history only grows. ``epsilon(accountant, history, new, target_delta)`` is
``accountant.epsilon([*history, *new], target_delta)``, computed from a kept state of ``history`` (found by
checking that a kept state's events are a prefix of it, event by event) extended by what came after.
``fits`` answers the budget question with as little work as possible: under the tightest accountant the
total is the minimum over its components, so it is within a budget as soon as one component's is, and the
components are asked cheapest first.

The state of a history is its split into whole-data events and cells of partitionings, with the
worst-case paths of ``accountant.compositions`` (whole-data events plus one undominated cell of each
partitioning, or the union of the cells beyond ``MAX_PATHS``), each path's multiset of settings, and for
each accountant asked the sums its total is a function of:

- basic: Σ kε and Σ kδ of the whole-data settings and of every cell (``basic_sums``);
- zcdp: Σ kρ per path; advanced: the sums of ``advanced_terms``; optimal: those of ``heterogeneous_terms``
  per distinct (ε, δ), with the count, the largest ε and δ and the number of distinct guarantees;
- rdp: the Rényi curve Σ k·D_α per order.

The accountants round these sums once with ``math.fsum``; here the same terms are kept in exact integer
accumulators (every double is an integer multiple of 2⁻¹⁰⁷⁴) and rounded once when read, so the running
totals of these five accountants equal the accountants' own to the last bit, whatever the history.

Kept states never change: a new release is composed on a copy, whose paths remember the paths they were
copied from, so an accountant first asked of the copy starts from the original's tally (built and kept
there) plus the few changed settings; totals are memoised per state. A question about ``history + new``
keeps the states of both, so the same question asked again (the ledger checks a spend once from a read
snapshot, before its write lock, and again under it) composes only what was added in between.

PLD is different: it keeps composed loss pmfs (per side: ``remove``, and ``add`` once an asymmetric
release is in), split as path = base ⊗ recent ⊗ own (``_PLDSplit``): the whole-data releases composed once
(``base``, with its cumulative tails), those added since (``recent``, short), and each path's partitioned
releases (``own``, short). Each starts from ``PLDAccountant``'s own composition of its releases; a new
release is one convolution with that release's pmf, and ``recent`` is folded into ``base`` (one convolution)
once carrying it through every path's check costs more than that. The base's tails are cut where each holds
at most ``CUT_MASS`` = 1e-17 of mass as computed; the short tallies' where Chernoff's bound, from exact
per-release log-MGF bounds (``pld.log_mgf``), leaves at most ``BOUND_CUT_MASS`` = 1e-20, however noisy the
FFTs left them there; the mass cut is counted at the infinite loss (pessimistic, as dp_accounting's tail
truncation). The budget check asks δ at the budget's ε instead of ε at its δ (the same question: δ(ε) is
non-increasing): a path's δ(ε) = P_J[∞] + Σ_c P_J(c)·δ_base(ε − c) with J = recent ⊗ own, one pass over J
given the base's tails; within a relative ``FITS_MARGIN`` of the target δ it computes ε instead. A path's ε
convolves base and J. The totals differ from composing everything at once only by floating-point rounding
in the FFTs and by the masses cut, both far below the grid's own rounding (the tests bound the difference).

A total shown or decided on is a function of the events alone, the same in every process (issue 26): a
ledger's total must not depend on whether a server composed its releases one by one or read them fresh.
``epsilon`` and ``total`` give the accountant's own composition for PLD and the tightest (``pld._Composer``
keeps nothing that changes a bit), and the running state only where it is that to the bit; ``fits`` lets
the running PLD state decide only with a margin (``DECIDE_MARGIN``), the canonical total deciding near the
limit. Hypothetical totals (``keep=False``: a planner's search, a what-if, the total a release would bring)
are the running ones, within the FFTs' rounding of the canonical; whether they fit is ``fits``'s answer.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import operator
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from scipy import signal

from dpdash.accounting.accountant import (
    MAX_PATHS,
    REL_SLACK,
    Accountant,
    Composition,
    PrivacyTotal,
    _undominated,
    _unit_closed,
    as_events,
)
from dpdash.accounting.advanced import AdvancedComposition, advanced_terms, epsilon_from_sums
from dpdash.accounting.basic import BasicComposition
from dpdash.accounting.events import NonPrivateEvent, PrivacyEvent
from dpdash.accounting.optimal import (
    OptimalComposition,
    heterogeneous_from_sums,
    heterogeneous_terms,
    kov_epsilon_cached,
)
from dpdash.accounting.pld import (
    _COMPOSER,
    PLDAccountant,
    _delta_for_epsilon,
    _epsilon_for_delta,
    _items,
    _pinned,
    _Pmf,
    _side,
    _single,
    chernoff_window,
    log_mgf,
)
from dpdash.accounting.rdp import RDPAccountant
from dpdash.accounting.tightest import TightestAccountant
from dpdash.accounting.zcdp import ZCDPAccountant, zcdp_epsilon

__all__ = ["clear", "epsilon", "fits", "kept_epsilon", "total"]

# States kept (each of one history); a spend keeps two (its history, and with the new releases).
MAX_STATES = 8
# The tightest accountant asks its components in this order when checking a budget: cheapest first.
# PLD checks a budget from δ at the budget's ε (one pass over the tails) and is the tightest in practice, so
# it comes before optimal composition's search over the worst case.
_CHEAP_FIRST = ("basic", "zcdp", "advanced", "rdp", "pld", "optimal")
_SCALE = 1074  # every finite double is an integer multiple of 2**-1074
# PLD's budget check decides from δ(limit) unless δ(limit) is within this relative distance of the target δ.
FITS_MARGIN = 1e-6
# A running total that is not the canonical one to the bit (PLD, tightest) decides a budget check only
# when it certifies the limit shrunk by this relative margin: the two differ by the FFTs' rounding and the
# masses cut, a few 1e-9 relative at most (measured: 2e-9 after 240 single spends at δ = 1e-8; the tests
# bound it); nearer the limit the canonical total decides.
DECIDE_MARGIN = 1e-6
# A running PLD's tails are cut where each holds at most this mass (counted at +∞): far below TAIL_MASS, so
# that many cuts move ε at δ = 1e-8 by less than 1e-10 relative, and above the FFTs' noise (~1e-21 a point).
CUT_MASS = 1e-17
# A running PLD folds its recent whole-data releases into the base once len(recent) reaches this share of
# len(base) (``_PLDSplit._fold``).
FOLD_SHARE = 0.1
# Whether folds run in a background thread after the question that found them due (tests may turn it off),
# and the share at which a fold runs at once all the same.
BACKGROUND_FOLDS = True
FOLD_NOW_SHARE = 0.3
# A bounded tally's tails are cut where Chernoff's bound leaves at most this mass (counted at +∞ in full):
# cuts are more frequent there, so each counts less; the window is then about ±9.6 standard deviations.
BOUND_CUT_MASS = 1e-20
_LOG_BOUND_CUT = math.log(BOUND_CUT_MASS)


# ---- exact sums ------------------------------------------------------------------------------------
def _fixed(x: float) -> int:
    """x·2^1074, exactly (x finite)."""
    numerator, denominator = float(x).as_integer_ratio()
    return numerator << (_SCALE + 1 - denominator.bit_length())


class _ExactSums:
    """Exact sums of float terms, several side by side; ``values()`` rounds each once (as ``math.fsum``)."""

    __slots__ = ("_acc", "_inf")

    def __init__(self, width: int) -> None:
        self._acc = [0] * width
        self._inf = [0] * width  # +∞ terms minus removed ones (the terms here are never −∞ or NaN)

    def copy(self) -> _ExactSums:
        out = _ExactSums(0)
        out._acc, out._inf = list(self._acc), list(self._inf)
        return out

    def add(self, terms: Iterable[float], sign: int = 1) -> None:
        for i, term in enumerate(terms):
            if math.isinf(term):
                self._inf[i] += sign
            else:
                self._acc[i] += sign * _fixed(term)

    def values(self) -> list[float]:
        out = []
        for acc, inf in zip(self._acc, self._inf, strict=True):
            if inf > 0:
                out.append(math.inf)
                continue
            try:
                out.append(acc / (1 << _SCALE))  # int / int is correctly rounded
            except OverflowError:
                out.append(math.inf if acc > 0 else -math.inf)
        return out


# ---- per-path tallies --------------------------------------------------------------------------------
class _Tally:
    """An accountant's sums over one path's settings; ``update`` when a setting's count changes."""

    def update(self, setting: PrivacyEvent, old: int, new: int) -> None:
        raise NotImplementedError

    def copy(self) -> _Tally:
        raise NotImplementedError

    def epsilon(self, target_delta: float) -> float:
        raise NotImplementedError

    def settle(self) -> None:
        """Compose what is pending, so that copies share that work (a no-op for sums)."""


class _TermTally(_Tally):
    """Sums of per-setting terms terms(setting, count), replaced when the count changes."""

    def __init__(self, width: int) -> None:
        self.sums = _ExactSums(width)

    def terms(self, setting: PrivacyEvent, count: int) -> Iterable[float]:
        raise NotImplementedError

    def update(self, setting: PrivacyEvent, old: int, new: int) -> None:
        if old:
            self.sums.add(self.terms(setting, old), -1)
        if new:
            self.sums.add(self.terms(setting, new))

    def copy(self) -> _Tally:
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.sums = self.sums.copy()
        return out


class _ZCDPTally(_TermTally):
    def __init__(self, accountant: ZCDPAccountant) -> None:
        super().__init__(1)
        self.accountant = accountant

    def terms(self, setting: PrivacyEvent, count: int) -> Iterable[float]:
        return (float(setting.rho) * count,)  # type: ignore[arg-type]

    def epsilon(self, target_delta: float) -> float:
        return float(zcdp_epsilon(self.sums.values()[0], target_delta, self.accountant.conversion))


class _AdvancedTally(_TermTally):
    def __init__(self, accountant: AdvancedComposition) -> None:
        super().__init__(4)

    def terms(self, setting: PrivacyEvent, count: int) -> Iterable[float]:
        return advanced_terms(float(setting.epsilon), float(setting.delta), count)  # type: ignore[arg-type]

    def epsilon(self, target_delta: float) -> float:
        return epsilon_from_sums(*self.sums.values(), target_delta)


class _RDPTally(_TermTally):
    def __init__(self, accountant: RDPAccountant) -> None:
        super().__init__(len(accountant.orders))
        self.accountant = accountant

    def terms(self, setting: PrivacyEvent, count: int) -> Iterable[float]:
        return (count * self.accountant.setting_curve(setting)).tolist()

    def epsilon(self, target_delta: float) -> float:
        return self.accountant.epsilon_of_curve(np.array(self.sums.values()), target_delta)


class _OptimalTally(_Tally):
    """``OptimalComposition._epsilon``'s inputs: guarantees merged by (ε, δ), their sums, count and maxima."""

    def __init__(self, accountant: OptimalComposition) -> None:
        self.groups: Counter[tuple[float, float]] = Counter()
        self.sums = _ExactSums(4)

    def copy(self) -> _Tally:
        out = object.__new__(_OptimalTally)
        out.groups, out.sums = Counter(self.groups), self.sums.copy()
        return out

    def update(self, setting: PrivacyEvent, old: int, new: int) -> None:
        e, d = float(setting.epsilon), float(setting.delta)  # type: ignore[arg-type]
        before = self.groups[(e, d)]
        after = before + new - old
        if before:
            self.sums.add(heterogeneous_terms(e, d, before), -1)
        if after:
            self.sums.add(heterogeneous_terms(e, d, after))
            self.groups[(e, d)] = after
        else:
            del self.groups[(e, d)]

    def epsilon(self, target_delta: float) -> float:
        if len(self.groups) == 1:
            ((e, d), k) = next(iter(self.groups.items()))
            return kov_epsilon_cached(e, d, k, target_delta)
        k_total = sum(self.groups.values())
        max_epsilon, max_delta = max(e for e, _ in self.groups), max(d for _, d in self.groups)
        worst = kov_epsilon_cached(max_epsilon, max_delta, k_total, target_delta)
        return min(worst, heterogeneous_from_sums(*self.sums.values(), target_delta))


@dataclasses.dataclass
class _Loss:
    """One side's composed loss pmf (of the whole-data releases, or of a path's rest): mass ``probs[i]`` at
    loss (lower + i)·interval, and ``infinity``, the mass at +∞ of the composition it was built as. Releases
    added since multiply the finite mass by e^log_keep; the masses cut from the tails (``dropped``) count at
    +∞ (pessimistic). With ``bounds`` (Σ ``log_mgf`` of its releases) the tails are cut where Chernoff's
    bound leaves at most BOUND_CUT_MASS beyond each, whatever the FFTs' noise there; without, where the
    computed mass is at most CUT_MASS."""

    lower: int
    probs: np.ndarray
    infinity: float
    log_keep: float = 0.0
    dropped: float = 0.0
    bounds: np.ndarray | None = None

    def add(self, setting: PrivacyEvent, interval: float, side: str, count: int) -> None:
        """Compose ``count`` releases of ``setting``: one convolution with their k-fold pmf (for k ≥ 2,
        ``PLDAccountant``'s own composition of k identical releases: one FFT power, TAIL_MASS at +∞ if
        its window cut the tails), not k convolutions."""
        if count == 1:
            single = _side(setting, interval, side)
        else:
            single = _COMPOSER.compose(((setting, count),), interval, side)
        self.lower += single.lower
        self.log_keep += math.log1p(-single.infinity)
        self.probs = np.clip(signal.oaconvolve(self.probs, single.probs), 0.0, None)
        if self.bounds is not None:
            self.bounds = self.bounds + count * log_mgf(setting, interval, side)  # never in place: shared
        self._cut()

    def _cut(self) -> None:
        """Drop each tail of at most BOUND_CUT_MASS (by the bound) or CUT_MASS (as computed) of mass, and
        count that at +∞; only when it saves a tenth of the array (fewer, larger cuts)."""
        probs = self.probs
        if self.bounds is not None:
            lo, hi = chernoff_window(self.bounds, _LOG_BOUND_CUT)
            start, stop = max(lo - self.lower, 0), min(hi + 1 - self.lower, len(probs))
            if start < stop and (stop - start) * 1.1 < len(probs):
                self.dropped += BOUND_CUT_MASS * ((start > 0) + (stop < len(probs)))
                self.probs = probs[start:stop].copy()
                self.lower += start
            return
        left, right = np.cumsum(probs), np.cumsum(probs[::-1])
        start = int(np.searchsorted(left, CUT_MASS, side="right"))  # probs[:start] sum to ≤ CUT_MASS
        tail = int(np.searchsorted(right, CUT_MASS, side="right"))
        stop = len(probs) - tail
        if start < stop and (stop - start) * 1.1 < len(probs):
            self.dropped += float(left[start - 1]) if start else 0.0
            self.dropped += float(right[tail - 1]) if tail else 0.0
            self.probs = probs[start:stop].copy()
            self.lower += start

    def pmf(self) -> _Pmf:
        finite = math.log1p(-self.infinity) + self.log_keep if self.infinity < 1.0 else -math.inf
        return _Pmf(self.lower, self.probs, min(1.0, -math.expm1(finite) + self.dropped))


class _PLDTally(_Tally):
    """A path's composed loss pmfs (``remove``, and ``add`` once an asymmetric setting is in the path)."""

    def __init__(self, accountant: PLDAccountant, bounded: bool = False) -> None:
        self.interval = accountant.interval
        self.bounded = bounded  # cut the tails by Chernoff's bound (``_Loss.bounds``)
        self.sides: dict[str, _Loss] | None = None  # None until the first release (then built at once)
        self.pending: Counter[PrivacyEvent] = Counter()

    def copy(self) -> _Tally:
        out = object.__new__(_PLDTally)
        out.interval, out.bounded, out.pending = self.interval, self.bounded, Counter(self.pending)
        out.sides = None if self.sides is None else {k: dataclasses.replace(v) for k, v in self.sides.items()}
        return out

    def update(self, setting: PrivacyEvent, old: int, new: int) -> None:
        self.pending[setting] += new - old  # composed when a total is asked

    def _asymmetric(self, setting: PrivacyEvent) -> bool:
        return _single(setting, self.interval)[1] is not None

    def _build(self) -> None:
        """The state of the pending settings composed at once, as ``PLDAccountant`` composes a path."""
        with _pinned():
            self._build_pinned()

    def _build_pinned(self) -> None:
        items = _items(Composition.of(self.pending))
        sides = ["remove", "add"] if any(self._asymmetric(s) for s, _ in items) else ["remove"]
        self.sides = {}
        for side in sides:
            composed = _COMPOSER.compose(items, self.interval, side)
            bounds = sum(k * log_mgf(s, self.interval, side) for s, k in items) if self.bounded else None
            loss = self.sides[side] = _Loss(composed.lower, composed.probs, composed.infinity, bounds=bounds)
            loss._cut()  # to what holds mass: every later convolution is shorter
        self.pending.clear()

    def _compose_pending(self) -> None:
        if self.sides is None:
            self._build()
            return
        for setting, count in sorted(self.pending.items(), key=lambda item: repr(item[0])):
            if "add" not in self.sides and self._asymmetric(setting):
                self.sides["add"] = dataclasses.replace(self.sides["remove"])
            for side, loss in self.sides.items():
                loss.add(setting, self.interval, side, count)
        self.pending.clear()

    def settle(self) -> None:
        if self.pending:
            self._compose_pending()

    def pmfs(self) -> dict[str, _Pmf]:
        """The composed pmf of each side (``remove``, and ``add`` once an asymmetric setting is in)."""
        self.settle()
        assert self.sides is not None
        return {side: loss.pmf() for side, loss in self.sides.items()}

    def absorb(self, other: _PLDTally) -> None:
        """Compose ``other``'s releases into this tally at once: one convolution per side."""
        self.settle()
        other.settle()
        mine, theirs = self.sides, other.sides
        assert mine is not None and theirs is not None
        sides = {}
        for side in sorted(set(mine) | set(theirs)):
            x, y = mine.get(side, mine["remove"]), theirs.get(side, theirs["remove"])
            loss = sides[side] = _Loss(
                x.lower + y.lower,
                np.clip(signal.oaconvolve(x.probs, y.probs), 0.0, None),
                -math.expm1(math.log1p(-x.infinity) + math.log1p(-y.infinity)),
                x.log_keep + y.log_keep,
                x.dropped + y.dropped,
                None if x.bounds is None or y.bounds is None else x.bounds + y.bounds,
            )
            loss._cut()
        self.sides = sides


class _Tails:
    """The hockey-stick divergence of a loss pmf (the base of a split) at many ε at once.

    With U_i = P[∞] + Σ_{j≥i} p_j and W_i = Σ_{j≥i} p_j·e^(l_i − l_j) (W_i = p_i + e^(−interval)·W_{i+1}, a
    stable recurrence: every term ≤ 1), δ(x) = U_i − e^(x − l_i)·W_i where i is the first grid index with
    loss l_i above x (a loss equal to x adds nothing either way). Both are suffix sums, computed only from
    the lowest index asked so far (``start``; a budget check asks about the upper tail) and extended
    downwards, at least doubling."""

    def __init__(self, pmf: _Pmf, interval: float) -> None:
        self.pmf, self.lower, self.interval = pmf, pmf.lower, interval
        self.size = len(pmf.probs)
        self.start = self.size  # upper[k], kept[k] are U and W at index start + k
        self.upper, self.kept = np.array([pmf.infinity]), np.array([0.0])

    def _extend(self, first: int) -> None:
        start = max(0, min(first, self.start - max(self.size - self.start, 1024)))
        probs = self.pmf.probs[start : self.start][::-1]
        ratio = math.exp(-self.interval)
        kept = signal.lfilter([1.0], [1.0, -ratio], probs, zi=[ratio * self.kept[0]])[0]
        self.upper = np.concatenate([np.cumsum(probs)[::-1] + self.upper[0], self.upper])
        self.kept = np.concatenate([kept[::-1], self.kept])
        self.start = start

    def _suffix(self, lo: int) -> None:
        if lo < self.start:
            self._extend(lo)

    def delta(self, x: np.ndarray) -> np.ndarray:
        """δ at each ε in ``x``."""
        # clipped before the integer cast: a huge ε (1e300) would overflow int64
        steps = np.clip(np.floor(x / self.interval), self.lower - 1, self.lower + self.size - 1)
        first = steps.astype(np.int64) - self.lower + 1
        self._suffix(int(first.min()) if len(first) else self.size)
        offset = x - (self.lower + first) * self.interval  # ≤ 0: the first loss above x is at index first
        k = first - self.start
        return np.maximum(self.upper[k] - np.exp(np.minimum(offset, 0.0)) * self.kept[k], 0.0)

    def shifted(self, lo: int, hi: int, scale: float) -> np.ndarray:
        """D_i = U_i − scale·W_i for i = lo … hi (U_0 − scale·W_0·e^(i·interval) below 0, P[∞] from the
        top): δ at every x whose first loss above it is l_i and x − l_i = log(scale), clipped at 0."""
        index = np.arange(lo, hi + 1)
        out = np.full(len(index), self.pmf.infinity)
        inside = (index >= 0) & (index < self.size)
        if inside.any():
            self._suffix(int(index[inside][0]))
            k = index[inside] - self.start
            out[inside] = self.upper[k] - scale * self.kept[k]
        below = index < 0
        if below.any():
            self._suffix(0)
            out[below] = self.upper[0] - scale * self.kept[0] * np.exp(index[below] * self.interval)
        return np.maximum(out, 0.0)

    def path_deltas(self, limit: float, recent: _Pmf | None, owns: list[_Pmf | None]) -> list[float]:
        """δ(limit) of base ⊗ recent ⊗ own for each own (None: nothing), from one correlation.

        For J's loss at grid index L, x = limit − L·interval has its first base loss above it at index
        K − L (K = ⌊limit/interval⌋ − lower + 1) with x − l = limit − (⌊limit/interval⌋ + 1)·interval, the
        same for every L; so δ = P_J[∞] + Σ_b own(b)·F(K − b), F(k) = Σ_a recent(a)·D(k − a), one
        convolution shared by every path, then one dot product per path."""
        grid = math.floor(limit / self.interval)
        scale = math.exp(min(limit - (grid + 1) * self.interval, 0.0))
        top = grid - self.lower + 1  # K
        spans = [(0, 0) if own is None else (own.lower, own.lower + len(own.probs) - 1) for own in owns]
        b_lo, b_hi = min(lo for lo, _ in spans), max(hi for _, hi in spans)
        a_hi = 0 if recent is None else recent.lower + len(recent.probs) - 1
        # Past the base's top every D is P[∞]: a huge limit (ε = 1e300) reads the same as the first one past
        # it, and the indices stay small integers.
        top = min(top, self.size + b_hi + a_hi)
        if recent is None:
            f = self.shifted(top - b_hi, top - b_lo, scale)  # F(k) = D(k)
            recent_infinity = 0.0
        else:
            a_lo, a_hi = recent.lower, recent.lower + len(recent.probs) - 1
            d = self.shifted(top - b_hi - a_hi, top - b_lo - a_lo, scale)
            f = np.maximum(signal.fftconvolve(d, recent.probs, mode="valid"), 0.0)
            recent_infinity = recent.infinity
        out = []
        for own in owns:  # f[j] = F(top − b_hi + j)
            if own is None:  # b = 0 only, with mass 1
                out.append(recent_infinity + float(f[b_hi]))
                continue
            lo = b_hi - (own.lower + len(own.probs) - 1)
            values = f[lo : lo + len(own.probs)][::-1]
            infinity = -math.expm1(math.log1p(-recent_infinity) + math.log1p(-own.infinity))
            out.append(infinity + float(np.dot(own.probs, values)))
        return out


class _PLDSplit:
    """PLD on a history's paths, split as path = base ⊗ recent ⊗ own: ``base``, the whole-data releases
    composed once, with its cumulative tails (``_Tails``) kept; ``recent``, the whole-data releases added
    since (short); and per path ``own``, the partitioned releases it adds (short). A path's δ at ε is
    δ_path(ε) = P_J[∞] + Σ_c P_J(c)·δ_base(ε − c) with J = recent ⊗ own (the hockey-stick divergence of a
    composition, conditioned on J's loss), so a budget check costs passes over the short J's, never over
    the long base. ``recent`` is folded into ``base`` (one convolution, new tails) once carrying it costs
    more: when (paths)·len(recent) ≥ len(base)·FOLD_SHARE. A path's ε convolves base and J."""

    def __init__(self, accountant: PLDAccountant, whole: Counter[PrivacyEvent]) -> None:
        self.accountant = accountant
        self._start(+whole)

    def _start(self, whole: Counter[PrivacyEvent]) -> None:
        """Every whole-data release in the base (composed at once when first asked), none recent."""
        self.counts: Counter[PrivacyEvent] = whole  # the whole-data releases, in base or in recent
        self.base = _PLDTally(self.accountant)
        for setting, count in whole.items():
            self.base.update(setting, 0, count)
        self.recent = _PLDTally(self.accountant, bounded=True)
        self.recent_counts: Counter[PrivacyEvent] = Counter()
        self.owns: dict[Any, tuple[Counter[PrivacyEvent], _PLDTally]] = {}
        self._tails: dict[str, _Tails] | None = None

    def copy(self) -> _PLDSplit:
        out = object.__new__(_PLDSplit)
        out.accountant, out.counts = self.accountant, Counter(self.counts)
        for tally in (self.base, self.recent, *(t for _, t in self.owns.values())):
            tally.settle()  # compose here once, so that both copies share it
        out.base, out.recent = self.base.copy(), self.recent.copy()  # type: ignore[assignment]
        out.recent_counts = Counter(self.recent_counts)
        out.owns = {key: (Counter(c), t.copy()) for key, (c, t) in self.owns.items()}  # type: ignore[misc]
        # The copy's base is this one until either folds: the tails (filled as asked) serve both.
        out._tails = self._tails = None if self.base.sides is None else self._base_tails()
        return out

    def update_whole(self, setting: PrivacyEvent, old: int, new: int) -> None:
        if new < old:  # never so as releases are added; recomposed from scratch, to be safe
            self.counts[setting] = new
            self._start(+self.counts)
            self._tails = None
            return
        self.counts[setting] = new
        self.recent.update(setting, self.recent_counts[setting], self.recent_counts[setting] + new - old)
        self.recent_counts[setting] += new - old

    def sync_rest(self, key: Any, path: _Path, whole: Counter[PrivacyEvent], setting: PrivacyEvent) -> None:
        """Path ``key``'s own releases after ``setting``'s count changed in it (if they are kept)."""
        if key not in self.owns:
            return
        counts, tally = self.owns[key]
        new = path.counts[setting] - whole[setting]
        if new < counts[setting]:  # never so as releases are added; rebuilt when asked, to be safe
            del self.owns[key]
        elif new != counts[setting]:
            tally.update(setting, counts[setting], new)
            counts[setting] = new

    def forget_rests(self) -> None:
        self.owns.clear()

    def _base(self) -> dict[str, _Pmf] | None:
        if self.base.sides is None and not self.base.pending:
            return None
        return self.base.pmfs()

    def _base_tails(self) -> dict[str, _Tails]:
        """The base's tails per side (computed only as far as they are asked)."""
        if self._tails is None:
            base = self.base.pmfs()
            self._tails = {side: _Tails(pmf, self.accountant.interval) for side, pmf in base.items()}
        return self._tails

    def _own(self, key: Any, path: _Path, whole: Counter[PrivacyEvent]) -> dict[str, _Pmf] | None:
        """The composed pmfs of path ``key``'s partitioned releases (None: it has none)."""
        if key not in self.owns:
            counts = Counter({s: c - whole[s] for s, c in path.counts.items() if c > whole[s]})
            tally = _PLDTally(self.accountant, bounded=True)
            for setting, count in counts.items():
                tally.update(setting, 0, count)
            self.owns[key] = (counts, tally)
        counts, tally = self.owns[key]
        return tally.pmfs() if _positive(counts) else None

    def _joint(self, key: Any, path: _Path, whole: Counter[PrivacyEvent]) -> dict[str, _Pmf] | None:
        """J = recent ⊗ own of path ``key`` (None when both are empty)."""
        recent = self.recent.pmfs() if _positive(self.recent_counts) else None
        parts = [p for p in (recent, self._own(key, path, whole)) if p is not None]
        return None if not parts else parts[0] if len(parts) == 1 else _convolved(*parts)

    def _share(self) -> float:
        """len(recent) / len(base) (0 when either is empty)."""
        if not _positive(self.recent_counts) or self.base.sides is None:
            return 0.0
        return len(self.recent.pmfs()["remove"].probs) / len(self.base.pmfs()["remove"].probs)

    def _fold(self) -> None:
        """Fold ``recent`` into ``base`` once it is FOLD_SHARE of the base's length: every check correlates
        the recent pmf with the base's tails, a fold convolves it into the base once (about 0.15 s at
        10 000 varied releases). With BACKGROUND_FOLDS the fold of the latest split found due is left to
        one worker thread, which runs it after the question that found it (it takes _LOCK, as every
        running question does: nothing reads a half-folded state, and a question asked meanwhile waits);
        here only if the recent part has grown to FOLD_NOW_SHARE (no worker has kept up)."""
        share = self._share()
        if share < FOLD_SHARE:
            return
        if BACKGROUND_FOLDS and share < FOLD_NOW_SHARE:
            _FOLDS.due(self)
            return
        self._fold_now()

    def _fold_now(self) -> None:
        self.base.absorb(self.recent)
        self.recent = _PLDTally(self.accountant, bounded=True)
        self.recent_counts = Counter()
        self._tails = None

    def epsilon(self, key: Any, path: _Path, whole: Counter[PrivacyEvent], target_delta: float) -> float:
        """The path's ε at ``target_delta``: base ⊗ J composed, then ε of the composition."""
        interval = self.accountant.interval
        parts = [p for p in (self._base(), self._joint(key, path, whole)) if p is not None]
        if len(parts) == 1:
            return max(_epsilon_for_delta(pmf, interval, target_delta) for pmf in parts[0].values())
        return max(_epsilon_for_delta(pmf, interval, target_delta) for pmf in _convolved(*parts).values())

    def fits(
        self, paths: dict[Any, _Path], whole: Counter[PrivacyEvent], target_delta: float, limit: float
    ) -> bool | None:
        """Whether every path's ε at ``target_delta`` is ≤ limit, from δ(limit): δ(ε) is non-increasing, so
        ε(δ) ≤ limit exactly when δ(limit) ≤ δ. None (ask ``epsilon``) within a relative FITS_MARGIN of
        the boundary, where this and ε's search could round differently."""
        if not (target_delta > 0.0 and math.isfinite(limit)):
            return None
        interval = self.accountant.interval
        limit = max(limit, 0.0)
        base = self._base()
        owns = [self._own(key, path, whole) for key, path in paths.items()]
        recent = self.recent.pmfs() if _positive(self.recent_counts) else None
        deltas: list[float] = []
        if base is None:  # every release partitioned: each path's J alone
            for own in owns:
                joint = [p for p in (recent, own) if p is not None]
                pmfs = joint[0] if len(joint) == 1 else _convolved(*joint)
                deltas += [_delta_for_epsilon(pmf, interval, limit) for pmf in pmfs.values()]
        else:
            base_tails = self._base_tails()
            sides = set(base) | set(recent or ()) | {side for own in owns for side in own or ()}
            for side in sorted(sides):  # a part without an ``add`` side is symmetric: its ``remove``
                tails = base_tails.get(side, base_tails["remove"])
                part = None if recent is None else recent.get(side, recent["remove"])
                mine = [None if own is None else own.get(side, own["remove"]) for own in owns]
                deltas += tails.path_deltas(limit, part, mine)
        answer: bool | None = True
        for delta in deltas:
            if not math.isfinite(delta):  # never expected; ε's own search decides
                return None
            if delta > target_delta * (1.0 + FITS_MARGIN):
                return False
            if delta > target_delta * (1.0 - FITS_MARGIN):
                answer = None
        return answer


def _positive(counts: Counter[PrivacyEvent]) -> bool:
    """Whether any count is positive (``+counts`` would hash every setting: slow for events)."""
    return any(count > 0 for count in counts.values())


def _convolved(a: dict[str, _Pmf], b: dict[str, _Pmf]) -> dict[str, _Pmf]:
    """The composition of two independent parts, per side (a part without an ``add`` side is symmetric)."""
    out = {}
    for side in sorted(set(a) | set(b)):
        x, y = a.get(side, a["remove"]), b.get(side, b["remove"])
        probs = np.clip(signal.oaconvolve(x.probs, y.probs), 0.0, None)
        infinity = -math.expm1(math.log1p(-x.infinity) + math.log1p(-y.infinity))
        out[side] = _Pmf(x.lower + y.lower, probs, infinity)
    return out


_TALLIES: dict[type[Accountant], type[_Tally]] = {
    ZCDPAccountant: _ZCDPTally,
    AdvancedComposition: _AdvancedTally,
    RDPAccountant: _RDPTally,
    OptimalComposition: _OptimalTally,
}


# ---- a history's state ----------------------------------------------------------------------------------
class _Path:
    """One worst-case path: its settings with counts, and the tallies of the accountants asked so far.

    A copy remembers the path it was copied from (``origin``, whose counts no longer change once its state
    is kept) and the settings whose counts changed since; an accountant first asked of the copy gets the
    origin's tally (built there, and kept there for later copies) updated by those changes, so asking a
    total of a history plus a few releases composes only the few. Links are kept two generations deep.
    """

    def __init__(self, counts: Counter[PrivacyEvent]) -> None:
        self.counts = counts
        self.tallies: dict[Accountant, _Tally] = {}
        self.origin: _Path | None = None
        self.changed: set[PrivacyEvent] = set()

    def copy(self) -> _Path:
        out = _Path(Counter(self.counts))
        out.tallies = {a: t.copy() for a, t in self.tallies.items()}
        out.origin = self
        if self.origin is not None:
            self.origin.origin = None  # at most two generations: older states may be let go
        return out

    def set(self, setting: PrivacyEvent, new: int) -> None:
        old = self.counts[setting]
        if new != old:
            self.counts[setting] = new
            if self.origin is not None:
                self.changed.add(setting)
            for tally in self.tallies.values():
                tally.update(setting, old, new)

    def tally(self, accountant: Accountant) -> _Tally:
        tally = self.tallies.get(accountant)
        if tally is not None:
            return tally
        origin = self.origin
        if origin is not None:
            base = origin.tally(accountant)
            base.settle()
            tally = base.copy()
            for setting in self.changed:
                tally.update(setting, origin.counts[setting], self.counts[setting])
        else:
            tally = _TALLIES[type(accountant)](accountant)  # type: ignore[call-arg]
            for setting, count in self.counts.items():
                tally.update(setting, 0, count)
        self.tallies[accountant] = tally
        return tally


class _State:
    """The composed state of a list of events (see the module docstring)."""

    def __init__(self) -> None:
        self.events: list[PrivacyEvent] = []
        self.kinds: dict[type, PrivacyEvent] = {}
        self.non_private = False
        self.whole: Counter[PrivacyEvent] = Counter()
        self.cells: dict[str, dict[str, Counter[PrivacyEvent]]] = {}
        self.layout: tuple[Any, ...] = ((),)  # the paths: one tuple of (by, part) per path, or "union"
        self.paths: dict[Any, _Path] = {(): _Path(Counter())}
        self.basic_whole = _ExactSums(2)
        self.basic_cells: dict[str, dict[str, _ExactSums]] = {}
        self.totals: dict[tuple[Accountant, float], float] = {}  # kept states never change: memoised
        self.fit_answers: dict[tuple[Accountant, float, float], bool] = {}
        self.pld: dict[Accountant, _PLDSplit] = {}  # PLD's state, per PLD accountant asked
        self.origin: _State | None = None
        self.kept = True  # False: asked once and dropped (its PLD recent part is never folded)

    def copy(self) -> _State:
        out = _State()
        out.events, out.kinds, out.non_private = list(self.events), dict(self.kinds), self.non_private
        out.whole = Counter(self.whole)
        out.cells = {by: {part: Counter(c) for part, c in parts.items()} for by, parts in self.cells.items()}
        out.layout = self.layout
        out.paths = {key: path.copy() for key, path in self.paths.items()}
        out.basic_whole = self.basic_whole.copy()
        out.pld = {accountant: split.copy() for accountant, split in self.pld.items()}
        out.basic_cells = {
            by: {p: s.copy() for p, s in parts.items()} for by, parts in self.basic_cells.items()
        }
        out.origin = self  # PLD first asked of the copy starts from this state's (built and kept here)
        if self.origin is not None:
            self.origin.origin = None  # at most two generations, as paths
        return out

    # -- adding events
    def extend(self, events: Iterable[PrivacyEvent]) -> None:
        # A run of one event (k more releases like it) is added at once: its setting's count grows by k.
        for _, run in itertools.groupby(events, key=id):
            alike = list(run)
            self._add(alike[0], len(alike))

    def _add(self, event: PrivacyEvent, count: int = 1) -> None:
        self.events.extend(itertools.repeat(event, count))
        if type(event) not in self.kinds:
            self.kinds[type(event)] = event
            for path in self.paths.values():  # tallies of accountants that refuse it are never read again
                for accountant in [a for a in path.tallies if a.refusal(event) is not None]:
                    del path.tallies[accountant]
            for accountant in [a for a in self.pld if a.refusal(event) is not None]:
                del self.pld[accountant]
        if isinstance(event, NonPrivateEvent):
            self.non_private = True
            return
        setting = event.setting
        if event.partition is None:
            old = self.whole[setting]
            self.whole[setting] = old + count
            _basic_update(self.basic_whole, setting, old, old + count)
            for path in self.paths.values():
                path.set(setting, path.counts[setting] + count)
            for split in self.pld.values():
                split.update_whole(setting, old, old + count)
            return
        by, part = event.partition
        cell = self.cells.setdefault(by, {}).setdefault(part, Counter())
        old = cell[setting]
        cell[setting] = old + count
        sums = self.basic_cells.setdefault(by, {}).setdefault(part, _ExactSums(2))
        _basic_update(sums, setting, old, old + count)
        layout = self._layout()
        if layout != self.layout:
            self._rebuild(layout)
            for split in self.pld.values():
                split.forget_rests()
        elif layout == ("union",):
            union = self.paths["union"]
            union.set(
                setting, self.whole[setting] + sum(_cell_max(parts, setting) for parts in self.cells.values())
            )
        else:
            for key, path in self.paths.items():
                if (by, part) in key:
                    path.set(setting, path.counts[setting] + count)
        for split in self.pld.values():
            for key, path in self.paths.items():
                split.sync_rest(key, path, self.whole, setting)

    def _layout(self) -> tuple[Any, ...]:
        """The paths of ``compositions``: the product of the undominated cells, or the union."""
        choices = []
        for by, parts in sorted(self.cells.items()):
            kept = _undominated(parts.values())
            # `_undominated` returns the first of each set of equal cells itself: found by identity (a
            # Counter compares all its items even with itself).
            choices.append([(by, next(p for p, c in parts.items() if c is cell)) for cell in kept])
        if math.prod(len(c) for c in choices) <= MAX_PATHS:
            return tuple(itertools.product(*choices))
        return ("union",)

    def _rebuild(self, layout: tuple[Any, ...]) -> None:
        paths: dict[Any, _Path] = {}
        for key in layout:
            if key in self.paths:
                paths[key] = self.paths[key]
                continue
            counts = Counter(self.whole)
            if key == "union":
                for parts in self.cells.values():
                    counts.update(_union(parts.values()))
            else:
                for by, part in key:
                    counts.update(self.cells[by][part])
            paths[key] = _Path(counts)
        self.layout, self.paths = layout, paths
        # A kept path may lack a count the rebuild would give it only if its cells changed: recount them.
        for key, path in paths.items():
            if key != "union":
                expected = Counter(self.whole)
                for by, part in key:
                    expected.update(self.cells[by][part])
                for setting in set(expected) | set(path.counts):
                    path.set(setting, expected[setting])

    # -- totals
    def refusal(self, accountant: Accountant) -> str | None:
        for event in self.kinds.values():
            reason = accountant.refusal(event)
            if reason is not None:
                return reason
        return None

    def epsilon(self, accountant: Accountant, target_delta: float) -> float:
        """``accountant.epsilon(self.events, target_delta)`` (events already checked)."""
        if not self.events:
            return 0.0
        if self.non_private:
            return math.inf
        if isinstance(accountant, TightestAccountant):
            return min(self.epsilon(c, target_delta) for c in self._usable(accountant))
        key = (accountant, target_delta)
        total = self.totals.get(key)
        if total is None:
            total = self.totals[key] = self._epsilon(accountant, target_delta)
        return total

    def _epsilon(self, accountant: Accountant, target_delta: float) -> float:
        if isinstance(accountant, BasicComposition):
            epsilon, delta = self._basic_sums()
            return epsilon if delta <= target_delta * (1.0 + REL_SLACK) else math.inf
        if type(accountant) is PLDAccountant:
            split = self._pld(accountant)
            return max(split.epsilon(k, p, self.whole, target_delta) for k, p in self.paths.items())
        if type(accountant) not in _TALLIES:  # an accountant this module does not know: from scratch
            return accountant.epsilon(self.events, target_delta)
        return max(path.tally(accountant).epsilon(target_delta) for path in self.paths.values())

    def _pld(self, accountant: PLDAccountant) -> _PLDSplit:
        """PLD's state of this history: kept; first asked of a copy, the origin's (built there and kept
        there for later copies) updated by the releases added since."""
        split = self.pld.get(accountant)
        if split is None:
            split = self.pld[accountant] = self._pld_from_origin(accountant)
        if self.kept:
            split._fold()
        return split

    def _pld_from_origin(self, accountant: PLDAccountant) -> _PLDSplit:
        origin = self.origin
        if origin is None or origin.non_private:
            split = _PLDSplit(accountant, self.whole)
        else:
            split = origin._pld(accountant).copy()
            changed = {
                e.setting for e in self.events[len(origin.events) :] if not isinstance(e, NonPrivateEvent)
            }
            for setting in changed:
                if self.whole[setting] != origin.whole[setting]:
                    split.update_whole(setting, origin.whole[setting], self.whole[setting])
            if self.layout != origin.layout:
                split.forget_rests()
            else:
                for key, path in self.paths.items():
                    for setting in changed:
                        split.sync_rest(key, path, self.whole, setting)
        return split

    def fits(self, accountant: Accountant, target_delta: float, limit: float) -> bool:
        """Whether ``epsilon(accountant, target_delta) <= limit``, asking the tightest's components cheapest
        first and stopping at the first that fits (the minimum fits iff one of them does); PLD answers from
        δ(limit) where that decides it (``_PLDTally.fits``)."""
        if not self.events or self.non_private:
            return self.epsilon(accountant, target_delta) <= limit
        if not isinstance(accountant, TightestAccountant):
            return self._fits(accountant, target_delta, limit)
        usable = sorted(
            self._usable(accountant),
            key=lambda c: _CHEAP_FIRST.index(c.name) if c.name in _CHEAP_FIRST else len(_CHEAP_FIRST),
        )
        return any(self._fits(c, target_delta, limit) for c in usable)

    def _fits(self, accountant: Accountant, target_delta: float, limit: float) -> bool:
        total = self.totals.get((accountant, target_delta))
        if total is not None:
            return total <= limit
        if type(accountant) is PLDAccountant:
            key = (accountant, target_delta, limit)
            if key not in self.fit_answers:
                split = self._pld(accountant)
                decided = split.fits(self.paths, self.whole, target_delta, limit)
                if decided is not None:
                    self.fit_answers[key] = decided
                    return decided
            else:
                return self.fit_answers[key]
        return self.epsilon(accountant, target_delta) <= limit

    def _usable(self, accountant: TightestAccountant) -> list[Accountant]:
        return accountant.usable(list(self.kinds.values()))

    def _basic_sums(self) -> tuple[float, float]:
        """``basic_sums(self.events)``."""
        eps_parts, delta_parts = [], []
        e, d = self.basic_whole.values()
        eps_parts.append(e)
        delta_parts.append(d)
        for _, parts in sorted(self.basic_cells.items()):
            cell_sums = [sums.values() for sums in parts.values()]
            eps_parts.append(max(e for e, _ in cell_sums))
            delta_parts.append(max(d for _, d in cell_sums))
        return math.fsum(eps_parts), math.fsum(delta_parts)


def _basic_update(sums: _ExactSums, setting: PrivacyEvent, old: int, new: int) -> None:
    if setting.epsilon is None or setting.delta is None:
        return  # basic composition refuses it (and is not asked for this history again)
    e, d = float(setting.epsilon), float(setting.delta)
    if old:
        sums.add((e * old, d * old), -1)
    sums.add((e * new, d * new))


def _cell_max(parts: dict[str, Counter[PrivacyEvent]], setting: PrivacyEvent) -> int:
    return max(cell[setting] for cell in parts.values())


def _union(cells: Iterable[Counter[PrivacyEvent]]) -> Counter[PrivacyEvent]:
    out: Counter[PrivacyEvent] = Counter()
    for cell in cells:
        out |= cell
    return out


# ---- the kept states -------------------------------------------------------------------------------------
_LOCK = threading.RLock()


class _Folder:
    """One worker thread that folds the latest split found due (``_PLDSplit._fold``), under _LOCK."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._split: _PLDSplit | None = None
        self._busy = False
        self._thread: threading.Thread | None = None

    def due(self, split: _PLDSplit) -> None:
        """Fold ``split`` soon (replacing any split due before it: only the latest state is extended)."""
        with self._cond:
            self._split = split
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="dpdash-pld-fold", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._split is None:
                    self._cond.wait()
                split, self._split, self._busy = self._split, None, True
            try:
                with _LOCK:
                    if split._share() >= FOLD_SHARE:
                        split._fold_now()
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no fold is due or under way; whether that happened within ``timeout`` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: self._split is None and not self._busy, timeout)


_FOLDS = _Folder()


def finish_folds(timeout: float | None = None) -> bool:
    """Wait for the background PLD folds due so far (answers never depend on them; benchmarks and tests
    use this to time or check a state at rest). Whether they finished within ``timeout`` seconds."""
    return _FOLDS.wait(timeout)
_STATES: list[_State] = []
# The last question not kept (``keep=False``): the kept state it starts from, its new events, and its state,
# so that the same question asked again under another accountant (a what-if row: pld, then tightest, whose
# minimum reads the same PLD total) composes the new events once.
_ASKED: tuple[_State, list[PrivacyEvent], _State] | None = None


def clear() -> None:
    """Forget the kept states (answers never depend on them)."""
    global _ASKED
    with _LOCK:
        _STATES.clear()
        _ASKED = None


def _prefix_of(state: _State, history: Sequence[PrivacyEvent]) -> bool:
    """Whether the state's events are the first events of ``history`` (equal, event by event)."""
    kept = state.events
    if len(kept) > len(history):
        return False
    if all(map(operator.is_, kept, history)):  # the usual case, after the first check: at C speed
        return True
    for i, (a, b) in enumerate(zip(kept, history)):  # noqa: B905 - history may be longer
        if a is not b:
            if a != b:
                return False
            kept[i] = b  # the same event: keep the caller's object, so the next check is by identity
    return True


def _state_of(
    history: Sequence[PrivacyEvent], new: Sequence[PrivacyEvent] = (), keep: bool = True
) -> _State:
    """A state of exactly ``[*history, *new]``: a kept one, or the longest kept prefix extended by the
    events it lacks. The states of ``history`` and of ``history + new`` are both kept: the next release
    starts from the first, and the same question asked again (a spend re-checked under the write lock, the
    total of a refused spend) finds the second with its totals. With ``keep=False`` only the state of
    ``history`` is kept; ``history + new`` is a copy of it, dropped once another such question is asked."""
    global _ASKED
    if not keep and new:
        origin = _state_of(history)
        if _ASKED is not None and _ASKED[0] is origin and _ASKED[1] == new:
            return _ASKED[2]
        state = origin.copy()
        state.kept = False
        state.extend(new)
        _ASKED = (origin, list(new), state)
        return state
    full = [*history, *new]
    best = max((s for s in _STATES if _prefix_of(s, full)), key=lambda s: len(s.events), default=None)
    if best is not None:  # the least recently used state goes first, never the one questions start from
        _STATES.remove(best)
        _STATES.append(best)
        if len(best.events) == len(full):
            return best
    state = best
    for upto in (len(history), len(full)):
        if state is None or len(state.events) < upto:
            state = state.copy() if state is not None else _State()
            state.extend(full[len(state.events) : upto])
            _keep(state)
    assert state is not None
    return state


def _keep(state: _State) -> None:
    _STATES.append(state)
    while len(_STATES) > MAX_STATES:
        _STATES.pop(0)


def _with_new(
    accountant: Accountant,
    history: Sequence[PrivacyEvent],
    new: Sequence[PrivacyEvent],
    target_delta: float,
    keep: bool = True,
) -> tuple[_State, float]:
    target_delta = _unit_closed(target_delta, "target_delta")
    history, new = as_events(history), accountant.check(new)
    state = _state_of(history, new, keep)
    reason = state.refusal(accountant)
    if reason is not None:
        accountant.check(history)  # raises UnsupportedEventError naming the refused events
    return state, target_delta


def _bit_exact(accountant: Accountant) -> bool:
    """Whether the running totals of ``accountant`` are its own to the last bit (exact sums: every accountant
    but PLD, and the tightest, which may take PLD's)."""
    return not isinstance(accountant, (PLDAccountant, TightestAccountant))


def epsilon(
    accountant: Accountant,
    history: Sequence[PrivacyEvent],
    new: Sequence[PrivacyEvent] = (),
    target_delta: float = 0.0,
    *,
    keep: bool = True,
) -> float:
    """``accountant.epsilon([*history, *new], target_delta)``, the canonical total: a function of the events
    alone, the same in every process. It comes from the kept state of a prefix of ``history`` where that is
    the same to the bit (every accountant but PLD and the tightest; see the module); for those two, from the
    accountant's own composition (its caches never change a bit, ``pld._Composer``).

    ``keep=False`` for a question asked once about hypothetical ``new`` events (a step of the planner's
    search): the running total, which for PLD may differ from the canonical one by the FFTs' rounding
    (below ``DECIDE_MARGIN`` relative), and the state of ``history`` is kept, not that of ``history + new``,
    so such questions neither push the ledger's states out nor fold PLD's recent releases for a state that
    is dropped."""
    if keep and not _bit_exact(accountant):
        return accountant.epsilon([*as_events(history), *as_events(new)], target_delta)
    return kept_epsilon(accountant, history, new, target_delta, keep=keep)


def kept_epsilon(
    accountant: Accountant,
    history: Sequence[PrivacyEvent],
    new: Sequence[PrivacyEvent] = (),
    target_delta: float = 0.0,
    *,
    keep: bool = True,
) -> float:
    """The running total of ``[*history, *new]`` from the kept state of a prefix of ``history`` (``epsilon``
    for every accountant but PLD and the tightest, whose running totals are within ``DECIDE_MARGIN`` of it):
    what a planner's search step asks (``keep=False``), and what the tests of the running state ask."""
    with _LOCK, _pinned():  # a single pmf is built once per question, whatever the paths
        state, target_delta = _with_new(accountant, history, new, target_delta, keep)
        return state.epsilon(accountant, target_delta)


def total(accountant: Accountant, history: Sequence[PrivacyEvent], target_delta: float) -> PrivacyTotal:
    """``accountant.total(history, target_delta)``, the canonical total (``epsilon``), from the kept state
    where that is the same to the bit: ``epsilon`` and, for the tightest accountant, ``via``, the first
    component with the smallest total (as ``TightestAccountant._via``)."""
    if not _bit_exact(accountant):
        return accountant.total(history, target_delta)
    with _LOCK, _pinned():  # a single pmf is built once per question, whatever the paths
        state, target_delta = _with_new(accountant, history, (), target_delta)
        value = state.epsilon(accountant, target_delta)
        via = accountant.name
        if isinstance(accountant, TightestAccountant) and state.events and not state.non_private:
            best, via = math.inf, accountant.components[0].name
            for component in state._usable(accountant):
                if (candidate := state.epsilon(component, target_delta)) < best:
                    best, via = candidate, component.name
        return PrivacyTotal(value, float(target_delta), accountant.name, via, len(state.events))


def fits(
    accountant: Accountant,
    history: Sequence[PrivacyEvent],
    new: Sequence[PrivacyEvent],
    target_delta: float,
    budget_epsilon: float,
    *,
    keep: bool = True,
) -> bool:
    """Whether ``epsilon(accountant, history, new, target_delta) <= budget_epsilon·(1 + REL_SLACK)``, the
    ledger's budget check, on the canonical total: the same answer in every process.

    The kept state answers at once, stopping at the first of the tightest's components that certifies it;
    where it is not the canonical total to the bit (PLD, the tightest), it decides only when it certifies
    the limit shrunk by ``DECIDE_MARGIN``, far more than the FFTs' rounding between the two; nearer the
    limit, or over it, the canonical total decides. The states of ``history`` and ``history + new`` are
    kept, with the totals asked (``_state_of``); with ``keep=False`` (a hypothetical question, as for
    ``epsilon``) only that of ``history``."""
    limit = budget_epsilon * (1.0 + REL_SLACK)
    exact = _bit_exact(accountant)
    with _LOCK, _pinned():  # a single pmf is built once per question, whatever the paths
        state, target_delta = _with_new(accountant, history, new, target_delta, keep)
        if state.fits(accountant, target_delta, limit if exact else limit * (1.0 - DECIDE_MARGIN)):
            return True
    if exact:
        return False
    return accountant.epsilon([*as_events(history), *as_events(new)], target_delta) <= limit
