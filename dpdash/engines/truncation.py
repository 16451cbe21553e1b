"""Per-person truncation inside the engine: the rule of :mod:`dpdash.truncation_keys`, in SQL.

Each id keeps the rows numbered 0 … c − 1 by ``ROW_NUMBER() OVER (PARTITION BY id ORDER BY K, ties, j)``:
j is the row's number among the person's rows equal on the columns the query reads (a first window,
``ROW_NUMBER() OVER (PARTITION BY id, v₁ … v_k)``: equal rows are interchangeable, so which gets which j
does not matter), and K the first 12 hex digits of the MD5 of the row's text (the key, the id, each
value and j). A string's own MD5 is applied to the column itself, so DuckDB hashes each distinct value of
a dictionary-encoded column once. Every value enters the row's text once, so the SQL does not grow when an
engine inlines one projection into the next. The same rule runs in pandas (``Facts.apply``); the
differential tests check that they agree row for row.
"""

from __future__ import annotations

from typing import Any

import ibis

from dpdash.engines.cells import KEY, STATUS, with_cells
from dpdash.engines.columns import count_true, is_numeric, missing, number
from dpdash.errors import ParameterError
from dpdash.facts import WEIGHT, Facts, Truncation
from dpdash.group_truncation import GROUP_KEY
from dpdash.queries.histogram import Grouping
from dpdash.truncation_keys import KEY as ROW_KEY
from dpdash.truncation_keys import KEY_DIGITS, LARGE

__all__ = ["order_keys", "truncate"]


@ibis.udf.scalar.builtin(name="md5")
def _md5(text: str) -> str:  # type: ignore[empty-body]
    """MD5 as 32 lowercase hex digits: the SQL function ``md5`` of DuckDB, PostgreSQL and Spark alike
    (Ibis' own hexdigest is not compiled for PostgreSQL)."""


def _text(col: Any, dtype: Any, gone: Any | None) -> Any:
    """e(v) of :mod:`dpdash.truncation_keys`: ``N`` where ``gone``; ``S`` and the MD5 of a string (of
    the column itself, with no CASE around it); ``I`` and an integer's digits; ``F`` and a double's
    integer part and two 31-bit pieces of its fraction (``FL`` past 2⁶²)."""
    if dtype.is_null():  # every value missing
        return ibis.literal("N")
    if dtype.is_string():
        return (ibis.literal("S") + _md5(col)).fill_null("N")  # the MD5 of NULL is NULL
    if _integral(dtype):
        whole = (col.cast("int32") if dtype.is_boolean() else col).cast("int64")
        text = ibis.literal("I") + whole.cast("string")
    else:
        value = number(col)
        small = (value.abs() < LARGE).fill_null(False)
        safe = small.ifelse(value, 0.0)
        whole = safe.floor().cast("int64")
        frac = (safe - whole.cast("float64")) * 2.0**31
        high = frac.floor().cast("int64")
        low = ((frac - high.cast("float64")) * 2.0**31).floor().cast("int64")
        split = (
            ibis.literal("F") + whole.cast("string") + "," + high.cast("string") + "," + low.cast("string")
        )
        text = small.ifelse(split, ibis.literal("FL"))
    return text if gone is None else gone.ifelse(ibis.literal("N"), text)


def _integral(dtype: Any) -> bool:
    """Read exactly as a 64-bit integer: booleans, signed integers, unsigned ones narrower than 64 bits."""
    return dtype.is_boolean() or dtype.is_signed_integer() or (dtype.is_integer() and dtype.nbytes < 8)


def _ties(table: Any, columns: tuple[str, ...]) -> list[Any]:
    """The tie-breaks of the columns: each one's missing flag, then its value (a missing number reads 0;
    every missing string is NULL, with no CASE around a string column)."""
    ties: list[Any] = []
    for column in columns:
        col = table[column]
        gone = missing(col)
        ties.append(gone.ifelse(1, 0))
        if not col.type().is_null():  # a column with no type: every value missing, the flag says all
            ties.append(col if col.type().is_string() else gone.ifelse(0.0, number(col)))
    return ties


