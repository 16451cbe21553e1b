"""Per-person truncation inside the engine: the rule of :func:`dpdash.facts.truncation_order`.

Each id keeps the rows numbered 0 … c − 1 by ``ROW_NUMBER() OVER (PARTITION BY id ORDER BY keys)``, where
each column the query reads gives the keys (missing, frac(p·N(value)), value): N is a number's scrambled
bucket or a string's code read from its MD5, and p the id's unit (see the rule's docstring for why).
A string's MD5 does not involve the id, so DuckDB hashes each distinct value of a dictionary-encoded column
once. The same rule runs in pandas (``Facts.apply``); the differential test checks that they agree.
"""

from __future__ import annotations

from typing import Any

import ibis

from dpdash.engines.columns import count_true, is_numeric, missing, number
from dpdash.errors import ParameterError
from dpdash.facts import BUCKETS, CODE_BASE, CODE_DIGITS, SCRAMBLE, STRING_SCALE, Facts, Truncation

__all__ = ["order_keys", "truncate"]

_EXACT = 2.0**52  # at and past this magnitude every double is an integer


def _unit(value: Any, integral: bool) -> Any:
    """u = y − floor(y), y = value·SCRAMBLE in doubles; 1 when y is infinite (value: a float64 column).
    ``integral``: the column holds integers (or booleans), so y is finite and floor(y) fits a BIGINT."""
    y = value * SCRAMBLE
    if integral:
        return y - y.floor().cast("float64")
    safe = (y.abs() < _EXACT).ifelse(y, 0.0)  # floor() must not overflow a BIGINT
    return y.isinf().ifelse(1.0, safe - safe.floor().cast("float64"))


@ibis.udf.scalar.builtin(name="md5")
def _md5(text: str) -> str:  # type: ignore[empty-body]
    """MD5 as 32 lowercase hex digits: the SQL function ``md5`` of DuckDB, PostgreSQL and Spark alike
    (Ibis' own hexdigest is not compiled for PostgreSQL)."""


def _string_code(col: Any) -> Any:
    """N(s) = Σᵢ ascii(hᵢ)·128ⁱ over the first four hex digits of MD5(s), as a float64."""
    digest = _md5(col)
    code = sum(digest.substr(i, 1).ascii_str().cast("int64") * CODE_BASE**i for i in range(CODE_DIGITS))
    return code.cast("float64")


def _code(col: Any, dtype: Any, gone: Any | None) -> tuple[Any, Any]:
    """(N, unit or None) of a column: a string's code, or a number's floor(u·2³²) + 2³² and its unit u.
    ``gone``: where the value is missing, None if it never is. A missing string's code is NULL and a
    missing number's is that of 0: the caller's key does not use either. MD5 is applied to the column
    itself, not to an expression of it, so that DuckDB hashes a dictionary-encoded column once per
    distinct value."""
    if dtype.is_string():  # NULL for a missing value: its key is set apart by the caller
        return _string_code(col), None
    # y·SCRAMBLE of a signed 64-bit (or any narrower) integer stays below 2⁶³: floor() fits a BIGINT.
    integral = dtype.is_boolean() or dtype.is_signed_integer() or (dtype.is_integer() and dtype.nbytes < 8)
    unit = _unit(number(col) if gone is None else gone.ifelse(0.0, number(col)), integral)
    return (unit * BUCKETS).floor().cast("float64") + BUCKETS, unit


def order_keys(table: Any, columns: tuple[str, ...], id_column: str) -> list[Any]:
    """The sort keys of the rule, column by column (``table`` holds no row without an id)."""
    ident = table[id_column]
    id_code, id_unit = _code(ident, _portable(ident.type(), id_column), None)
    person = id_unit if id_unit is not None else id_code / STRING_SCALE
    keys: list[Any] = []
    for column in columns:
        col = table[column]
        dtype = col.type()
        gone = missing(col)
        if dtype.is_null():  # every value missing: every row ties on this column
            keys.append(gone.ifelse(1, 0))
            continue
        code, _ = _code(col, _portable(dtype, column), gone)
        k = person * code
        # The value as a last key: a missing value's flag already sorts it apart, and every missing string
        # is NULL (no CASE around a string column, which would take DuckDB off its dictionary); a missing
        # number may be NULL or NaN, which sort differently, so it reads 0.
        value = col if dtype.is_string() else gone.ifelse(0.0, number(col))
        keys.extend([gone.ifelse(1, 0), gone.ifelse(0.0, k - k.floor().cast("float64")), value])
    return keys


def _portable(dtype: Any, column: str) -> Any:
    if is_numeric(dtype) or dtype.is_string():
        return dtype
    raise ParameterError(
        f"per-person truncation orders rows by the id and the columns a query reads; column {column!r} has "
        f"type {dtype}, which has no portable order (use a number or a string column)"
    )


def truncate(source: Any, facts: Facts, columns: tuple[str, ...]) -> tuple[Any, Truncation]:
    """The table cut to c rows per id (rows without an id dropped), and what that did. The report
    needs one GROUP BY id; the ranking window runs only when someone has more than c rows."""
    table = source.table
    if facts.id_column is None:
        n = source.row_count()
        return table, Truncation(n, n, 0, 0, None, None)
    if facts.id_column not in table.columns:
        names = list(table.columns)
        shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
        raise ParameterError(f"id_column {facts.id_column!r} is not a column of the table (columns: {shown})")
    ident = table[facts.id_column]
    c = facts.rows_per_person
    # The report needs only each id's number of rows: a GROUP BY id, no sort (NULL ids, and NaN ids, fall
    # in a group of their own and are told apart after grouping).
    per_id = table.group_by(facts.id_column).aggregate(__dpdash_n=table.count())
    n, gone = per_id["__dpdash_n"], missing(per_id[facts.id_column])
    counts = per_id.aggregate(
        rows_in=n.sum(),
        missing=n.sum(where=gone),
        kept=ibis.least(n, c).sum(where=~gone),
        people=count_true(~gone),
        truncated=count_true(~gone & (n > c)),
    )
    row = source.execute(counts).iloc[0]
    rows_in, missing_id, kept = _int(row["rows_in"]), _int(row["missing"]), _int(row["kept"])
    report = Truncation(
        rows_in=rows_in,
        rows_kept=kept,
        rows_truncated=rows_in - missing_id - kept,
        rows_missing_id=missing_id,
        people=_int(row["people"]),
        people_truncated=_int(row["truncated"]),
    )
    if report.people_truncated == 0:  # nobody has more than c rows: no ranking needed
        return table.filter(~missing(ident)), report
    columns = tuple(col for col in dict.fromkeys(columns) if col != facts.id_column)
    base = table.filter(~missing(ident)).select(facts.id_column, *columns)  # only what the query reads
    keys = order_keys(base, columns, facts.id_column)
    person = base[facts.id_column]
    window = ibis.row_number().over(group_by=person, order_by=keys or None)
    ranked = base.mutate(__dpdash_rank=window)
    kept_table = ranked.filter(ranked["__dpdash_rank"] < c).drop("__dpdash_rank")
    return kept_table, report


def _int(value: Any) -> int:
    """An aggregate that may be NULL (a sum over no rows) as an int."""
    try:
        return 0 if value is None or value != value else int(value)
    except TypeError:  # pandas.NA
        return 0
