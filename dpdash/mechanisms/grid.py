"""The fixed power-of-two grid on which real-valued answers are released.

Real-valued noise sampled in floating point leaks the input through the set of doubles it can output
(Mironov, CCS 2012). dpdash never releases such noise. A real answer v is instead rounded to the grid
g·ℤ (g a power of two, so v/g and n·g are exact in binary floating point), exact integer noise Z is
added in grid units, and the release is g·(round(v/g) + Z): every output of every input lies on the
same grid, and which outputs are possible carries no information.

Rounding moves each coordinate by at most g/2, so neighbours' rounded answers (in grid units) differ by
at most Δ/g + 1 in each coordinate that changes: the integer noise is calibrated to that larger
sensitivity, and the stated ε (and δ) hold for the original Δ. The grid is chosen so that this costs at
most 1/4096 of the sensitivity (GRID_FINENESS).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from dpdash import _validation as check
from dpdash.errors import ParameterError

__all__ = [
    "GRID_FINENESS",
    "MAX_GRID_UNITS",
    "Grid",
    "IntegerNoise",
    "ReleasePlan",
    "grid_for",
    "integer_answers",
]

#: The grid step is at most sensitivity / (coordinates that change × GRID_FINENESS).
GRID_FINENESS = 2**12
#: |answer| / g and |release| / g must stay below this, so that they are exact doubles and int64s.
MAX_GRID_UNITS = 2**52
#: A release plan's noise must stay below MAX_GRID_UNITS / 4 except with this probability.
NOISE_TAIL = 2.0**-64


def _power_of_two_at_most(x: float) -> float:
    """The largest power of two ≤ x (exact: frexp reads the binary exponent)."""
    _, exponent = math.frexp(x)  # x = mantissa·2^exponent, mantissa in [0.5, 1)
    return math.ldexp(1.0, exponent - 1)


@dataclass(frozen=True, slots=True)
class Grid:
    """A grid g·ℤ with g a power of two."""

    step: float

    def to_units(self, values: npt.ArrayLike, name: str = "values") -> np.ndarray:
        """round(v/g) as int64, refusing what cannot be released: empty, non-numeric, masked, ragged,
        non-finite or too large."""
        array = check.numeric_array(values, name).astype(float)
        if array.size == 0:
            raise ParameterError(f"{name} must hold at least one answer, got an empty array")
        if not np.all(np.isfinite(array)):
            raise ParameterError(
                f"{name} must be finite numbers (no NaN or infinity), got {name}={_preview(array)}"
            )
        with np.errstate(over="ignore"):  # an overflow to ±inf is refused just below
            units = array / self.step  # exact: division by a power of two
        limit = MAX_GRID_UNITS / 2
        if np.any(np.abs(units) >= limit):
            raise ParameterError(
                f"{name} must have magnitude below {limit * self.step:.6g} to be released on the grid "
                f"of step {self.step:g}, got {name}={_preview(array)}; rescale the query (e.g. report "
                "in thousands) or use a larger sensitivity"
            )
        return np.rint(units).astype(np.int64)

    def from_units(self, units: np.ndarray) -> np.ndarray:
        """n·g as float64 (exact for |n| < 2^52)."""
        if np.any(np.abs(units) >= MAX_GRID_UNITS):
            raise ParameterError("the noisy release left the grid's exact range; nothing was released")
        return units.astype(float) * self.step


class IntegerNoise(Protocol):
    """Exact integer noise as a release needs it: draws, tails and half-widths."""

    def sample(self, shape: tuple[int, ...]) -> np.ndarray:
        """Exact int64 draws on OS randomness (``dpdash.sampling``)."""
        ...

    def log_abs_tail(self, m: int) -> float:
        """ln Pr[|Z| > m] for an integer m ≥ 0."""
        ...

    def half_width(self, tail: float) -> int:
        """The smallest integer a ≥ 0 with Pr[|Z| > a] ≤ tail."""
        ...


@dataclass(frozen=True, slots=True)
class ReleasePlan:
    """What ``release`` does to k answers: round them to ``grid`` (``None``: integer answers, taken as
    they are) and add ``noise`` in grid units."""

    grid: Grid | None
    noise: IntegerNoise

    def __post_init__(self) -> None:
        # An answer below 2**51 units plus noise below 2**50 units stays exact (in int64 and in doubles):
        # refuse noise that passes 2**50 with probability above 2**-64.
        width = self.noise.half_width(NOISE_TAIL)
        if width >= MAX_GRID_UNITS / 4:
            raise ParameterError(
                f"the noise is too wide to release exactly: {width:.3g} grid steps at tail probability "
                "2**-64, beyond 2**50; use a larger epsilon, fewer answers, or a smaller sensitivity"
            )

    @property
    def step(self) -> float:
        """The grid step g (1 for integer answers)."""
        return 1.0 if self.grid is None else self.grid.step

    def apply(self, values: npt.ArrayLike, mechanism: str, trials: int | None = None) -> np.ndarray:
        """The noisy release of ``values`` (validated; nothing is drawn for bad input).

        ``trials=n`` gives n independent releases of the same values, shape ``(n, *shape(values))``: the
        answers are rounded once (rounding is deterministic) and each copy gets its own noise.
        """
        if self.grid is None:
            answers = integer_answers(values, mechanism)
            return answers + self.noise.sample(_noise_shape(answers.shape, trials))
        units = self.grid.to_units(values)
        return self.grid.from_units(units + self.noise.sample(_noise_shape(units.shape, trials)))

    def half_width(self, tail: float) -> float:
        """A half-width of release − truth with per-answer tail ≤ ``tail``: g·(exact half-width of the
        noise), plus g/2 for rounding a real answer to the grid."""
        exact = self.noise.half_width(tail)
        return exact if self.grid is None else self.grid.step * exact + self.grid.step / 2


def grid_for(sensitivity: float, rounding_norm: float) -> Grid:
    """The grid for a query of sensitivity Δ whose rounding can add ``rounding_norm`` grid units to the
    distance between neighbours (k for ℓ1 over k answers, √k for ℓ2, 1 for one answer): the largest
    power of two g ≤ Δ/(rounding_norm·GRID_FINENESS), so rounding costs at most Δ/GRID_FINENESS."""
    return Grid(_power_of_two_at_most(sensitivity / (rounding_norm * GRID_FINENESS)))


def integer_answers(values: npt.ArrayLike, mechanism: str, name: str = "values") -> np.ndarray:
    """Integer true answers as int64, for integer mechanisms (no grid: the answers are on ℤ already)."""
    units = Grid(1.0).to_units(values, name)
    array = check.numeric_array(values, name).astype(float)
    if np.any(units != array):
        raise ParameterError(
            f"{name} must be integers for the {mechanism} mechanism (integer queries), "
            f"got {name}={_preview(array)}"
        )
    return units


def _noise_shape(shape: tuple[int, ...], trials: int | None) -> tuple[int, ...]:
    return shape if trials is None else (trials, *shape)


def _preview(array: np.ndarray) -> str:
    flat = array.ravel()
    shown = ", ".join(f"{v:g}" for v in flat[:5])
    return f"[{shown}{', ...' if flat.size > 5 else ''}]"
