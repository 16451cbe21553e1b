"""Column expressions shared by every compiled query: missing values, numbers, filters, cells.

A value is missing when it is NULL or, in a float column, NaN: the same rule as pandas' ``isna``.
"""

from __future__ import annotations

import numbers
from typing import Any

import ibis
import ibis.expr.datatypes as dt

from dpdash.errors import ParameterError
from dpdash.facts import WEIGHT, Truncation
from dpdash.queries.count import COMPARISONS

__all__ = [
    "count_true",
    "held_rows",
    "is_numeric",
    "missing",
    "number",
    "require_columns",
    "row_total",
    "weighted",
    "where_match",
]


def is_numeric(dtype: dt.DataType) -> bool:
    """Numbers and booleans: what pandas' ``is_numeric_dtype`` accepts."""
    return dtype.is_numeric() or dtype.is_boolean()


def missing(col: Any) -> Any:
    """True where the value is missing (NULL, or NaN in a float column); never NULL itself."""
    out = col.isnull()
    if col.type().is_floating():
        out = out | col.isnan().fill_null(False)
    return out


def number(col: Any) -> Any:
    """The column as float64 (booleans as 0/1, through a 32-bit integer: PostgreSQL casts a boolean to
    nothing else)."""
    return (col.cast("int32") if col.type().is_boolean() else col).cast("float64")


def count_true(condition: Any) -> Any:
    """How many rows meet ``condition`` (NULL counts as not met): ``COUNT(cond) FILTER (WHERE cond)``,
    which every engine computes (Spark as a conditional count) and DuckDB counts faster than
    ``SUM(CASE …)`` (a 10⁸-row clamped sum's report: 2.93 s → 2.79 s)."""
    return condition.count(where=condition)


def weighted(table: Any) -> bool:
    """Whether ``table`` carries the row weights of weighted bounding (``Facts.bounding="weight"``)."""
    return WEIGHT in table.columns


def held_rows(table: Any, truncation: Truncation) -> int:
    """The rows ``table`` holds after the unit of privacy was enforced: the c rows per id kept, or under
    weighted bounding every row with an id."""
    if weighted(table):
        return truncation.rows_in - truncation.rows_missing_id
    return truncation.rows_kept


def row_total(table: Any, condition: Any = None) -> Any:
    """The rows meeting ``condition`` (all rows when None): counted, or Σ w under weighted bounding."""
    if weighted(table):
        return table[WEIGHT].sum(where=condition)
    return table.count() if condition is None else count_true(condition)


def require_columns(table: Any, columns: tuple[str, ...], name: str, numeric: tuple[str, ...]) -> None:
    """The same refusals as the pandas path: a column not in the table, a non-numeric column."""
    names = list(table.columns)
    shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
    schema = table.schema()
    for column in columns:
        if column not in schema:
            raise ParameterError(
                f"column {column!r} is not in the table, needed by {name} (columns: {shown})"
            )
    for column in numeric:
        if not is_numeric(schema[column]):
            raise ParameterError(f"column {column!r} must be numeric for {name}, got dtype {schema[column]}")


def comparable(dtype: dt.DataType, value: Any) -> Any:
    """``value`` as a literal the column can be compared with, or ``None`` when it never equals any
    value of the column (a string against numbers, a number against strings)."""
    if isinstance(value, str):
        return value if dtype.is_string() else None
    if not isinstance(value, numbers.Real):
        return None
    if dtype.is_boolean():
        if isinstance(value, bool) or value in (0, 1):
            return bool(value)
        return None
    if dtype.is_numeric():
        return int(value) if isinstance(value, bool) else value
    return None


def where_match(table: Any, where: Any) -> Any:
    """A ``Where`` condition as a boolean expression: false where the column is missing."""
    col = table[where.column]
    dtype = col.type()
    if dtype.is_null():  # every value missing (a column of None): no row matches
        return ibis.literal(False)
    if where.op in ("in", "not in"):
        values = [v for v in (comparable(dtype, x) for x in where.value) if v is not None]
        match = col.isin(values) if values else ibis.literal(False)
        if where.op == "not in":
            match = ~match
    else:
        value = comparable(dtype, where.value)
        if value is None and where.op in ("==", "!="):
            match = ibis.literal(where.op == "!=")
        elif value is None or not (dtype.is_string() or is_numeric(dtype)):
            raise ParameterError(
                f"where {where.column!r} {where.op} {where.value!r}: cannot compare column "
                f"{where.column!r} of dtype {dtype} with {where.value!r}"
            )
        else:
            match = COMPARISONS[where.op](col, value)
    return ~missing(col) & match.fill_null(False)
