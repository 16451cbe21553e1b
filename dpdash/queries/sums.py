"""Bounded sums, means and variances of a numeric column.

Values are clamped into the public bounds [L, U]; missing values (NaN/None) are dropped and counted.
A mean or a variance is built from noisy pieces, each costing a stated share of the budget:

- mean = m + S̃/max(Ñ, 1), with m = (L + U)/2, S̃ a noisy sum of the *centred* values clamp(x) − m
  and Ñ a noisy count of the non-missing values;
- variance = Q̃/D − (S̃/D)², D = max(Ñ, 1), with Q̃ a noisy sum of (clamp(x) − m)².

Centring halves the sum's sensitivity under add/remove (c·(U − L)/2 instead of c·max(|L|, |U|)) and
makes it independent of where [L, U] sits. The split of ε (and δ) between the pieces: the error of
the mean is to first order (Z_S − (μ − m)·Z_N)/n, with variance ∝ Δ_S²/ε_S² + (μ − m)²·Δ_N²/ε_N²;
at the worst case |μ − m| = h = (U − L)/2 the two terms have equal weight (Δ_S = c·h = h·Δ_N), and
A/ε_S² + A/ε_N² under ε_S + ε_N = ε is smallest at ε_S = ε_N = ε/2. So the mean's default split is
half/half (minimax for that first-order variance). For the variance there is no such closed-form
optimum; the default is thirds, and any split can be given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from dpdash._forward import Forwarded
from dpdash.facts import Bounds, Facts, Truncation
from dpdash.queries.base import (
    DataReport,
    Evaluation,
    NumericQuery,
    Query,
    Sensitivities,
    as_facts,
    bounded_sensitivities,
    column_name,
    is_integer_column,
    numeric_values,
    require_numeric,
    row_weights,
)

__all__ = [
    "CENTRED_SQUARES",
    "CENTRED_SUM",
    "SUM",
    "BoundedColumn",
    "Clamped",
    "ColumnSum",
    "Sum",
    "Summand",
    "clamp_column",
    "clipping_shift",
    "column_report",
]


@dataclass(frozen=True, slots=True)
class Clamped:
    """A numeric column after dropping missing values and clamping (NOT PRIVATE)."""

    raw: np.ndarray  # non-missing values, unclamped
    values: np.ndarray  # non-missing values, clamped
    present: np.ndarray  # mask over the rows: value not missing
    below: int
    above: int
    weights: np.ndarray | None = None  # the non-missing rows' weights under weighted bounding

    def total(self, values: np.ndarray) -> float:
        """Σ values, each row weighted when bounding weights rows."""
        return float(values.sum() if self.weights is None else (values * self.weights).sum())

    @property
    def count(self) -> float | int:
        """The number of non-missing values, weighted when bounding weights rows."""
        return int(self.values.size) if self.weights is None else float(self.weights.sum())

    @property
    def missing(self) -> int:
        return int((~self.present).sum())


def clamp_column(df: pd.DataFrame, column: str, bounds: Bounds) -> Clamped:
    values, missing = numeric_values(df[column])
    raw = values[~missing]
    weights = row_weights(df)
    return Clamped(
        weights=None if weights is None else weights[~missing],
        raw=raw,
        values=bounds.clamp(raw),
        present=~missing,
        below=int((raw < bounds.lower).sum()),
        above=int((raw > bounds.upper).sum()),
    )


def column_report(truncation: Truncation, data: Clamped, bias: float, column: str) -> DataReport:
    """The owner report of a statistic of one clamped column: missing values, clipping and its bias."""
    return DataReport(
        rows=truncation.rows_in,
        rows_used=int(data.values.size),
        truncation=truncation,
        missing=data.missing,
        clipped_below=data.below,
        clipped_above=data.above,
        clipping_bias=(bias,),
        notes=(f"missing values of {column!r} are dropped",) if data.missing else (),
    )


def _bias(clamped: float, raw: float) -> float:
    with np.errstate(invalid="ignore"):
        value = clamped - raw
    return float(value) if not math.isnan(value) else math.nan


def clipping_shift(raw: np.ndarray, clamped: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Σ (clamped − raw) over the values that clamping moved (each times its row's weight, when rows are
    weighted): exactly 0.0 when none moved, else the correctly rounded sum of the changes
    (``math.fsum``), so that no floating-point residue of summing all the values twice (e.g. 3.553e-15)
    is reported as bias. Non-finite raw values give ±inf/NaN."""
    raw = np.asarray(raw, dtype=float)
    clamped = np.asarray(clamped, dtype=float)
    moved = raw != clamped
    if not moved.any():
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        changes = clamped[moved] - raw[moved]
        if weights is not None:
            changes = changes * weights[moved]
    if not np.all(np.isfinite(changes)):
        with np.errstate(invalid="ignore", over="ignore"):
            return float(np.sum(changes))
    return math.fsum(changes.tolist())


