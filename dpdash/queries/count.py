"""Counts of rows, optionally filtered."""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.facts import Facts, Truncation
from dpdash.queries.base import (
    DataReport,
    Evaluation,
    NumericQuery,
    Sensitivities,
    as_facts,
    column_name,
    count_sensitivities,
    row_weights,
)

__all__ = ["OPERATORS", "Count", "CountPeople", "Where", "people_evaluation"]

#: The comparisons a ``Where`` filter may use (the engines compile the same table).
COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
#: The comparison operators a filter may use.
OPERATORS = (*COMPARISONS, "in", "not in")


@dataclass(frozen=True, slots=True)
class Where:
    """One filter condition ``column op value``; a row whose ``column`` is missing never matches.

    ``op`` is one of ``==, !=, <, <=, >, >=, in, not in``; ``value`` is a string or a number, or a
    list of them for ``in``/``not in``. A filter is public (part of the query), not data.

    >>> Where("age", ">=", 65)
    Where(column='age', op='>=', value=65)
    """

    column: str
    op: str
    value: Any

    def __post_init__(self) -> None:
        column_name(self.column, "where column")
        if self.op not in OPERATORS:
            raise ParameterError(f"where op must be one of {OPERATORS}, got op={self.op!r}")
        if self.op in ("in", "not in"):
            if isinstance(self.value, str) or not hasattr(self.value, "__iter__"):
                raise ParameterTypeError(
                    f"where value for {self.op!r} must be a list of values, got value={self.value!r}"
                )
            object.__setattr__(self, "value", tuple(_scalar(v) for v in self.value))
        else:
            object.__setattr__(self, "value", _scalar(self.value))

    def mask(self, df: pd.DataFrame) -> np.ndarray:
        series = df[self.column]
        present = series.notna().to_numpy()
        if self.op == "in":
            match = series.isin(list(self.value)).to_numpy()
        elif self.op == "not in":
            match = ~series.isin(list(self.value)).to_numpy()
        else:
            try:
                match = np.asarray(COMPARISONS[self.op](series, self.value), dtype=bool)
            except TypeError:
                raise ParameterError(
                    f"where {self.column!r} {self.op} {self.value!r}: cannot compare column "
                    f"{self.column!r} of dtype {series.dtype} with {self.value!r}"
                ) from None
        return present & match

    def describe(self) -> str:
        return f"{self.column} {self.op} {self.value!r}"

    def to_dict(self) -> dict[str, Any]:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"column": self.column, "op": self.op, "value": value}


@dataclass(frozen=True, slots=True, kw_only=True)
class Count(NumericQuery):
    """The number of rows (after truncation), optionally only those matching every ``where`` condition.

    Sensitivity (every norm): c under add/remove; under substitute c with a filter (each of a
    person's c rows may start or stop matching) and 0 without one (the number of rows is public
    under substitute, so there is nothing to protect: a release refuses it).

    Rows whose filter column is missing do not match; they are counted in the report.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [70, 30, None, 81]})
    >>> q = Count(where=[Where("age", ">=", 65)])
    >>> int(q.true_answer(df)[0]), q.l1_sensitivity
    (2, 1)
    >>> Count(facts=Facts(neighbours="substitute")).l1_sensitivity
    0
    """

    kind: ClassVar[str] = "count"
    weighable: ClassVar[bool] = True
    integer_valued: ClassVar[bool] = True

    where: tuple[Where, ...] = ()
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", as_facts(self.facts))
        if isinstance(self.where, Where | dict):
            conditions: Any = (self.where,)
        else:
            conditions = self.where
        items = []
        for condition in conditions:
            if isinstance(condition, dict):
                condition = Where(**condition)
            if not isinstance(condition, Where):
                raise ParameterTypeError(f"where must hold Where conditions, got {condition!r}")
            items.append(condition)
        object.__setattr__(self, "where", tuple(items))

    @property
    def name(self) -> str:
        if not self.where:
            return "count of rows"
        return "count of rows where " + " and ".join(w.describe() for w in self.where)

    def required_columns(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(w.column for w in self.where))

    @property
    def labels(self) -> tuple[str, ...]:
        return ("count",)

    @property
    def sensitivities(self) -> Sensitivities:
        return count_sensitivities(self.facts, 1, spread=1 if self.where else 0)

    @property
    def whole_when_weighted(self) -> bool:
        return not self.where  # Σ min(n, c) over the people

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        match = np.ones(len(df), dtype=bool)
        missing = np.zeros(len(df), dtype=bool)
        for condition in self.where:
            match &= condition.mask(df)
            missing |= df[condition.column].isna().to_numpy()
        count = int(match.sum())
        report = DataReport(
            rows=truncation.rows_in,
            rows_used=count,
            truncation=truncation,
            missing=int(missing.sum()),
            notes=("rows with a missing value in a filter column never match",) if self.where else (),
        )
        weights = row_weights(df)
        if weights is not None and self.where:  # without a filter Σ w = Σ min(n, c), a whole number
            return Evaluation(np.array([float(weights[match].sum())]), report)
        if weights is not None:
            return Evaluation(np.array([truncation.rows_kept], dtype=np.int64), report)
        return Evaluation(np.array([count], dtype=np.int64), report)


@dataclass(frozen=True, slots=True, kw_only=True)
class CountPeople(NumericQuery):
    """The number of distinct people: the ids present in the table (rows without an id are not a person).

    Sensitivity 1 in every norm under add/remove (a person adds one id, whatever their rows), 0 under
    substitute (the number of people is then public: a release refuses it). It needs the id column, and
    it does not depend on c (truncation keeps at least one row of each person). PipelineDP's privacy-id
    count and Tumult's count of distinct ids.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"pid": [1, 1, 2, None, 3, 3]})
    >>> q = CountPeople(facts=Facts(rows_per_person=2, id_column="pid"))
    >>> int(q.true_answer(df)[0]), q.l1_sensitivity
    (3, 1)
    """

    kind: ClassVar[str] = "count_people"
    weighable: ClassVar[bool] = True
    integer_valued: ClassVar[bool] = True

    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", as_facts(self.facts))
        if self.facts.id_column is None:
            raise ParameterError(
                "a count of people needs the person id column (declare it in the facts); without one, "
                "count rows with Count"
            )

    @property
    def name(self) -> str:
        return "count of people"

    def required_columns(self) -> tuple[str, ...]:
        return ()

    @property
    def labels(self) -> tuple[str, ...]:
        return ("people",)

    @property
    def sensitivities(self) -> Sensitivities:
        one = 0 if self.facts.substitute else 1
        return Sensitivities(one, one, one, one)

    @property
    def whole_when_weighted(self) -> bool:
        return True

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        return people_evaluation(truncation)


def people_evaluation(truncation: Truncation) -> Evaluation:
    """A count of people from what truncation found: the distinct ids (rows without one not counted)."""
    people = int(truncation.people or 0)
    report = DataReport(
        rows=truncation.rows_in,
        rows_used=truncation.rows_in - truncation.rows_missing_id,
        truncation=truncation,
        notes=("rows without an id are not a person: not counted",) if truncation.rows_missing_id else (),
    )
    return Evaluation(np.array([people], dtype=np.int64), report)


def _scalar(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | str | numbers.Real):
        return value
    raise ParameterTypeError(f"where value must be a string or a number, got value={value!r}")
