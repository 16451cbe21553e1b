"""Per-person truncation inside the engine: the rule of :func:`dpdash.facts.truncation_order`.

Each id keeps the rows numbered 0 … c − 1 by ``ROW_NUMBER() OVER (PARTITION BY id ORDER BY keys)``.
The id's text (its salt) is a string id itself, or for a number the integer floor(u·2³²), u = y − floor(y),
y = CAST(v AS DOUBLE)·0.6180339887498949 (1.0 when y is infinite; 0 when |y| ≥ 2⁵², where y is already
integral). Each column the query reads gives the keys (missing, MD5(salt || '\\x1f' || text), value),
where a string's text is itself and a number's is its bucket as above.

Why this rule is in ``dpdash.facts.truncation_order``'s docstring: no row order (Parquet folders and
parallel scans have none), no engine's own hash (they differ), no formatted float (engines format them
differently), and an MD5 salted with the person's id so that no value is preferred for everyone. The same
rule runs in pandas (``Facts.apply``); the differential test checks that they agree.
"""

from __future__ import annotations

from typing import Any

import ibis

from dpdash.engines.columns import count_true, is_numeric, missing, number
from dpdash.errors import ParameterError
from dpdash.facts import BUCKETS, SCRAMBLE, Facts, Truncation

__all__ = ["order_keys", "truncate"]

_EXACT = 2.0**52  # at and past this magnitude every double is an integer


def _text(col: Any, dtype: Any, gone: Any) -> Any:
    """A column's text in the rule: a string as it is, a number as floor(u·2³²); "" when missing."""
    if dtype.is_string():
        return gone.ifelse("", col)
    y = gone.ifelse(0.0, number(col)) * SCRAMBLE
    safe = (y.abs() < _EXACT).ifelse(y, 0.0)  # floor() must not overflow a BIGINT
    unit = y.isinf().ifelse(1.0, safe - safe.floor().cast("float64"))
    return gone.ifelse("", (unit * BUCKETS).floor().cast("int64").cast("string"))


@ibis.udf.scalar.builtin(name="md5")
def _md5(text: str) -> str:  # type: ignore[empty-body]
    """MD5 as 32 lowercase hex digits: the SQL function ``md5`` of DuckDB, PostgreSQL and Spark alike
    (Ibis' own hexdigest is not compiled for PostgreSQL)."""


def order_keys(table: Any, columns: tuple[str, ...], id_column: str) -> list[Any]:
    """The sort keys of the rule, column by column."""
    ident = table[id_column]
    salt = _text(ident, _portable(ident.type(), id_column), missing(ident))
    keys: list[Any] = []
    for column in columns:
        col = table[column]
        dtype = col.type()
        gone = missing(col)
        if dtype.is_null():  # every value missing: every row ties on this column
            keys.append(gone.ifelse(1, 0))
            continue
        text = _text(col, _portable(dtype, column), gone)
        digest = gone.ifelse("", _md5(salt.concat("\x1f", text)))
        value = gone.ifelse("", col) if dtype.is_string() else gone.ifelse(0.0, number(col))
        keys.extend([gone.ifelse(1, 0), digest, value])
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
    # The report needs only each id's number of rows: a GROUP BY, no sort.
    marked = table.mutate(__dpdash_no_id=missing(ident))
    no_id = marked["__dpdash_no_id"]
    per_id = marked.group_by([facts.id_column, "__dpdash_no_id"]).aggregate(__dpdash_n=marked.count())
    n, gone = per_id["__dpdash_n"], per_id["__dpdash_no_id"]
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
        return marked.filter(~no_id).drop("__dpdash_no_id"), report
    columns = tuple(col for col in dict.fromkeys(columns) if col != facts.id_column)
    base = marked.filter(~no_id)
    keys = order_keys(base, columns, facts.id_column)
    person = base[facts.id_column]
    window = ibis.row_number().over(group_by=person, order_by=keys or None)
    ranked = base.mutate(__dpdash_rank=window)
    kept_table = ranked.filter(ranked["__dpdash_rank"] < c).drop("__dpdash_no_id", "__dpdash_rank")
    return kept_table, report


def _int(value: Any) -> int:
    """An aggregate that may be NULL (a sum over no rows) as an int."""
    try:
        return 0 if value is None or value != value else int(value)
    except TypeError:  # pandas.NA
        return 0
