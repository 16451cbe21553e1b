"""Public facts: what is declared about a table, never read from it.

A differentially private answer is only as private as the facts its sensitivity rests on. dpdash asks
for them explicitly and derives every sensitivity from them (``dpdash.queries``):

- the **neighbour relation** (:class:`Neighbours`): two tables are neighbours when one person's rows are
  added or removed (``"add_remove"``, the default, MATH.md) or when one person's rows are replaced by the
  same number of rows with other values (``"substitute"``: the number of rows, and each person's number
  of rows, stay the same);
- the **unit of privacy** (:class:`Facts`): at most ``c = rows_per_person`` rows belong to one person.
  With an ``id_column`` dpdash *enforces* it by truncation (each id keeps c of its rows chosen by
  :func:`truncation_order`, a fixed function of the values, never of the row order; rows without an id
  are dropped, since they cannot be attributed to anyone); without one, the bound is *trusted* as
  declared, and every release says so;
- per column: clamping :class:`Bounds`, category lists and :class:`Bins` (held by each query spec).

>>> facts = Facts(neighbours="substitute", rows_per_person=3, id_column="patient")
>>> facts.neighbours, facts.enforced
(<Neighbours.SUBSTITUTE: 'substitute'>, True)
>>> facts.describe().startswith("neighbours: substitute one person's rows")
True
>>> Bounds(lower=0, upper=120).clamp([-3.0, 40.0, 200.0]).tolist()
[0.0, 40.0, 120.0]
"""

from __future__ import annotations

import hashlib
import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError

__all__ = [
    "MAX_GROUPS",
    "OUTSIDE_POLICIES",
    "Bins",
    "Bounds",
    "Facts",
    "Neighbours",
    "Truncation",
    "categories_tuple",
    "truncation_order",
]

#: The largest number of groups, cells, categories or candidates a query may have.
MAX_GROUPS = 10_000

#: What happens to values outside the declared categories or bins: counted in an extra "other" cell,
#: or dropped (and counted in the data owner's report).
OUTSIDE_POLICIES = ("other", "drop")


class Neighbours(StrEnum):
    """The neighbour relation: which pairs of tables differential privacy must make indistinguishable."""

    ADD_REMOVE = "add_remove"
    """One person's rows (at most c) are added or removed. The default (MATH.md)."""
    SUBSTITUTE = "substitute"
    """One person's rows (at most c) are replaced by as many rows with other values."""

    @property
    def description(self) -> str:
        if self is Neighbours.ADD_REMOVE:
            return "add or remove one person's rows"
        return "substitute one person's rows (same number of rows)"


@dataclass(frozen=True, slots=True)
class Truncation:
    """What enforcing the unit of privacy did to a table (not private: for the data owner only)."""

    rows_in: int
    rows_kept: int
    rows_truncated: int  # rows beyond the c of their id that truncation keeps
    rows_missing_id: int  # rows whose id is missing, dropped
    people: int | None  # distinct ids (None when no id column is given)
    people_truncated: int | None  # ids that had more than c rows


