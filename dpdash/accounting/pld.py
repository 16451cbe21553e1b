"""Privacy-loss-distribution accounting (Meiser & Mohammadi 2018; Koskela et al. 2020; Doroshenko et al.
2022), with Google's ``dp_accounting`` PLDs composed by count."""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import ClassVar

import numpy as np
from scipy import fft, signal, special

from dpdash import _validation as check
from dpdash.accounting.accountant import Accountant, Composition
from dpdash.accounting.events import (
    PrivacyEvent,
    ZCDPEvent,
)
from dpdash.accounting.pld_single import DEFAULT_INTERVAL, _dense, _Pmf, single_pld

__all__ = ["PLDAccountant", "single_pld"]

# Probability mass that composition may drop from the tails; it is added to the infinite loss, so δ stays
# an upper bound (dp_accounting's ``tail_mass_truncation``).
TAIL_MASS = 1e-15
_LOG_TWO_OVER_TAIL = math.log(2.0 / TAIL_MASS)
# Spectra are computed at least this much longer than needed, so that later compositions with a few more
# releases reuse a cached product.
_HEADROOM = 1.1
# From this many distinct single releases in a composition, their pmfs are convolved pairwise (``_tree``).
_TREE_FROM = 16


_Key = PrivacyEvent


def _items(composition: Composition) -> tuple[tuple[_Key, int], ...]:
    """The composition's (setting, count) pairs, in a canonical order."""
    return tuple(sorted(composition, key=lambda item: repr(item[0])))


_PINS = threading.local()


@contextlib.contextmanager
def _pinned() -> Iterator[None]:
    """While composing: keep every single pmf built (in this thread) until the end, so that a composition
    of more distinct settings than ``_built`` keeps builds each once, not once per use."""
    outer = getattr(_PINS, "pins", None)
    if outer is None:
        _PINS.pins = {}
    try:
        yield
    finally:
        if outer is None:
            _PINS.pins = None


def _single(setting: _Key, interval: float) -> tuple[_Pmf, _Pmf | None]:
    """The (remove, add) loss pmfs of one release; ``add`` is None when the PLD is symmetric."""
    pins = getattr(_PINS, "pins", None)
    if pins is None:
        return _built(setting, interval)
    found = pins.get((setting, interval))
    if found is None:
        found = pins[(setting, interval)] = _built(setting, interval)
    return found


@functools.lru_cache(maxsize=512)
def _built(setting: _Key, interval: float) -> tuple[_Pmf, _Pmf | None]:
    """``_single``, built (and the last 512 kept)."""
    distribution = single_pld(setting, interval)
    # dp_accounting keeps the pmfs in private attributes; the version is pinned in requirements.txt and the
    # tests compare every result with dp_accounting's own composition.
    remove = _dense(distribution._pmf_remove)  # pylint: disable=protected-access
    add = None if distribution._symmetric else _dense(distribution._pmf_add)  # pylint: disable=protected-access
    return remove, add


@functools.lru_cache(maxsize=1 << 16)  # three floats each
def _moments(setting: _Key, interval: float, side: str) -> tuple[float, float, float]:
    """Mean, variance and largest deviation from the mean of the grid index of a finite loss."""
    probs = _side(setting, interval, side).probs
    index = np.arange(len(probs), dtype=float)
    weights = probs / probs.sum()
    mean = float(np.dot(weights, index))
    variance = float(np.dot(weights, (index - mean) ** 2))
    support = np.nonzero(probs)[0]
    spread = float(max(mean - support[0], support[-1] - mean))
    return mean, variance, spread


# λ (per grid step) of the Chernoff bounds of a composition's tails (log_mgf): 2^-26 … 2^-2, two an octave.
LAMBDAS = 2.0 ** (np.arange(-52, -3) / 2.0)
_MGF_BLOCK = 32  # grid points per block in ``log_mgf``'s upper bound


