"""Means and variances of a bounded column: each released as pieces (a count of valid values and centred
sums of values or squares) that are combined after the noise, with the ε shared among the pieces."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.facts import Facts, Truncation
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
    row_weights,
)
from dpdash.queries.sums import (
    BoundedColumn,
    Clamped,
    _bias,
    _CentredSquares,
    _CentredSum,
    clamp_column,
    clipping_shift,
    column_report,
)

__all__ = ["Mean", "Parts", "SplitComposite", "Variance", "centred_mean"]

#: The pieces of a composite query: each one's name and spec type.
Parts = tuple[tuple[str, type[NumericQuery]], ...]


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


def centred_mean(centre: float, pieces: dict[str, np.ndarray]) -> np.ndarray:
    """m + S/max(N, 1) from the (noisy or true) centred sums S and counts N, coordinate by coordinate."""
    s = np.asarray(pieces["sum"], dtype=float)
    n = np.maximum(np.asarray(pieces["count"], dtype=float), 1.0)
    return centre + s / n


class SplitComposite(CompositeQuery):
    """A composite query whose pieces (``parts``: each one's name and spec type) are built on its own
    fields and share ε (and δ) by ``split``: the first piece's share when there are two pieces (the
    second gets the rest), else one share per piece."""

    __slots__ = ()

    parts: ClassVar[Parts]
    split: Any

    def _normalise_split(self) -> None:
        shares = _shares(self.split, len(self.parts), "split")
        object.__setattr__(self, "split", shares[0] if len(shares) == 2 else shares)

    @property
    def shares(self) -> tuple[float, ...]:
        """Each piece's share of the budget."""
        return (self.split, 1.0 - self.split) if len(self.parts) == 2 else self.split

    def pieces(self) -> tuple[Piece, ...]:
        shares = zip(self.parts, self.shares, strict=True)
        return tuple(Piece(name, self._on_own_fields(spec), share) for (name, spec), share in shares)

    def _on_own_fields(self, spec: type[NumericQuery]) -> NumericQuery:
        """A piece of type ``spec`` on this query's values of the fields it has (column, bounds, groups,
        facts)."""
        return spec(**{f.name: getattr(self, f.name) for f in fields(spec) if f.init})


class _CompositeColumn(BoundedColumn, SplitComposite):
    """A statistic of one clamped column from noisy pieces; its bias is that of the statistic."""

    __slots__ = ()

    def __post_init__(self) -> None:
        BoundedColumn.__post_init__(self)
        self._normalise_split()

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        pieces = {p.name: p.query._evaluate(df, truncation).values for p in self.pieces()}
        data = clamp_column(df, self.column, self.bounds)
        value = float(self.combine(pieces)[0])
        report = column_report(truncation, data, self._clipping_bias(data), self.column)
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
    title: ClassVar[str] = "mean"
    parts: ClassVar[Parts] = (("sum", _CentredSum), ("count", _ValidCount))

    split: float = 0.5
    facts: Facts = field(default_factory=Facts)

    @property
    def combination(self) -> str:
        return "mean = (L + U)/2 + noisy centred sum / max(noisy count, 1)"

    def combine(self, pieces: dict[str, np.ndarray]) -> np.ndarray:
        return centred_mean(self.bounds.centre, pieces)

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
    title: ClassVar[str] = "variance"
    parts: ClassVar[Parts] = (("sum", _CentredSum), ("squares", _CentredSquares), ("count", _ValidCount))

    split: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)
    facts: Facts = field(default_factory=Facts)

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