@dataclass(frozen=True, slots=True)
class Summand:
    """What one row adds to a column sum, from its value clamped into [L, U] (0 when it is missing):
    x itself, x − m with m = (L + U)/2, or (x − m)² (``centred``, ``squared``).

    Its range [a, b] fixes the sensitivities (``dpdash.queries.base``): M = max(|a|, |b|) and
    R = max(b, 0) − min(a, 0). For x, [a, b] = [L, U]; for x − m, [−h, h] with h = (U − L)/2, so M = h
    and R = 2h; for (x − m)², [0, h²], so M = R = h².

    >>> CENTRED_SUM.extent(Bounds(0, 100)), CENTRED_SQUARES.extent(Bounds(0, 100))
    ((50.0, 100.0), (2500.0, 2500.0))
    """

    title: str
    centred: bool = False
    squared: bool = False

    def centre(self, bounds: Bounds) -> float:
        """The m subtracted from each value: (L + U)/2 when centred, else 0."""
        return bounds.centre if self.centred else 0.0

    def of(self, values: np.ndarray, bounds: Bounds) -> np.ndarray:
        """Each row's term from its (clamped or raw) value."""
        terms = values - bounds.centre if self.centred else values
        return terms**2 if self.squared else terms

    def range(self, bounds: Bounds) -> tuple[float, float]:
        """[a, b]: the terms a clamped value can give (a = 0 for a square, which 0 for a missing value
        reaches anyway)."""
        if self.centred:
            low, high = -bounds.half_width, bounds.half_width
        else:
            low, high = bounds.lower, bounds.upper
        if self.squared:
            return 0.0, max(abs(low), abs(high)) ** 2
        return low, high

    def extent(self, bounds: Bounds) -> tuple[float, float]:
        """(M, R) = (max(|a|, |b|), max(b, 0) − min(a, 0)) of the range [a, b]."""
        low, high = self.range(bounds)
        return max(abs(low), abs(high)), max(high, 0.0) - min(low, 0.0)

    def shift(self, data: Clamped, bounds: Bounds) -> float:
        """The clipping bias of the sum, Σ (term(clamped) − term(raw)) over the values clamping moved. For
        x and x − m that is Σ (clamped − raw), summed as such (no rounding of the centring)."""
        if not self.squared:
            return clipping_shift(data.raw, data.values, data.weights)
        with np.errstate(invalid="ignore", over="ignore"):
            return clipping_shift(self.of(data.raw, bounds), self.of(data.values, bounds), data.weights)

    def is_integer_valued(self, bounds: Bounds) -> bool:
        """Whether integer values give integer terms: integer bounds (and an integer centre when centred)."""
        return bounds.is_integer and (not self.centred or bounds.centre.is_integer())