@functools.lru_cache(maxsize=1 << 14)  # 2·len(LAMBDAS) floats each
def log_mgf(setting: _Key, interval: float, side: str) -> np.ndarray:
    """Upper bounds on log E[e^(±λ·J)] of the release's finite grid index J (absolute: lower + i), for λ in
    LAMBDAS: row 0 for +λ, row 1 for −λ.

    Over each block of _MGF_BLOCK grid points, with mass m and mean μ in [a, a + w], e^(λj) lies below its
    chord (convexity; the Edmundson–Madansky bound): Σ_B p_j·e^(λj) ≤ m·e^(λa)·(1 − f + f·e^(λw)), f =
    (μ − a)/w; the bound exceeds the exact value by a factor of at most 1 + (λw)²/8 per block mass, so it is
    tight where these λ matter (λw ≪ 1). Chernoff: P[S ≥ s] ≤ exp(−λs + Σ_releases log E e^(λJ)).
    """
    pmf = _side(setting, interval, side)
    probs = pmf.probs
    starts = np.arange(0, len(probs), _MGF_BLOCK)
    mass = np.add.reduceat(probs, starts)
    moment = np.add.reduceat(probs * np.arange(len(probs)), starts)
    keep = mass > 0.0
    starts, mass, moment = starts[keep], mass[keep], moment[keep]
    widths = np.minimum(starts + _MGF_BLOCK, len(probs)) - 1 - starts
    share = np.divide(moment / mass - starts, widths, out=np.zeros_like(mass), where=widths > 0)
    share = np.clip(share, 0.0, 1.0)
    out = np.empty((2, len(LAMBDAS)))
    for row, sign in enumerate((1.0, -1.0)):
        lam = sign * LAMBDAS[:, None]
        # the chord from a to a + w: weight 1 − f at a and f at a + w (exact for single points, w = 0)
        log_terms = np.log(mass) + lam * starts + np.log1p(share * np.expm1(lam * widths))
        out[row] = special.logsumexp(log_terms, axis=1) + sign * LAMBDAS * pmf.lower
    return out


def chernoff_window(bounds: np.ndarray, log_mass: float) -> tuple[int, int]:
    """The grid indices (lo, hi) of a composition whose log-MGF bounds are ``bounds`` (rows of
    ``log_mgf`` summed over its releases) such that P[S < lo] ≤ e^log_mass and P[S > hi] ≤ e^log_mass
    (Chernoff's bound at the best λ of LAMBDAS, each side)."""
    hi = float(np.min((bounds[0] - log_mass) / LAMBDAS))
    lo = float(np.max((log_mass - bounds[1]) / LAMBDAS))
    return math.floor(lo), math.ceil(hi)


def _side(setting: _Key, interval: float, side: str) -> _Pmf:
    remove, add = _single(setting, interval)
    return add if side == "add" and add is not None else remove


def _length(needed: int) -> int:
    """An FFT length ≥ needed·_HEADROOM, from a fixed ladder (steps of 2^(1/8)), so that compositions of
    similar size share lengths, and so cached spectra and products."""
    rung = math.ceil(8.0 * math.log2(max(needed * _HEADROOM, 16.0)))
    return int(fft.next_fast_len(math.ceil(2.0 ** (rung / 8.0)), real=True))


def _power(spectrum: np.ndarray, count: int) -> np.ndarray:
    """spectrum**count by repeated squaring (faster and as accurate as a complex power)."""
    result: np.ndarray | None = None
    base = spectrum
    while count:
        if count & 1:
            result = base.copy() if result is None else result * base
        count >>= 1
        if count:
            base = base * base
    assert result is not None
    return result


