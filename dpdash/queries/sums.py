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

from dpdash.facts import Bounds, Facts, Truncation
from dpdash.queries.base import (
    DataReport,
    Evaluation,
    NumericQuery,
    Sensitivities,
    as_facts,
    cell_sensitivities,
    column_name,
    is_integer_column,
    numeric_values,
    require_numeric,
    row_weights,
)

__all__ = ["Sum"]


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


class _ColumnQuery(NumericQuery):
    """A numeric query over one clamped column: ``column``, ``bounds``, ``facts`` fields."""

    __slots__ = ()

    column: str
    bounds: Bounds

    def _normalise(self) -> None:
        column_name(self.column, "column")
        object.__setattr__(self, "bounds", Bounds.of(self.bounds, self.column))
        object.__setattr__(self, "facts", as_facts(self.facts))

    def required_columns(self) -> tuple[str, ...]:
        return (self.column,)

    def _check_types(self, df: pd.DataFrame) -> None:
        require_numeric(df, self.column, self)

    def _report(self, truncation: Truncation, data: Clamped, bias: float) -> DataReport:
        return DataReport(
            rows=truncation.rows_in,
            rows_used=int(data.values.size),
            truncation=truncation,
            missing=data.missing,
            clipped_below=data.below,
            clipped_above=data.above,
            clipping_bias=(bias,),
            notes=(f"missing values of {self.column!r} are dropped",) if data.missing else (),
        )


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

    column: str
    bounds: Bounds
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        self._normalise()

    @property
    def name(self) -> str:
        return f"sum of {self.column}"

    @property
    def labels(self) -> tuple[str, ...]:
        return (f"sum of {self.column}",)

    @property
    def sensitivities(self) -> Sensitivities:
        return cell_sensitivities(
            rows_per_person=self.facts.rows_per_person,
            substitute=self.facts.substitute,
            cells=1,
            magnitude=self.bounds.magnitude,
            spread=self.bounds.spread,
        )

    def is_integer_valued(self, df: pd.DataFrame | None = None) -> bool:
        return self.bounds.is_integer and is_integer_column(df, self.column)

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        data = clamp_column(df, self.column, self.bounds)
        total = data.total(data.values)
        bias = clipping_shift(data.raw, data.values, data.weights)
        return Evaluation(np.array([total]), self._report(truncation, data, bias))


@dataclass(frozen=True, slots=True, kw_only=True)
class _CentredSum(_ColumnQuery):
    """Σ (clamp(x) − m), m = (L + U)/2: values in [−h, h], h = (U − L)/2, or 0 when missing.
    Sensitivity c·h under add/remove, 2c·h under substitute."""

    kind: ClassVar[str] = "centred_sum"
    weighable: ClassVar[bool] = True

    column: str
    bounds: Bounds
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        self._normalise()

    @property
    def name(self) -> str:
        return f"centred sum of {self.column}"

    @property
    def labels(self) -> tuple[str, ...]:
        return (f"centred sum of {self.column}",)

    @property
    def sensitivities(self) -> Sensitivities:
        h = self.bounds.half_width
        return cell_sensitivities(
            rows_per_person=self.facts.rows_per_person,
            substitute=self.facts.substitute,
            cells=1,
            magnitude=h,
            spread=2.0 * h,
        )

    def is_integer_valued(self, df: pd.DataFrame | None = None) -> bool:
        return (
            self.bounds.is_integer and self.bounds.centre.is_integer() and is_integer_column(df, self.column)
        )

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        data = clamp_column(df, self.column, self.bounds)
        m = self.bounds.centre
        total = data.total(data.values - m)
        bias = clipping_shift(data.raw, data.values, data.weights)
        return Evaluation(np.array([total]), self._report(truncation, data, bias))


@dataclass(frozen=True, slots=True, kw_only=True)
class _CentredSquares(_ColumnQuery):
    """Σ (clamp(x) − m)²: values in [0, h²], or 0 when missing. Sensitivity c·h² under both relations."""

    kind: ClassVar[str] = "centred_squares"

    column: str
    bounds: Bounds
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        self._normalise()

    @property
    def name(self) -> str:
        return f"centred sum of squares of {self.column}"

    @property
    def labels(self) -> tuple[str, ...]:
        return (f"centred sum of squares of {self.column}",)

    @property
    def sensitivities(self) -> Sensitivities:
        h2 = self.bounds.half_width**2
        return cell_sensitivities(
            rows_per_person=self.facts.rows_per_person,
            substitute=self.facts.substitute,
            cells=1,
            magnitude=h2,
            spread=h2,
        )

    def is_integer_valued(self, df: pd.DataFrame | None = None) -> bool:
        return (
            self.bounds.is_integer and self.bounds.centre.is_integer() and is_integer_column(df, self.column)
        )

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        data = clamp_column(df, self.column, self.bounds)
        m = self.bounds.centre
        total = float(((data.values - m) ** 2).sum())
        with np.errstate(invalid="ignore", over="ignore"):
            bias = clipping_shift((data.raw - m) ** 2, (data.values - m) ** 2)
        return Evaluation(np.array([total]), self._report(truncation, data, bias))