@dataclass(frozen=True, slots=True, kw_only=True)
class Facts:
    """The neighbour relation and the unit of privacy of a table, declared by the data owner.

    Args:
        neighbours: ``"add_remove"`` (default) or ``"substitute"`` (a :class:`Neighbours`).
        rows_per_person: c, an integer ≥ 1: at most c rows belong to one person.
        id_column: the column that identifies a person. Given, the bound c is enforced by truncation
            (c rows per id kept, chosen by :func:`truncation_order`; rows with a missing id dropped);
            ``None``, it is trusted as declared.
    """

    neighbours: Neighbours = Neighbours.ADD_REMOVE
    rows_per_person: int = 1
    id_column: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.neighbours, str) and not isinstance(self.neighbours, Neighbours):
            choices = tuple(n.value for n in Neighbours)
            object.__setattr__(
                self, "neighbours", Neighbours(check.one_of(self.neighbours, "neighbours", choices))
            )
        elif not isinstance(self.neighbours, Neighbours):
            raise ParameterTypeError(
                f"neighbours must be 'add_remove' or 'substitute', got neighbours={self.neighbours!r}"
            )
        c = self.rows_per_person
        if isinstance(c, bool) or not isinstance(c, numbers.Real):
            raise ParameterTypeError(
                f"rows_per_person must be an integer >= 1 (at most c rows per person), "
                f"got rows_per_person={c!r} ({type(c).__name__})"
            )
        if not (math.isfinite(c) and c >= 1 and c == math.floor(c)):
            raise ParameterError(
                "rows_per_person must be an integer >= 1 (at most c rows per person), "
                f"got rows_per_person={c!r}"
            )
        object.__setattr__(self, "rows_per_person", int(c))
        if self.id_column is not None and not isinstance(self.id_column, str):
            raise ParameterTypeError(
                f"id_column must be a column name (a string) or None, got id_column={self.id_column!r}"
            )

    @property
    def enforced(self) -> bool:
        """Whether the unit of privacy is enforced by truncation (an id column is given)."""
        return self.id_column is not None

    @property
    def substitute(self) -> bool:
        return self.neighbours is Neighbours.SUBSTITUTE

    def describe(self) -> str:
        """One line that says what a release's guarantee protects, and how."""
        c = self.rows_per_person
        rows = "1 row" if c == 1 else f"{c} rows"
        if self.enforced:
            unit = (
                f"at most {rows} per person, enforced by truncation on column {self.id_column!r} "
                f"({rows} per id kept, picked by a hash of the id and the values, not by table order)"
            )
        else:
            unit = f"at most {rows} per person, trusted as declared (no id column, not enforced)"
        return f"neighbours: {self.neighbours.description}; unit of privacy: {unit}"

    def apply(
        self, df: pd.DataFrame, columns: Sequence[str] | None = None
    ) -> tuple[pd.DataFrame, Truncation]:
        """Enforce the unit of privacy: keep c rows of each id, the first in :func:`truncation_order`
        of ``columns`` (default: every column but the id); drop rows without an id. The kept rows stay
        in table order. Without an id column the table is returned unchanged (the bound is trusted).
        """
        n = len(df)
        if self.id_column is None:
            return df, Truncation(n, n, 0, 0, None, None)
        if self.id_column not in df.columns:
            raise ParameterError(
                f"id_column {self.id_column!r} is not a column of the table (columns: {_columns(df)})"
            )
        ids = df[self.id_column]
        codes, _ = pd.factorize(ids, use_na_sentinel=True)  # −1 for a missing id
        missing = codes < 0
        if columns is None:
            columns = [c for c in df.columns if c != self.id_column]
        counts = np.bincount(codes[~missing]) if (~missing).any() else np.zeros(0, dtype=np.int64)
        keep = ~missing
        if (counts > self.rows_per_person).any():  # someone has more than c rows: rank each id's rows
            read = [c for c in dict.fromkeys(columns) if c != self.id_column]
            order = truncation_order(df, read, self.id_column)
            ranked = pd.Series(codes[order])
            rank = np.empty(n, dtype=np.int64)
            rank[order] = ranked.groupby(ranked.to_numpy(), sort=False).cumcount().to_numpy()
            keep &= rank < self.rows_per_person
        kept = df[keep]
        truncated = int((~missing & ~keep).sum())
        report = Truncation(
            rows_in=n,
            rows_kept=int(keep.sum()),
            rows_truncated=truncated,
            rows_missing_id=int(missing.sum()),
            people=int(counts.size),
            people_truncated=int((counts > self.rows_per_person).sum()),
        )
        return kept, report

    def to_dict(self) -> dict[str, Any]:
        return {
            "neighbours": self.neighbours.value,
            "rows_per_person": self.rows_per_person,
            "id_column": self.id_column,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Facts:
        return cls(
            neighbours=data.get("neighbours", "add_remove"),
            rows_per_person=data.get("rows_per_person", 1),
            id_column=data.get("id_column"),
        )


@dataclass(frozen=True, slots=True)
class Bounds:
    """Public clamping bounds [lower, upper] of a numeric column, lower < upper, both finite.

    Values are clamped into the bounds before any sum; the bounds, not the data, fix the sensitivity.
    """

    lower: float
    upper: float

    def __post_init__(self) -> None:
        lower = check.finite(self.lower, "lower bound")
        upper = check.finite(self.upper, "upper bound")
        if not lower < upper:
            raise ParameterError(
                f"bounds must have lower < upper, got bounds=({self.lower!r}, {self.upper!r})"
            )
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    @classmethod
    def of(cls, value: object, column: str) -> Bounds:
        """Bounds from a ``Bounds`` or a pair, with messages that name the column."""
        if isinstance(value, Bounds):
            return value
        if not isinstance(value, tuple | list) or len(value) != 2:
            raise ParameterTypeError(
                f"bounds for column {column!r} must be a pair (lower, upper), got bounds={value!r}"
            )
        try:
            return cls(value[0], value[1])
        except (ParameterError, ParameterTypeError) as error:
            raise type(error)(f"bounds for column {column!r}: {error}") from None

    @property
    def magnitude(self) -> float:
        """M = max(|L|, |U|): the largest |value| a clamped row can contribute."""
        return max(abs(self.lower), abs(self.upper))

    @property
    def spread(self) -> float:
        """R = max(U, 0) − min(L, 0): the widest change of one row's contribution when a row may also be
        missing (a dropped NaN contributes 0). Equals U − L when L ≤ 0 ≤ U."""
        return max(self.upper, 0.0) - min(self.lower, 0.0)

    @property
    def centre(self) -> float:
        """(L + U)/2."""
        return (self.lower + self.upper) / 2.0

    @property
    def half_width(self) -> float:
        """(U − L)/2."""
        return (self.upper - self.lower) / 2.0

    @property
    def is_integer(self) -> bool:
        return float(self.lower).is_integer() and float(self.upper).is_integer()

    def clamp(self, values: npt.ArrayLike) -> np.ndarray:
        return np.clip(np.asarray(values, dtype=float), self.lower, self.upper)

    def to_list(self) -> list[float]:
        return [self.lower, self.upper]


@dataclass(frozen=True, slots=True)
class Bins:
    """Public bin edges e₀ < e₁ < … < e_K of a numeric column: K bins [e_i, e_(i+1)), the last closed."""

    edges: tuple[float, ...]

    def __post_init__(self) -> None:
        if isinstance(self.edges, str) or not hasattr(self.edges, "__iter__"):
            raise ParameterTypeError(f"bins must be a sequence of edges, got bins={self.edges!r}")
        edges = tuple(check.finite(e, "bin edge") for e in self.edges)
        if len(edges) < 2:
            raise ParameterError(f"bins must have at least 2 edges (one bin), got bins={self.edges!r}")
        if any(b <= a for a, b in itertools.pairwise(edges)):
            raise ParameterError(f"bins must be strictly increasing edges, got bins={self.edges!r}")
        if len(edges) - 1 > MAX_GROUPS:
            raise ParameterError(f"bins must make at most {MAX_GROUPS} bins, got {len(edges) - 1} bins")
        object.__setattr__(self, "edges", edges)

    @property
    def labels(self) -> tuple[str, ...]:
        e = self.edges
        last = len(e) - 2
        return tuple(f"[{_fmt(e[i])}, {_fmt(e[i + 1])}{']' if i == last else ')'}" for i in range(len(e) - 1))

    def codes(self, values: np.ndarray) -> np.ndarray:
        """The bin of each (non-NaN) value, −1 outside [e₀, e_K]."""
        edges = np.asarray(self.edges)
        idx = np.searchsorted(edges, values, side="right") - 1
        idx = np.where(values == edges[-1], len(edges) - 2, idx)
        return np.where((values < edges[0]) | (values > edges[-1]), -1, idx)


def categories_tuple(values: object, name: str) -> tuple[Any, ...]:
    """A validated tuple of category labels: at least one, distinct, JSON scalars (str, int, float,
    bool), no missing values, at most ``MAX_GROUPS``."""
    if isinstance(values, str) or not hasattr(values, "__iter__"):
        raise ParameterTypeError(f"{name} must be a list of category labels, got {name}={values!r}")
    out = []
    for v in values:
        if isinstance(v, np.generic):
            v = v.item()
        if not isinstance(v, str | int | float | bool) or (isinstance(v, float) and not math.isfinite(v)):
            raise ParameterError(
                f"{name} must hold strings or finite numbers (no missing values), got {v!r} in {name}"
            )
        out.append(v)
    if not out:
        raise ParameterError(f"{name} must hold at least one category, got {name}={values!r}")
    if len(set(out)) != len(out):
        seen: set[Any] = set()
        dupes = [v for v in out if v in seen or seen.add(v)]
        raise ParameterError(f"{name} must be distinct, got duplicates {dupes!r} in {name}")
    if len(out) > MAX_GROUPS:
        raise ParameterError(f"{name} must hold at most {MAX_GROUPS} categories, got {len(out)}")
    return tuple(out)


#: The multiplier of the numeric scramble in :func:`truncation_order`: the double nearest (√5 − 1)/2.
SCRAMBLE = 0.6180339887498949
#: A number's code is floor(u · 2³²) + 2³² (exact: power-of-two scalings; never 0).
BUCKETS = 2.0**32
#: A string's code is read from the first CODE_DIGITS hex digits of its MD5, in base CODE_BASE.
CODE_DIGITS = 4
CODE_BASE = 128
#: A string id's unit is its code over 2²⁸ (128⁴: every code is below it).
STRING_SCALE = float(CODE_BASE**CODE_DIGITS)


def truncation_order(df: pd.DataFrame, columns: Sequence[str], id_column: str) -> np.ndarray:
    """The row order in which truncation keeps each person's first c rows: a function of the values.

    The rule, identical in pandas and in every engine (``dpdash.engines.truncation``):

    - a number v (bool as 0/1) has the unit u(v) = y − floor(y), y = float64(v)·0.6180339887498949 (u = 1
      when y is not finite), and the code N(v) = floor(u(v)·2³²) + 2³²;
    - a string s has the code N(s) = Σᵢ ascii(hᵢ)·128ⁱ over the first four hex digits h₀…h₃ of the MD5 of
      its UTF-8 text (so 1.0·10⁸ ≤ N(s) < 2²⁸);
    - the person's unit p is u(id) for a number id, N(id)/2²⁸ for a string id.

    Each column the query reads, in the query's order, gives three keys, and rows sort by all of them:
    (1) missing: 0, or 1 when the value is missing (None, NaN), so present values are kept first;
    (2) k = frac(p·N(value)) in doubles (0 when missing); (3) the value itself (only equal values, or the
    rare equal k, tie).

    Why: the order of the rows in a file is not a property of the data (engines read in parallel), so it
    cannot choose the rows. Sorting by the values would keep each person's smallest values, and a hash of
    the value alone would prefer the same values for everyone (in a histogram of four regions, one region
    got 86 of 99 kept rows). frac(p·N) for distinct large integers N is, as p varies over people, as good
    as an independent uniform draw per value, so each person's rows are picked as if at random and what
    is kept is not biased towards any value (``tests/queries/test_queries.py`` checks the shares). It is a
    function of that person's rows only, so the sensitivities are unchanged. A string's MD5 does not
    involve the id, so an engine hashes each distinct value once (a Parquet dictionary) rather than every
    row: at 10⁸ rows this made truncation 3.6x faster than an MD5 of id and value per row. Only IEEE
    multiplication, floor, integer arithmetic, ASCII codes and MD5 are used (the same in numpy, DuckDB,
    PostgreSQL and Spark), never a formatted float or an engine's own hash. Strings compare by code point
    (PostgreSQL needs the "C" collation).
    """
    _, id_code, _, id_unit = _codes(df[id_column])
    unit = id_unit if id_unit is not None else id_code / STRING_SCALE
    keys: list[np.ndarray] = []
    for column in columns:
        gone, code, value, _ = _codes(df[column])
        with np.errstate(invalid="ignore", over="ignore"):
            k = unit * code
            k = np.where(gone, 0.0, k - np.floor(k))
        keys.extend([gone.astype(np.int8), k, value])
    if not keys:
        return np.arange(len(df))
    frame = pd.DataFrame({str(i): k for i, k in enumerate(keys)})
    return frame.sort_values(list(frame.columns), kind="stable").index.to_numpy()


def string_code(text: str) -> int:
    """N(s) of :func:`truncation_order`: the ASCII codes of the first four hex digits of MD5(s), base 128."""
    digest = hashlib.md5(text.encode("utf-8", "surrogatepass")).hexdigest()
    return sum(ord(digest[i]) * CODE_BASE**i for i in range(CODE_DIGITS))


def _codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """(missing, code N, value, unit u or None for strings) of one column, as in
    :func:`truncation_order`; a missing value has code 0 and value 0 (or "")."""
    missing = series.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        values = series.to_numpy(dtype=float, na_value=np.nan)
    else:
        objects = series.to_numpy(dtype=object)
        present = objects[~missing]
        if all(isinstance(v, numbers.Real) for v in present):
            values = np.where(missing, np.nan, objects).astype(float)
        else:
            text = np.array(
                ["" if m else str(v) for v, m in zip(objects, missing, strict=True)], dtype=object
            )
            codes, uniques = pd.factorize(text)  # hash each distinct value once
            table = np.array([float(string_code(t)) for t in uniques])
            return missing, np.where(missing, 0.0, table[codes]), text, None
    values = np.where(missing, 0.0, values)
    with np.errstate(invalid="ignore", over="ignore"):
        y = values * SCRAMBLE
        unit = np.where(np.isfinite(y), y - np.floor(y), 1.0)
    code = np.floor(unit * BUCKETS) + BUCKETS
    return missing, np.where(missing, 0.0, code), values, unit


def _fmt(x: float) -> str:
    return f"{x:g}"


def _columns(df: pd.DataFrame) -> str:
    names = [str(c) for c in df.columns]
    return ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