class _Composer:
    """Composes loss pmfs by count with one FFT product: Π_j FFT(p_j)^(k_j), one inverse FFT, and the
    window outside which Bernstein's inequality leaves at most 1e-15 of the mass (dp_accounting's
    ``self_convolve`` does the same for a single pmf with Chernoff bounds).

    Spectra of single pmfs and the products over the repeated settings of recent histories are kept, so a
    composition that adds a few new releases to a recent one costs a few products and one inverse FFT. What
    is kept never changes a result's bits: each is the product it stands for, in the one order.
    """

    def __init__(self, max_spectra: int = 48, max_products: int = 8) -> None:
        self._lock = threading.RLock()
        self._spectra: OrderedDict[tuple[_Key, float, str, int], np.ndarray] = OrderedDict()
        self._products: OrderedDict[tuple[float, str, int, tuple[tuple[_Key, int], ...]], np.ndarray] = (
            OrderedDict()
        )  # (interval, side, length, the repeated settings and their counts) → their product
        self._max_spectra = max_spectra
        self._max_products = max_products

    def clear(self) -> None:
        with self._lock:
            self._spectra.clear()
            self._products.clear()

    def _spectrum(self, setting: _Key, interval: float, side: str, length: int) -> np.ndarray:
        key = (setting, interval, side, length)
        spectrum = self._spectra.get(key)
        if spectrum is None:
            spectrum = fft.rfft(_side(setting, interval, side).probs, length)
            self._spectra[key] = spectrum
            while len(self._spectra) > self._max_spectra:
                self._spectra.popitem(last=False)
        else:
            self._spectra.move_to_end(key)
        return spectrum

    def compose(self, items: tuple[tuple[_Key, int], ...], interval: float, side: str) -> _Pmf:
        with self._lock, _pinned():
            return self._compose(items, interval, side)

    def _compose(self, items: tuple[tuple[_Key, int], ...], interval: float, side: str) -> _Pmf:
        pmfs = [(setting, _side(setting, interval, side), count) for setting, count in items]
        if len(pmfs) == 1 and pmfs[0][2] == 1:
            return pmfs[0][1]
        lower = sum(pmf.lower * k for _, pmf, k in pmfs)
        span = sum((len(pmf.probs) - 1) * k for _, pmf, k in pmfs)
        log_keep = math.fsum(k * math.log1p(-pmf.infinity) for _, pmf, k in pmfs)
        # Bernstein's inequality for the sum S of independent bounded grid indices (each within `spread`
        # of its mean): Pr[|S − E S| ≥ x] ≤ 2·exp(−x²/(2(V + Mx/3))); x makes that ≤ TAIL_MASS.
        mean = variance = spread = 0.0
        for setting, _, k in pmfs:
            m, v, d = _moments(setting, interval, side)
            mean, variance, spread = mean + k * m, variance + k * v, max(spread, d)
        linear = 2.0 * spread * _LOG_TWO_OVER_TAIL / 3.0
        reach = (linear + math.sqrt(linear * linear + 8.0 * variance * _LOG_TWO_OVER_TAIL)) / 2.0
        hi = int(min(span, math.ceil(mean + reach)))
        lo = int(max(0, math.floor(mean - reach)))
        truncated = lo > 0 or hi < span
        window = hi - lo + 1
        needed = max(window, max(len(pmf.probs) for _, pmf, _ in pmfs))
        spectrum, length = self._product(items, interval, side, needed)
        composed = fft.irfft(spectrum, length)
        if lo + window <= length:
            probs = composed[lo : lo + window]
        else:
            probs = composed[(lo + np.arange(window)) % length]
        probs = np.clip(probs, 0.0, None)
        infinity = -math.expm1(log_keep) + (TAIL_MASS if truncated else 0.0)
        return _Pmf(lower + lo, probs, min(1.0, infinity))

    def _product(
        self, items: tuple[tuple[_Key, int], ...], interval: float, side: str, needed: int
    ) -> tuple[np.ndarray, int]:
        """Π FFT(p_j)^(k_j) at the length ``_length(needed)``, multiplied in one fixed order (``items``'
        canonical order), so that the result is a function of ``items`` alone, whatever this process
        composed before: a ledger's total is the same in every process (issue 26).

        The product over the repeated settings (count ≥ 2: a ledger's history) is kept and used again by
        later compositions with the same repeated settings, e.g. the history plus a new release, or plus a
        planned one (never a part of it: a product extended in another order would differ in its last bits).
        """
        length = _length(needed)
        bulk = tuple((key, k) for key, k in items if k >= 2)
        spectrum: np.ndarray | None = None
        if bulk:
            key = (interval, side, length, bulk)
            spectrum = self._products.get(key)
            if spectrum is None:
                for setting, count in bulk:
                    factor = _power(self._spectrum(setting, interval, side, length), count)
                    spectrum = factor if spectrum is None else spectrum * factor
                self._products[key] = spectrum  # type: ignore[assignment]
                while len(self._products) > self._max_products:
                    self._products.popitem(last=False)
            else:
                self._products.move_to_end(key)
        singles = [setting for setting, count in items if count < 2]
        if len(singles) >= _TREE_FROM:
            # Many distinct releases (a varied history): convolve their short pmfs pairwise, then one FFT
            # at the full length, instead of one full-length FFT per release.
            convolved = _tree([_side(setting, interval, side).probs for setting in singles])
            factor = fft.rfft(_wrap(convolved, length), length)
            spectrum = factor if spectrum is None else spectrum * factor
        else:
            for setting in singles:
                factor = self._spectrum(setting, interval, side, length)
                spectrum = factor if spectrum is None else spectrum * factor
        assert spectrum is not None
        return spectrum, length


