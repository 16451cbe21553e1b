"""Means and variances of a bounded column: each released as pieces (a count of valid values and centred
sums of values or squares) that are combined after the noise, with the ε shared among the pieces."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.facts import Bounds, Facts, Truncation
from dpdash.queries.base import (
    CompositeQuery,
    DataReport,
    Evaluation,
    NumericQuery,
    Piece,
    Sensitivities,
    as_facts,
    column_name,
    count_sensitivities,
    require_numeric,
    row_weights,
)
from dpdash.queries.sums import Clamped, _bias, _CentredSquares, _CentredSum, clamp_column, clipping_shift

__all__ = ["Mean", "Variance"]


@dataclass(frozen=True, slots=True, kw_only=True)
class _ValidCount(NumericQuery):
    """The number of non-missing values of ``column``: sensitivity c under both relations."""

    kind: ClassVar[str] = "valid_count"
    weighable: ClassVar[bool] = True
    integer_valued: ClassVar[bool] = True

    column: str
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        column_name(self.column, "column")
        object.__setattr__(self, "facts", as_facts(self.facts))

    def required_columns(self) -> tuple[str, ...]:
        return (self.column,)

    @property
    def name(self) -> str:
        return f"count of non-missing {self.column}"

    @property
    def labels(self) -> tuple[str, ...]:
        return (f"count of {self.column}",)

    @property
    def sensitivities(self) -> Sensitivities:
        return count_sensitivities(self.facts, 1)

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        present = df[self.column].notna().to_numpy()
        count = int(present.sum())
        report = DataReport(
            rows=truncation.rows_in, rows_used=count, truncation=truncation, missing=int((~present).sum())
        )
        weights = row_weights(df)
        if weights is not None:
            return Evaluation(np.array([float(weights[present].sum())]), report)
        return Evaluation(np.array([count], dtype=np.int64), report)


def _shares(split: Any, count: int, name: str) -> tuple[float, ...]:
    if isinstance(split, int | float) and not isinstance(split, bool) and count == 2:
        values: tuple[float, ...] = (float(split), 1.0 - float(split))
    elif isinstance(split, tuple | list) and len(split) == count:
        values = tuple(check.finite(s, name) for s in split)
    else:
        raise ParameterTypeError(
            f"{name} must be {'a number in (0, 1) or ' if count == 2 else ''}{count} shares of the budget, "
            f"got {name}={split!r}"
        )
    if any(not 0.0 < v < 1.0 for v in values) or not math.isclose(sum(values), 1.0, abs_tol=1e-12):
        raise ParameterError(f"{name} must be {count} shares in (0, 1) adding up to 1, got {name}={split!r}")
    return values


class _CompositeColumn(CompositeQuery):
    __slots__ = ()

    column: str
    bounds: Bounds

    def required_columns(self) -> tuple[str, ...]:
        return (self.column,)

    def _check_types(self, df: pd.DataFrame) -> None:
        require_numeric(df, self.column, self)

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        pieces = {p.name: p.query._evaluate(df, truncation).values for p in self.pieces()}
        data = clamp_column(df, self.column, self.bounds)
        value = float(self.combine(pieces)[0])
        report = DataReport(
            rows=truncation.rows_in,
            rows_used=int(data.values.size),
            truncation=truncation,
            missing=data.missing,
            clipped_below=data.below,
            clipped_above=data.above,
            clipping_bias=(self._clipping_bias(data),),
            notes=(f"missing values of {self.column!r} are dropped",) if data.missing else (),
        )
        return Evaluation(np.array([value]), report, pieces=pieces)

    def _clipping_bias(self, data: Clamped) -> float:
        """(statistic of the clamped values) − (statistic of the raw values); exactly 0 when nothing
        was clipped."""
        if data.below == 0 and data.above == 0:
            return 0.0
        return _bias(self._statistic(data.values), self._statistic(data.raw))

    def _statistic(self, raw: np.ndarray) -> float:
        raise NotImplementedError


@dataclass(frozen=True, slots=True, kw_only=True)
class Mean(_CompositeColumn):
    """The mean of clamp(x, L, U) over the non-missing values of ``column``, from two noisy pieces.

    mean = m + S̃/max(Ñ, 1) with m = (L + U)/2, S̃ the noisy sum of clamp(x) − m (sensitivity c·h
    under add/remove, 2c·h under substitute, h = (U − L)/2) and Ñ the noisy count of non-missing
    values (sensitivity c). ``split`` is S̃'s share of ε (and δ); Ñ gets the rest. Default 1/2: the
    split that minimises the worst-case first-order variance (module docstring).

    Accuracy: released − true = (Z_S − (S/N)·Z_N)/max(Ñ, 1) for Ñ ≥ 1 (Z the noises), so the ± a
    release states is the c-quantile of that error, simulated from both noise laws at the released
    pieces (``dpdash.published``); the closed form (a_S + h·a_N)/max(Ñ, 1), which holds whenever both
    pieces are within their half-widths, was 2.4 times looser over 1 000 releases and covered 99.9%.

    >>> import pandas as pd
    >>> q = Mean(column="age", bounds=(0, 100))
    >>> float(q.true_answer(pd.DataFrame({"age": [20, 40, None, 120]}))[0])
    53.333333333333336
    >>> [(p.name, p.share, p.query.l1_sensitivity) for p in q.pieces()]
    [('sum', 0.5, 50.0), ('count', 0.5, 1)]
    """

    kind: ClassVar[str] = "mean"
    weighable: ClassVar[bool] = True

    column: str
    bounds: Bounds
    split: float = 0.5
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        column_name(self.column, "column")
        object.__setattr__(self, "bounds", Bounds.of(self.bounds, self.column))
        object.__setattr__(self, "facts", as_facts(self.facts))
        object.__setattr__(self, "split", _shares(self.split, 2, "split")[0])

    @property
    def name(self) -> str:
        return f"mean of {self.column}"

    @property
    def labels(self) -> tuple[str, ...]:
        return (f"mean of {self.column}",)

    def pieces(self) -> tuple[Piece, ...]:
        return (
            Piece("sum", _CentredSum(column=self.column, bounds=self.bounds, facts=self.facts), self.split),
            Piece("count", _ValidCount(column=self.column, facts=self.facts), 1.0 - self.split),
        )

    @property
    def combination(self) -> str:
        return "mean = (L + U)/2 + noisy centred sum / max(noisy count, 1)"

    def combine(self, pieces: dict[str, np.ndarray]) -> np.ndarray:
        s = np.asarray(pieces["sum"], dtype=float)
        n = np.maximum(np.asarray(pieces["count"], dtype=float), 1.0)
        return self.bounds.centre + s / n

    def _clipping_bias(self, data: Clamped) -> float:
        """Σ(clamped − raw)/n over the n values (weighted: Σ w·(clamped − raw)/Σ w): the changes of the
        clipped values only (fsum)."""
        if data.values.size == 0:
            return 0.0
        return clipping_shift(data.raw, data.values, data.weights) / data.count

    def _statistic(self, raw: np.ndarray) -> float:
        if raw.size == 0:
            return self.bounds.centre
        with np.errstate(invalid="ignore", over="ignore"):
            return float(raw.mean())


@dataclass(frozen=True, slots=True, kw_only=True)
class Variance(_CompositeColumn):
    """The population variance (ddof 0) of clamp(x, L, U) over the non-missing values, from three
    noisy pieces: S̃ (centred sum), Q̃ (centred sum of squares, sensitivity c·h² under both relations)
    and Ñ (count); variance = Q̃/D − (S̃/D)², D = max(Ñ, 1). ``split`` gives the shares of ε (and δ)
    for (sum, squares, count); default thirds.

    Accuracy: the ± a release states is the c-quantile of the error simulated from the three pieces'
    noise laws at the released pieces (``dpdash.published``).

    >>> import pandas as pd
    >>> q = Variance(column="x", bounds=(0, 10))
    >>> float(q.true_answer(pd.DataFrame({"x": [2.0, 4.0, 6.0]}))[0])
    2.6666666666666665
    """

    kind: ClassVar[str] = "variance"

    column: str
    bounds: Bounds
    split: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        column_name(self.column, "column")
        object.__setattr__(self, "bounds", Bounds.of(self.bounds, self.column))
        object.__setattr__(self, "facts", as_facts(self.facts))
        object.__setattr__(self, "split", _shares(self.split, 3, "split"))

    @property
    def name(self) -> str:
        return f"variance of {self.column}"

    @property
    def labels(self) -> tuple[str, ...]:
        return (f"variance of {self.column}",)

    def pieces(self) -> tuple[Piece, ...]:
        common = {"column": self.column, "bounds": self.bounds, "facts": self.facts}
        return (
            Piece("sum", _CentredSum(**common), self.split[0]),
            Piece("squares", _CentredSquares(**common), self.split[1]),
            Piece("count", _ValidCount(column=self.column, facts=self.facts), self.split[2]),
        )

    @property
    def combination(self) -> str:
        return (
            "variance = Q/D − (S/D)², D = max(noisy count, 1), with S and Q the noisy centred sum and "
            "centred sum of squares"
        )

    def combine(self, pieces: dict[str, np.ndarray]) -> np.ndarray:
        d = np.maximum(np.asarray(pieces["count"], dtype=float), 1.0)
        s = np.asarray(pieces["sum"], dtype=float) / d
        return np.asarray(pieces["squares"], dtype=float) / d - s * s

    def _statistic(self, raw: np.ndarray) -> float:
        if raw.size == 0:
            return 0.0
        with np.errstate(invalid="ignore", over="ignore"):
            return float(raw.var())
