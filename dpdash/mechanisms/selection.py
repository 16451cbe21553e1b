"""What every selection mechanism offers, and the exact trials they share.

A selection mechanism returns the index of one of m candidates given their utilities u (higher is
better), whose sensitivity is Δu: neighbours move each utility by at most Δu. It is *monotone* when
between neighbours all utilities move in the same direction (counts under add/remove).

Like the additive mechanisms, each has an analytic side (``probabilities``: the exact selection
probabilities; ``utility_gap``: accuracy) and a random side: ``simulate`` (numpy, previews only) and
``release`` (exact, on the operating system's randomness, no seed).

Exactness of ``release``. Every decision is an exact Bernoulli trial against exp(−γ) for a rational
γ ≥ 0 (the thresholds of ``dpdash.sampling``: a lazily read uniform compared with rigorous bounds on
exp(−γ)), or an exact uniform integer. Utilities and parameters are exact rationals: integers, or
floats taken as the binary numbers they hold, so γ = ε·(u* − u_r)/(2Δu) is computed without rounding.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.sampling.exact_math import Bounds, exp_bounds
from dpdash.sampling.thresholds import IndexedThresholds

__all__ = ["SelectionMechanism", "exact_utilities", "exp_trials", "row_chunks"]

_PREC = 128
#: Gaps u* − u_r beyond this are clamped before the float side: f·2**1000 > 10**194 for every supported
#: ε and Δu (f ≥ 1e-6/(2·1e100)), so exp(−f·gap) is 0 in doubles either way.
_FLOAT_GAP = 2**1000
#: Entries (trials × candidates) drawn at once by the vectorised samplers.
_CHUNK = 2**22


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectionMechanism(ABC):
    """Base class of the selection mechanisms, frozen keyword-only dataclasses with these fields (a
    subclass may change their defaults):

    Args:
        epsilon: ε > 0.
        sensitivity: Δu > 0, the utilities' sensitivity.
        monotone: True when between neighbours all utilities move in the same direction.
    """

    name: ClassVar[str]
    delta: ClassVar[float] = 0.0  # every selection mechanism here is pure ε-DP

    epsilon: float
    sensitivity: float = 1.0
    monotone: bool = False

    def __post_init__(self) -> None:
        self._validate()

    def _validate(self) -> None:
        object.__setattr__(self, "epsilon", check.epsilon(self.epsilon))
        object.__setattr__(self, "sensitivity", check.sensitivity(self.sensitivity))
        if not isinstance(self.monotone, bool):
            raise ParameterTypeError(f"monotone must be True or False, got monotone={self.monotone!r}")

    @property
    def factor(self) -> Fraction:
        """The exact exponent factor f: ε/Δu for monotone utilities, ε/(2Δu) otherwise."""
        f = Fraction(self.epsilon) / Fraction(self.sensitivity)
        return f if self.monotone else f / 2

    @property
    def rho(self) -> float:
        """ρ of the zCDP guarantee it implies: ε²/2 for ε-DP (Bun & Steinke 2016, Prop. 1.4)."""
        return self.epsilon**2 / 2.0

    @abstractmethod
    def probabilities(self, utilities: npt.ArrayLike) -> np.ndarray:
        """The exact probability of selecting each candidate."""

    def release(self, utilities: npt.ArrayLike) -> int:
        """The index of the selected candidate, drawn exactly on OS randomness (no seed, on purpose):
        one draw of ``release_trials``, the same code."""
        return int(self.release_trials(utilities, 1)[0])

    @abstractmethod
    def release_trials(self, values: npt.ArrayLike, n: int) -> np.ndarray:
        """n independent outputs of ``release(values)``, release-grade (exact samplers on OS randomness,
        the same code path as ``release``): int64 indices of shape (n,). ``values`` are the utilities,
        validated as ``release`` validates them. For an empirical privacy audit."""

    @abstractmethod
    def _draw(self, utilities: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` selections with numpy's generator."""

    def simulate(
        self, utilities: npt.ArrayLike, size: int, rng: np.random.Generator | int | None = None
    ) -> np.ndarray:
        """``size`` possible selections (indices), for previews only (numpy sampling, never published)."""
        u = float_utilities(utilities)
        n = check.draws(size, "size", u.size)
        generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        return self._draw(u, generator, n)

    @abstractmethod
    def utility_gap(self, confidence: float = 0.95, candidates: int = 1) -> float:
        """A gap g with Pr[u(selected) ≥ max_r u(r) − g] ≥ confidence, for ``candidates`` candidates."""

    def parameters(self) -> dict[str, Any]:
        """The mechanism's parameters as plain data (for a release record)."""
        return {"epsilon": self.epsilon, "sensitivity": self.sensitivity, "monotone": self.monotone}


# ---- shared helpers ---------------------------------------------------------------------------------


def _as_vector(utilities: npt.ArrayLike) -> list[Any]:
    if isinstance(utilities, str | bytes) or not hasattr(utilities, "__iter__"):
        raise ParameterTypeError(f"utilities must be a sequence of numbers, got utilities={utilities!r}")
    if isinstance(utilities, np.ma.MaskedArray) and np.ma.count_masked(utilities):
        raise ParameterError("utilities has masked (missing) entries; drop or fill them first")
    values = (
        list(np.asarray(utilities, dtype=object).ravel()) if not isinstance(utilities, list) else utilities
    )
    if not values:
        raise ParameterError("utilities must hold at least one candidate, got an empty sequence")
    return values


def exact_utilities(utilities: npt.ArrayLike) -> list[Fraction]:
    """The utilities as exact rationals (a float is the binary number it holds); refuses non-finite."""
    out = []
    for value in _as_vector(utilities):
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, int | float | Fraction):
            raise ParameterTypeError(f"utilities must be real numbers, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ParameterError(f"utilities must be finite numbers, got {value!r}")
        out.append(Fraction(value))
    return out


def float_utilities(utilities: npt.ArrayLike) -> np.ndarray:
    """The utilities as a float array (for the analytic side and simulation)."""
    exact = exact_utilities(utilities)
    top = max(exact)
    # Shift by the maximum exactly before rounding, so that large utilities keep their differences.
    return np.array([float(max(u - top, -_FLOAT_GAP)) for u in exact])


def exact_gammas(utilities: npt.ArrayLike, factor: Fraction) -> list[Fraction]:
    """γ_r = f·(u* − u_r) ≥ 0, exactly."""
    exact = exact_utilities(utilities)
    top = max(exact)
    return [factor * (top - u) for u in exact]


def row_chunks(rows: int, width: int) -> list[tuple[int, int]]:
    """[start, stop) blocks of ``rows`` rows of ``width`` entries each, at most _CHUNK entries a block
    (at least one row): keeps the memory of a vectorised draw bounded."""
    step = max(_CHUNK // max(width, 1), 1)
    return [(start, min(start + step, rows)) for start in range(0, rows, step)]


def exp_trials(gammas: list[Fraction]) -> IndexedThresholds:
    """A table for exact Bernoulli(exp(−γ_r)) trials, one entry per candidate."""
    lows, highs = [], []
    for gamma in gammas:
        lo, hi = exp_bounds(-gamma, _PREC)
        lows.append(lo)
        highs.append(hi)

    def bounds(key: int, prec: int) -> Bounds:
        return exp_bounds(-gammas[key], prec)

    return IndexedThresholds(lows, highs, _PREC, bounds)