def _tree(arrays: list[np.ndarray]) -> np.ndarray:
    """The linear convolution of the arrays, composed pairwise (a balanced tree of ``fftconvolve``)."""
    while len(arrays) > 1:
        arrays = [
            signal.fftconvolve(arrays[i], arrays[i + 1]) if i + 1 < len(arrays) else arrays[i]
            for i in range(0, len(arrays), 2)
        ]
    return arrays[0]


def _wrap(probs: np.ndarray, length: int) -> np.ndarray:
    """``probs`` folded modulo ``length``: what a product of length-``length`` spectra computes (circular
    convolution), so the window read from it is the same."""
    if len(probs) <= length:
        return probs
    padded = np.concatenate([probs, np.zeros(-len(probs) % length)])
    return padded.reshape(-1, length).sum(axis=0)


_COMPOSER = _Composer()


def _delta_for_epsilon(pmf: _Pmf, interval: float, epsilon: float) -> float:
    """δ(ε) = P[L = ∞] + Σ_{l > ε} P[L = l]·(1 − e^(ε − l)), the hockey-stick divergence."""
    # Only the grid points above ε count: start a little below the first (floor is exact up to rounding)
    # and let the comparison on the computed losses decide, as over the whole grid.
    first = max(0, min(len(pmf.probs), math.floor(epsilon / interval) - pmf.lower - 2))
    losses = (pmf.lower + np.arange(first, len(pmf.probs))) * interval
    above = losses > epsilon
    tail = pmf.probs[first:]
    return float(pmf.infinity + np.dot(-np.expm1(epsilon - losses[above]), tail[above]))