def order_keys(table: Any, columns: tuple[str, ...], id_column: str) -> tuple[Any, list[Any]]:
    """The table with the occurrence j of each row among its person's rows equal on ``columns`` (a
    column ``__dpdash_j``), and the sort keys of the rule on it: K, the ties, then j (``table`` holds
    no row without an id)."""
    ident = table[id_column]
    for name in (id_column, *columns):
        if not table[name].type().is_null():
            _portable(table[name].type(), name)
    ties = _ties(table, columns)
    if ties:
        # Spark needs an ORDER BY in a ranking window; ordering by the id, which is the same within each
        # partition, orders nothing.
        j = ibis.row_number().over(group_by=[ident, *ties], order_by=ident)
        table = table.mutate(__dpdash_j=j.cast("int64"))
    else:
        table = table.mutate(__dpdash_j=ibis.literal(0, type="int64"))
    j = table["__dpdash_j"]
    text: Any = ibis.literal(ROW_KEY) + "|" + _text(table[id_column], table[id_column].type(), None)
    for column in columns:
        col = table[column]
        text = text + "|" + _text(col, col.type(), missing(col))
    key = _md5(text + "|" + j.cast("string")).substr(0, KEY_DIGITS)
    return table, [key, *_ties(table, columns), j]


def _portable(dtype: Any, column: str) -> Any:
    if is_numeric(dtype) or dtype.is_string():
        return dtype
    raise ParameterError(
        f"per-person truncation orders rows by the id and the columns a query reads; column {column!r} has "
        f"type {dtype}, which has no portable order (use a number or a string column)"
    )


def truncate(
    source: Any, facts: Facts, columns: tuple[str, ...], grouping: Grouping | None = None
) -> tuple[Any, Truncation]:
    """The table cut to c rows per id (rows without an id dropped), or to k cells per id and m rows in
    each when ``grouping`` declares per-group bounds, and what that did. The report needs one GROUP BY
    id; the ranking window runs only when someone has more than c rows."""
    table = source.table
    if facts.id_column is None:
        if grouping is not None:
            raise ParameterError(
                "per-group bounds are enforced by truncation on a person id column: declare the id column"
            )
        n = source.row_count()
        return table, Truncation(n, n, 0, 0, None, None)
    if facts.id_column not in table.columns:
        names = list(table.columns)
        shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
        raise ParameterError(f"id_column {facts.id_column!r} is not a column of the table (columns: {shown})")
    if grouping is not None:
        return _truncate_groups(source, facts, columns, grouping)
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
    report = _report(row["rows_in"], row["missing"], row["kept"], row["people"], row["truncated"])
    if facts.weighted:  # every row with an id, weighted min(1, c/n) (Facts.apply's rule)
        kept = table.filter(~missing(ident))
        n_rows = kept[facts.id_column].count().over(group_by=kept[facts.id_column])
        weight = ibis.least(ibis.literal(1.0), ibis.literal(float(c)) / n_rows.cast("float64"))
        return kept.mutate(**{WEIGHT: weight}), report
    if report.people_truncated == 0:  # nobody has more than c rows: no ranking needed
        return table.filter(~missing(ident)), report
    columns = tuple(col for col in dict.fromkeys(columns) if col != facts.id_column)
    base = table.filter(~missing(ident)).select(facts.id_column, *columns)  # only what the query reads
    numbered, keys = order_keys(base, columns, facts.id_column)
    window = ibis.row_number().over(group_by=numbered[facts.id_column], order_by=keys)
    ranked = numbered.mutate(__dpdash_rank=window)
    kept_table = ranked.filter(ranked["__dpdash_rank"] < c).drop("__dpdash_rank", "__dpdash_j")
    return kept_table, report


