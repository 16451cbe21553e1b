"""Counts per key of a column whose keys are not public: the keys come from the data, so only those a
key-selection release keeps may be published (``dpdash.mechanisms.key_threshold``).

A person touches at most k keys with at most m rows in each (``group_bounds``, enforced by truncation on
the id column, ``dpdash.group_truncation``): with m = 1 each key's count is its number of distinct people.
A table with one row per person and no id column is the case k = m = 1 (no truncation needed).
Missing values are no key (dropped and counted). Add/remove neighbours only: under substitution a
person's keys are not theirs alone to add or remove.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpdash.errors import ParameterError
from dpdash.facts import Facts, GroupBounds, Truncation
from dpdash.group_truncation import truncate_groups
from dpdash.queries.base import DataReport, Evaluation, Query, as_facts, column_name
from dpdash.queries.histogram import Grouping
from dpdash.truncation_keys import column_text

__all__ = ["KeyCounts", "key_evaluation", "key_label", "sorted_keys"]


def sorted_keys(keys: Any) -> list[Any]:
    """The keys in their natural order (by their text when they do not compare): a fixed order that
    tells nothing but which keys there are."""
    plain = [k.item() if isinstance(k, np.generic) else k for k in keys]
    try:
        return sorted(plain)
    except TypeError:
        return sorted(plain, key=lambda k: (type(k).__name__, str(k)))


def key_label(key: Any) -> str:
    """A key as a label: its text (integers without a decimal point, as every engine returns them)."""
    if isinstance(key, float) and key.is_integer():
        return str(int(key))
    return str(key)


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyCounts(Query):
    """Rows (or, with m = 1, people) per key of ``column``, for the keys found in the data. NOT PUBLIC
    as it stands: release it with ``release(query, "geometric", ..., delta=...)``, which keeps only the
    keys whose noisy count passes the threshold of :class:`~dpdash.mechanisms.key_threshold.KeyThreshold`.

    Args:
        column: the key column.
        group_bounds: (k, m): a person touches at most k keys with at most m rows each; needs the id
            column. ``None`` only for a table with one row per person and no id column (k = m = 1).
        facts: add/remove neighbours and the unit of privacy.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": [1, 1, 2, 3], "town": ["Oslo", "Oslo", "Bergen", None]})
    >>> q = KeyCounts(column="town", group_bounds=(1, 1), facts=Facts(id_column="id", rows_per_person=2))
    >>> e = q.evaluate(df)
    >>> e.keys, e.values.tolist(), e.report.missing
    (('Bergen', 'Oslo'), [1, 1], 1)
    """

    kind: ClassVar[str] = "key_counts"
    integer_valued: ClassVar[bool] = True

    column: str
    group_bounds: GroupBounds | None = None
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        column_name(self.column, "column")
        object.__setattr__(self, "facts", as_facts(self.facts))
        if self.facts.substitute:
            raise ParameterError(
                f"keys of {self.column!r} that are not public can be selected under add/remove neighbours "
                "only (a person's presence adds their keys); declare neighbours='add_remove', or declare the "
                "column's categories and release a histogram"
            )
        if self.group_bounds is not None:
            object.__setattr__(self, "group_bounds", GroupBounds.of(self.group_bounds))
            if self.facts.id_column is None:
                raise ParameterError(
                    f"per-key bounds on {self.column!r} (at most k keys per person, m rows in each) are "
                    "enforced by truncation on a person id column: declare the id column in the facts"
                )
        elif self.facts.id_column is not None or self.facts.rows_per_person != 1:
            raise ParameterError(
                f"declare how many keys of {self.column!r} a person may have (k) and how many rows in each "
                "(m; 1 counts people): group_bounds=(k, m), on the Data page the k and m columns"
            )

    @property
    def key_bounds(self) -> GroupBounds:
        """(k, m): the declared bounds, or (1, 1) for one row per person."""
        return self.group_bounds if self.group_bounds is not None else GroupBounds(1, 1)

    @property
    def name(self) -> str:
        people = self.key_bounds.max_rows_per_group == 1
        return f"{'people' if people else 'rows'} per {self.column} (keys selected)"

    @property
    def grouping(self) -> Grouping | None:
        """What the engines' per-group truncation needs: every present value is a cell."""
        if self.group_bounds is None:
            return None
        return Grouping(self.column, None, None, "drop", self.group_bounds)

    def required_columns(self) -> tuple[str, ...]:
        return (self.column,)

    def _truncate(self, df: pd.DataFrame) -> tuple[pd.DataFrame, Truncation]:
        if self.group_bounds is None:
            return self.facts.apply(df, self.required_columns())
        text, _, missing = column_text(df[self.column])
        cells = np.where(missing, None, text).astype(object)
        return truncate_groups(df, self.facts, cells, self.required_columns(), self.group_bounds)

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        values = df[self.column]
        counts = values.dropna().value_counts(sort=False)
        return key_evaluation(truncation, counts.index, counts.to_numpy(), int(values.isna().sum()))


def key_evaluation(truncation: Truncation, keys: Any, counts: Any, missing: int) -> Evaluation:
    """The evaluation of key counts from (key, count) pairs in any order, in pandas and every engine."""
    pairs = {
        (k.item() if isinstance(k, np.generic) else k): int(n) for k, n in zip(keys, counts, strict=True)
    }
    order = sorted_keys(pairs)
    values = np.array([pairs[k] for k in order], dtype=np.int64)
    report = DataReport(
        rows=truncation.rows_in, rows_used=int(values.sum()), truncation=truncation, missing=missing
    )
    return Evaluation(values, report, keys=tuple(order))