#: The summands of the column sums: Σ clamp(x), Σ (clamp(x) − m) and Σ (clamp(x) − m)².
SUM = Summand("sum")
CENTRED_SUM = Summand("centred sum", centred=True)
CENTRED_SQUARES = Summand("centred sum of squares", centred=True, squared=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundedColumn(Query):
    """A query over one numeric column clamped into public bounds: ``column`` and ``bounds`` (the query
    adds its own fields, then ``facts``); its name is "<title> of <column>", its one label the same."""

    title: ClassVar[str]

    column: str
    bounds: Bounds

    def __post_init__(self) -> None:
        column_name(self.column, "column")
        object.__setattr__(self, "bounds", Bounds.of(self.bounds, self.column))
        object.__setattr__(self, "facts", as_facts(self.facts))

    @property
    def name(self) -> str:
        return f"{self.title} of {self.column}"

    @property
    def labels(self) -> tuple[str, ...]:
        return (self.name,)

    def required_columns(self) -> tuple[str, ...]:
        return (self.column,)

    def _check_types(self, df: pd.DataFrame) -> None:
        require_numeric(df, self.column, self)


class ColumnSum(NumericQuery):
    """A sum per cell (one cell, or one per group) of a ``summand`` of the clamped values of ``column``:
    its title, sensitivities and integrality are the summand's."""

    __slots__ = ()

    summand: ClassVar[Summand]
    column: str
    bounds: Bounds

    title = Forwarded[str]("summand.title")

    @property
    def sensitivities(self) -> Sensitivities:
        magnitude, spread = self.summand.extent(self.bounds)
        return self._bounded(cells=len(self.labels), magnitude=magnitude, spread=spread)

    def _bounded(self, *, cells: int, magnitude: float, spread: float) -> Sensitivities:
        """The cells' sensitivities under c rows per person (per-group bounds override this)."""
        return bounded_sensitivities(self.facts, cells=cells, magnitude=magnitude, spread=spread)

    def is_integer_valued(self, df: pd.DataFrame | None = None) -> bool:
        return self.summand.is_integer_valued(self.bounds) and is_integer_column(df, self.column)


@dataclass(frozen=True, slots=True, kw_only=True)
class _ColumnQuery(BoundedColumn, ColumnSum):
    """Σ summand(clamp(x)) over the non-missing values of ``column``."""

    facts: Facts = field(default_factory=Facts)

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        data = clamp_column(df, self.column, self.bounds)
        total = data.total(self.summand.of(data.values, self.bounds))
        bias = self.summand.shift(data, self.bounds)
        return Evaluation(np.array([total]), column_report(truncation, data, bias, self.column))


@dataclass(frozen=True, slots=True, kw_only=True)
class Sum(_ColumnQuery):
    """Σ clamp(x, L, U) over the non-missing values of ``column``.

    One row contributes a value in [L, U], or 0 when missing; so with M = max(|L|, |U|) and
    R = max(U, 0) − min(L, 0): sensitivity c·M under add/remove, c·R under substitute (= c·(U − L)
    when L ≤ 0 ≤ U). Integer-valued when the bounds are integers and the column has an integer type.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"income": [10.0, 250.0, None, 40.0]})
    >>> q = Sum(column="income", bounds=(0, 100))
    >>> float(q.true_answer(df)[0]), q.l1_sensitivity
    (150.0, 100.0)
    >>> q.evaluate(df).report.clipping_bias     # 250 clamped to 100
    (-150.0,)
    """

    kind: ClassVar[str] = "sum"
    weighable: ClassVar[bool] = True
    summand: ClassVar[Summand] = SUM


@dataclass(frozen=True, slots=True, kw_only=True)
class _CentredSum(_ColumnQuery):
    """Σ (clamp(x) − m), m = (L + U)/2: values in [−h, h], h = (U − L)/2, or 0 when missing.
    Sensitivity c·h under add/remove, 2c·h under substitute."""

    kind: ClassVar[str] = "centred_sum"
    weighable: ClassVar[bool] = True
    summand: ClassVar[Summand] = CENTRED_SUM


@dataclass(frozen=True, slots=True, kw_only=True)
class _CentredSquares(_ColumnQuery):
    """Σ (clamp(x) − m)²: values in [0, h²], or 0 when missing. Sensitivity c·h² under both relations."""

    kind: ClassVar[str] = "centred_squares"
    summand: ClassVar[Summand] = CENTRED_SQUARES