def _truncate_groups(
    source: Any, facts: Facts, columns: tuple[str, ...], grouping: Grouping
) -> tuple[Any, Truncation]:
    """Per-group truncation (``dpdash.group_truncation``): each id keeps the k of its cells with the
    smallest (G, g), G the first 12 hex digits of MD5("dpdash-groups-1|e(id)|g"), and in each the m rows
    first by the row keys of ``order_keys``; rows in no cell are kept (they count in no cell)."""
    table, id_column = source.table, facts.id_column
    assert id_column is not None
    k, m = grouping.bounds.max_groups, grouping.bounds.max_rows_per_group
    columns = tuple(col for col in dict.fromkeys(columns) if col != id_column)
    base = table.filter(~missing(table[id_column])).select(id_column, *columns)
    cells = with_cells(base, grouping.column, grouping.categories, grouping.bins, tag="_g")
    status, key = cells[STATUS + "_g"], cells[KEY + "_g"]
    if grouping.bins is not None:  # a bin's index
        inside = ibis.literal("I") + key.cast("string")
    else:  # a category's value, as the row key reads it
        inside = _text(key, key.type(), None)
    in_cell = (status == 0) | ((status == 1) & (grouping.outside == "other"))
    g = in_cell.ifelse((status == 1).ifelse(ibis.literal("O"), inside), ibis.null("string"))
    cells = cells.mutate(__dpdash_g=g, __dpdash_in=in_cell).drop(STATUS + "_g", KEY + "_g")
    numbered, keys = order_keys(cells, columns, id_column)
    ident, g = numbered[id_column], numbered["__dpdash_g"]
    text = ibis.literal(GROUP_KEY) + "|" + _text(ident, ident.type(), None) + "|" + g
    group_key = _md5(text).substr(0, KEY_DIGITS)
    # Rows in no cell sort after every cell, so that they never take a cell's rank (Spark puts NULLs first).
    out_last = numbered["__dpdash_in"].ifelse(0, 1)
    group_rank = ibis.dense_rank().over(group_by=ident, order_by=[out_last, group_key, g])
    row_rank = ibis.row_number().over(group_by=[ident, g], order_by=keys)
    ranked = numbered.mutate(__dpdash_gr=group_rank, __dpdash_rr=row_rank)
    keep = ~ranked["__dpdash_in"] | ((ranked["__dpdash_gr"] < k) & (ranked["__dpdash_rr"] < m))
    ranked = ranked.mutate(__dpdash_keep=keep)
    per_id = table.group_by(id_column).aggregate(__dpdash_n=table.count())
    gone = missing(per_id[id_column])
    head = source.execute(
        per_id.aggregate(
            rows_in=per_id["__dpdash_n"].sum(),
            missing=per_id["__dpdash_n"].sum(where=gone),
            people=count_true(~gone),
        )
    ).iloc[0]
    kept_rows = ranked["__dpdash_keep"]
    tail = source.execute(
        ranked.aggregate(kept=count_true(kept_rows), truncated=ranked[id_column].nunique(where=~kept_rows))
    ).iloc[0]
    report = _report(head["rows_in"], head["missing"], tail["kept"], head["people"], tail["truncated"])
    extra = ("__dpdash_g", "__dpdash_in", "__dpdash_j", "__dpdash_gr", "__dpdash_rr", "__dpdash_keep")
    return ranked.filter(ranked["__dpdash_keep"]).drop(*extra), report


def _report(rows_in: Any, missing_id: Any, kept: Any, people: Any, truncated: Any) -> Truncation:
    """The truncation report from the engine's aggregates (any may be NULL: a sum over no rows)."""
    rows_in, missing_id, kept = _int(rows_in), _int(missing_id), _int(kept)
    return Truncation(
        rows_in=rows_in,
        rows_kept=kept,
        rows_truncated=rows_in - missing_id - kept,
        rows_missing_id=missing_id,
        people=_int(people),
        people_truncated=_int(truncated),
    )


def _int(value: Any) -> int:
    """An aggregate that may be NULL (a sum over no rows) as an int."""
    try:
        return 0 if value is None or value != value else int(value)
    except TypeError:  # pandas.NA
        return 0
