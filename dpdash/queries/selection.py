"""Selection queries: quantiles (and the median) over public candidates, and the most common category.

Both are answered by choosing one public candidate with a selection mechanism
(``dpdash.mechanisms.ExponentialMechanism``, ``PermuteAndFlip``, ``ReportNoisyMax``), which reads the
exact integer utilities and their sensitivity Δu defined here.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.facts import MAX_GROUPS, Bounds, Facts, Truncation, categories_tuple
from dpdash.queries.base import (
    DataReport,
    Evaluation,
    SelectionQuery,
    as_facts,
    cell_count_report,
    column_name,
    numeric_values,
    require_numeric,
)
from dpdash.queries.histogram import cell_codes

__all__ = ["Mode", "Quantile"]

#: Quantile levels are rationals a/b with b at most this (six decimals).
MAX_QUANTILE_DENOMINATOR = 10**6


def _level(q: object) -> Fraction:
    value = check.finite(q, "quantile")
    if not 0.0 < value < 1.0:
        raise ParameterError(f"quantiles must be numbers strictly between 0 and 1, got q={q!r}")
    exact = Fraction(repr(value))  # the decimal the user wrote: 0.3 → 3/10
    if exact.denominator > MAX_QUANTILE_DENOMINATOR:
        raise ParameterError(
            f"quantiles must have at most 6 decimals (so that utilities are exact integers), got q={q!r}"
        )
    return exact


@dataclass(frozen=True, slots=True, kw_only=True)
class Quantile(SelectionQuery):
    """Quantiles of a numeric column, each chosen among public candidates (Smith 2011, with the
    exponential mechanism; any selection mechanism of dpdash applies).

    For the level q = a/b (at most six decimals) and candidate r, with L_r = #{x < r} and
    G_r = #{x > r} over the non-missing values, the utility is

        u(r) = −|(b − a)·L_r − a·G_r|   (in units of 1/b row; u/b = −|(1 − q)·L_r − q·G_r|),

    which is 0 at an exact q-quantile and counts, in rows, how far r's rank is from q·n; values equal
    to r count on neither side, so tied data (ages, scores) still have a clear best candidate.
    Adding a row moves (1 − q)L − qG by +(1 − q), −q or 0, and substituting one by at most 1, so

        Δu = c·max(a, b − a) under add/remove, Δu = c·b under substitute

    (c rows per person; the median has Δu = c/2 rows under add/remove). Values outside the candidate
    range keep their rank; the selection can then do no better than the nearest end (the report says
    how many there were). Not monotone: utilities move both ways between neighbours. ε is split
    equally over several quantiles (basic composition).

    Args:
        column: a numeric column.
        candidates: the public candidates, strictly increasing, 2 to 10 000 of them
            (``Quantile.on_grid`` builds an evenly spaced grid over public bounds).
        quantiles: a level q in (0, 1), or several.

    >>> import pandas as pd
    >>> q = Quantile.on_grid(column="age", bounds=(0, 100), size=11)
    >>> q.candidates[:3], q.utility_sensitivities
    ((0.0, 10.0, 20.0), (1,))
    >>> df = pd.DataFrame({"age": [12, 35, 38, 41, 90]})
    >>> q.utilities(df)[0].tolist()
    [-5, -5, -3, -3, -1, -3, -3, -3, -3, -4, -5]
    >>> q.true_answer(df).tolist()
    [40.0]
    """

    kind: ClassVar[str] = "quantile"

    column: str
    candidates: tuple[float, ...]
    quantiles: tuple[float, ...] = (0.5,)
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        column_name(self.column, "column")
        object.__setattr__(self, "facts", as_facts(self.facts))
        levels = self.quantiles if isinstance(self.quantiles, tuple | list) else (self.quantiles,)
        if not levels:
            raise ParameterError(f"quantiles must hold at least one level, got quantiles={self.quantiles!r}")
        for q in levels:
            _level(q)
        object.__setattr__(self, "quantiles", tuple(float(q) for q in levels))
        if isinstance(self.candidates, str) or not hasattr(self.candidates, "__iter__"):
            raise ParameterTypeError(
                f"candidates for {self.column!r} must be a list of numbers, "
                f"got candidates={self.candidates!r}"
            )
        candidates = tuple(check.finite(c, "candidate") for c in self.candidates)
        if not 2 <= len(candidates) <= MAX_GROUPS:
            raise ParameterError(
                f"candidates for {self.column!r} must number between 2 and {MAX_GROUPS}, "
                f"got {len(candidates)}"
            )
        if any(b <= a for a, b in itertools.pairwise(candidates)):
            raise ParameterError(f"candidates for {self.column!r} must be strictly increasing")
        object.__setattr__(self, "candidates", candidates)

    @classmethod
    def on_grid(
        cls,
        *,
        column: str,
        bounds: Bounds | tuple[float, float],
        size: int = 1001,
        quantiles: float | tuple[float, ...] = 0.5,
        facts: Facts | None = None,
    ) -> Quantile:
        """Quantiles over ``size`` evenly spaced candidates from L to U (public bounds)."""
        b = Bounds.of(bounds, column)
        n = check.positive_int(size, "size")
        grid = tuple(float(x) for x in np.linspace(b.lower, b.upper, n))
        levels = quantiles if isinstance(quantiles, tuple | list) else (quantiles,)
        return cls(column=column, candidates=grid, quantiles=tuple(levels), facts=facts or Facts())

    @classmethod
    def median(cls, *, column: str, candidates: tuple[float, ...], facts: Facts | None = None) -> Quantile:
        """The median (q = 1/2)."""
        return cls(column=column, candidates=tuple(candidates), quantiles=(0.5,), facts=facts or Facts())

    @property
    def name(self) -> str:
        levels = ", ".join(f"{q:g}" for q in self.quantiles)
        return f"quantile {levels} of {self.column}"

    @property
    def selections(self) -> tuple[str, ...]:
        return tuple(f"q={q:g}" for q in self.quantiles)

    @property
    def monotone(self) -> bool:
        return False

    @property
    def utility_unit(self) -> str:
        return "1/b of a row, for the level q = a/b"

    @property
    def utility_per_row(self) -> tuple[int, ...]:
        """b for each level q = a/b: the utility counts rows of rank in units of 1/b row."""
        return tuple(_level(q).denominator for q in self.quantiles)

    def required_columns(self) -> tuple[str, ...]:
        return (self.column,)

    def _check_types(self, df: pd.DataFrame) -> None:
        require_numeric(df, self.column, self)

    @property
    def utility_sensitivities(self) -> tuple[int, ...]:
        c = self.facts.rows_per_person
        out = []
        for q in self.quantiles:
            level = _level(q)
            a, b = level.numerator, level.denominator
            out.append(c * b if self.facts.substitute else c * max(a, b - a))
        return tuple(out)

    def scores(self, below: np.ndarray, above: np.ndarray) -> tuple[list[np.ndarray], list[float]]:
        """Each quantile's utilities u_r = −|(b − a)·L_r − a·G_r| (q = a/b; L_r, G_r: the rows below and
        above candidate r) and its best candidate. pandas and the engines count L and G; this scores them."""
        grid = np.asarray(self.candidates)
        utilities, best = [], []
        for q in self.quantiles:
            level = _level(q)
            a, b = level.numerator, level.denominator
            u = -np.abs((b - a) * below - a * above)
            utilities.append(u)
            best.append(float(grid[int(np.argmax(u))]))
        return utilities, best

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        values, missing = numeric_values(df[self.column])
        x = np.sort(values[~missing])
        grid = np.asarray(self.candidates)
        below = np.searchsorted(x, grid, side="left").astype(np.int64)
        above = (x.size - np.searchsorted(x, grid, side="right")).astype(np.int64)
        utilities, best = self.scores(below, above)
        bias = [
            choice - (float(np.quantile(x, q, method="inverted_cdf")) if x.size else math.nan)
            for q, choice in zip(self.quantiles, best, strict=True)
        ]
        outside = int(((x < grid[0]) | (x > grid[-1])).sum())
        report = DataReport(
            rows=truncation.rows_in,
            rows_used=int(x.size),
            truncation=truncation,
            missing=int(missing.sum()),
            clipping_bias=tuple(bias),
            outside=outside,
            notes=(
                "clipping_bias: best candidate − exact empirical quantile (inverted CDF)",
                "values outside the candidate range keep their rank",
            ),
        )
        return Evaluation(np.array(best), report, utilities=tuple(utilities))

    @property
    def candidates_labels(self) -> tuple[str, ...]:
        return tuple(f"{c:g}" for c in self.candidates)


@dataclass(frozen=True, slots=True, kw_only=True)
class Mode(SelectionQuery):
    """The most common declared category of a column (e.g. the most common diagnosis).

    Utilities are the category counts (missing values and values outside the categories are dropped
    and counted). Δu = c under both relations; monotone under add/remove (adding a person only raises
    counts), not under substitute (a row moves from one count to another).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"diagnosis": ["flu", "cold", "flu", None, "covid"]})
    >>> q = Mode(column="diagnosis", categories=["flu", "cold", "covid"])
    >>> q.utilities(df)[0].tolist(), q.true_answer(df).tolist(), q.monotone
    ([2, 1, 1], ['flu'], True)
    """

    kind: ClassVar[str] = "mode"

    column: str
    categories: tuple[Any, ...]
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        column_name(self.column, "column")
        object.__setattr__(self, "facts", as_facts(self.facts))
        object.__setattr__(
            self, "categories", categories_tuple(self.categories, f"categories of {self.column!r}")
        )
        if len(self.categories) < 2:
            raise ParameterError(f"categories of {self.column!r} must hold at least 2 candidates for a mode")

    @property
    def name(self) -> str:
        return f"most common {self.column}"

    @property
    def candidates(self) -> tuple[Any, ...]:
        return self.categories

    @property
    def selections(self) -> tuple[str, ...]:
        return ("mode",)

    @property
    def monotone(self) -> bool:
        return not self.facts.substitute

    @property
    def utility_unit(self) -> str:
        return "rows"

    @property
    def utility_sensitivities(self) -> tuple[int, ...]:
        return (self.facts.rows_per_person,)

    def required_columns(self) -> tuple[str, ...]:
        return (self.column,)

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        cells = cell_codes(df[self.column], categories=self.categories, outside="drop")
        counts = np.bincount(cells.codes[cells.codes >= 0], minlength=len(self.categories)).astype(np.int64)
        report = cell_count_report(
            truncation, counts, self.categories, missing=cells.missing, outside=cells.outside, policy="drop"
        )
        best = np.array([self.categories[int(np.argmax(counts))]], dtype=object)
        return Evaluation(best, report, utilities=(counts,))