def _epsilon_for_delta(pmf: _Pmf, interval: float, delta: float) -> float:
    """The smallest ε ≥ 0 with δ(ε) ≤ delta (∞ if P[L = ∞] > delta), vectorised.

    On (l_{i−1}, l_i] the divergence is U_i − e^ε·V_i with U_i = P[∞] + Σ_{j≥i} p_j and
    V_i = Σ_{j≥i} p_j e^(−l_j): find the first grid loss where δ ≤ target and solve that piece exactly
    (as dp_accounting's ``_get_epsilon_for_delta`` does by scanning).
    """
    if pmf.infinity > delta:
        return math.inf
    losses = (pmf.lower + np.arange(len(pmf.probs))) * interval
    positive = losses > 0.0
    if not np.any(positive):
        return 0.0
    losses, probs = losses[positive], pmf.probs[positive]
    upper = pmf.infinity + np.cumsum(probs[::-1])[::-1]
    lower = np.cumsum((probs * np.exp(-losses))[::-1])[::-1]
    if upper[0] - lower[0] <= delta:  # δ(0) ≤ target
        return 0.0
    # δ at each grid loss l_i uses the masses strictly above it: U_{i+1} − e^(l_i) V_{i+1}.
    next_upper = np.append(upper[1:], pmf.infinity)
    next_lower = np.maximum(np.append(lower[1:], 0.0), 0.0)
    with np.errstate(divide="ignore"):
        at_grid = next_upper - np.exp(losses + np.log(next_lower))
    i = int(np.argmax(at_grid <= delta))  # the last grid point always qualifies: δ = P[∞] ≤ target
    if lower[i] <= 0.0:
        return float(losses[i])
    epsilon = math.log((upper[i] - delta) / lower[i]) if upper[i] > delta else 0.0
    floor = losses[i - 1] if i > 0 else 0.0
    return float(min(max(epsilon, floor, 0.0), losses[i]))


class PLDAccountant(Accountant):
    """Privacy loss distributions: the tightest accounting in practice (MATH.md), via dp_accounting.

    Each setting's pessimistic PLD comes from dp_accounting (``single_pld``); identical releases are
    composed by count, and all settings of a path at once: the FFTs of the loss pmfs raised to their
    counts and multiplied, one inverse FFT, and the window that Bernstein's inequality leaves (dropped
    tail mass ≤ 1e-15 goes to the infinite loss, as in dp_accounting). δ(ε) is the hockey-stick
    divergence of the composed pmf; ε(δ) its inverse. The result is an upper bound, above the exact value
    by at most the grid's rounding (about k·interval in ε for k releases; much less in practice).

    Supports every event with a mechanism or a (ε, δ) guarantee; ρ-zCDP events, which have no single loss
    distribution, are refused.

    Args:
        value_discretization_interval: the grid of privacy losses (dp_accounting's default 1e-4).
    """

    name: ClassVar[str] = "pld"
    title: ClassVar[str] = "Privacy loss distributions (dp_accounting)"
    # Rounding leaves a sliver of mass (~1e-16) on the infinite loss, so at δ = 0 the answer is ∞, as in
    # dp_accounting; pure budgets are kept by basic or optimal composition (and so by "tightest").
    finite_at_zero_delta: ClassVar[bool] = False

    def __init__(self, value_discretization_interval: float = DEFAULT_INTERVAL) -> None:
        self.interval = check.positive_finite(value_discretization_interval, "value_discretization_interval")

    def __repr__(self) -> str:
        return f"PLDAccountant(value_discretization_interval={self.interval!r})"

    def _refusal(self, event: PrivacyEvent) -> str | None:
        if isinstance(event, ZCDPEvent):
            return "a ρ-zCDP bound has no single privacy loss distribution; use the zcdp or rdp accountant"
        return None

    def _sides(self, items: tuple[tuple[_Key, int], ...]) -> list[str]:
        asymmetric = any(_single(setting, self.interval)[1] is not None for setting, _ in items)
        return ["remove", "add"] if asymmetric else ["remove"]

    def _epsilon(self, composition: Composition, target_delta: float) -> float:
        items = _items(composition)
        with _pinned():
            return max(
                _epsilon_for_delta(_COMPOSER.compose(items, self.interval, side), self.interval, target_delta)
                for side in self._sides(items)
            )

    def _delta(self, composition: Composition, target_epsilon: float) -> float:
        items = _items(composition)
        with _pinned():
            return max(
                _delta_for_epsilon(
                    _COMPOSER.compose(items, self.interval, side), self.interval, target_epsilon
                )
                for side in self._sides(items)
            )
