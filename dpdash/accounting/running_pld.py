"""PLD's running totals (``running``): composed loss pmfs kept as base ⊗ recent ⊗ own per path, their tails
cut where at most ``CUT_MASS`` (or, bounded by Chernoff, ``BOUND_CUT_MASS``) of mass is left, the budget
check from δ at the budget's ε, and the folds of recent releases into the base, in a background thread."""

from __future__ import annotations

import dataclasses
import math
import threading
from collections import Counter
from typing import Any, Protocol

import numpy as np
from scipy import signal

from dpdash.accounting.accountant import (
    Composition,
)
from dpdash.accounting.events import PrivacyEvent
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
from dpdash.accounting.pld_tails import _Tails
from dpdash.accounting.running_tallies import _Tally

__all__ = [
    "BACKGROUND_FOLDS",
    "BOUND_CUT_MASS",
    "CUT_MASS",
    "FITS_MARGIN",
    "FOLD_NOW_SHARE",
    "FOLD_SHARE",
    "finish_folds",
]


# PLD's budget check decides from δ(limit) unless δ(limit) is within this relative distance of the target δ.
FITS_MARGIN = 1e-6


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


class _Path(Protocol):
    """What is read here of a worst-case path (``running_state._Path``, which keeps this module's state):
    its settings with their counts."""

    counts: Counter[PrivacyEvent]


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
