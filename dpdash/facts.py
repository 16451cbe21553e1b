"""Public facts: what is declared about a table, never read from it.

A differentially private answer is only as private as the facts its sensitivity rests on. dpdash asks
for them explicitly and derives every sensitivity from them (``dpdash.queries``):

- the **neighbour relation** (:class:`Neighbours`): two tables are neighbours when one person's rows are
  added or removed (``"add_remove"``, the default, MATH.md) or when one person's rows are replaced by the
  same number of rows with other values (``"substitute"``: the number of rows, and each person's number
  of rows, stay the same);
- the **unit of privacy** (:class:`Facts`): at most ``c = rows_per_person`` rows belong to one person.
  With an ``id_column`` dpdash *enforces* it by truncation (each id keeps c of its rows chosen by
  :func:`truncation_order`, a uniform choice of each person's rows that is a fixed function of them,
  never of the row order; rows without an id are dropped, since they cannot be attributed to anyone);
  without one, the bound is *trusted* as
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

import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.truncation_keys import row_keys

__all__ = [
    "BOUNDING",
    "MAX_GROUPS",
    "OUTSIDE_POLICIES",
    "WEIGHT",
    "Bins",
    "Bounds",
    "Facts",
    "GroupBounds",
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

#: How an id column bounds a person's contribution to c rows: ``"sample"`` keeps a uniform choice of c of
#: their rows; ``"weight"`` keeps every row and weights each of a person's n rows by min(1, c/n).
BOUNDING = ("sample", "weight")

#: The column that carries each row's weight after weighted bounding (pandas and the engines alike).
WEIGHT = "__dpdash_weight"


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
        id_column: the column that identifies a person. Given, the bound c is enforced (rows with a
            missing id dropped); ``None``, it is trusted as declared.
        bounding: how the id column enforces c. ``"sample"`` (default): each id keeps c of its rows,
            chosen by :func:`truncation_order`. ``"weight"``: each id keeps all its rows, each of a
            person's n rows weighted by w = min(1, c/n), for counts, sums, means and histograms.

    Weighted bounding answers, exactly, the *expected* answer of a uniform choice of c rows per person
    (linearity: each row is kept with probability min(1, c/n)), with none of the choice's sampling error.
    Its sensitivity in every norm is at most the sampled one's: a person's weighted contribution is the
    average of their contributions over the uniform choices S, and ‖E[u(S)] − E[u′(S′)]‖ ≤ max ‖u(S) −
    u′(S′)‖ by the convexity of a norm, each pair being a pair of neighbours of the sampled query. Answers
    become fractional, so integer noise applies only where they stay whole (a count without a filter).
    """

    neighbours: Neighbours = Neighbours.ADD_REMOVE
    rows_per_person: int = 1
    id_column: str | None = None
    bounding: str = "sample"

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
        check.one_of(self.bounding, "bounding", BOUNDING)
        if self.bounding == "weight" and self.id_column is None:
            raise ParameterError(
                "bounding='weight' weights each person's rows by min(1, c/n) and needs the column that "
                "identifies a person: declare id_column, or use bounding='sample'"
            )

    @property
    def enforced(self) -> bool:
        """Whether the unit of privacy is enforced by truncation (an id column is given)."""
        return self.id_column is not None

    @property
    def weighted(self) -> bool:
        """Whether each row is weighted by min(1, c/n) rather than c rows per person sampled."""
        return self.bounding == "weight"

    @property
    def unit_only(self) -> Facts:
        """The unit of privacy alone: these facts with sampled bounding. How c is enforced does not change
        whom a release protects, so the ledger records and compares units in this form."""
        return self if not self.weighted else replace(self, bounding="sample")

    @property
    def substitute(self) -> bool:
        return self.neighbours is Neighbours.SUBSTITUTE

    def describe(self) -> str:
        """One line that says what a release's guarantee protects, and how."""
        c = self.rows_per_person
        rows = "1 row" if c == 1 else f"{c} rows"
        if self.weighted:
            unit = (
                f"at most {rows} per person, enforced by weighting on column {self.id_column!r} (each of a "
                f"person's n rows counts min(1, {c}/n): the expected answer of a uniform choice of {rows})"
            )
        elif self.enforced:
            unit = (
                f"at most {rows} per person, enforced by truncation on column {self.id_column!r} "
                f"({rows} per id kept, a uniform choice by a hash of the id and each row, not by table order)"
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
        Weighted bounding keeps every row with an id and adds the column ``WEIGHT``, min(1, c/n).
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
        c = self.rows_per_person
        if self.weighted:
            per_row = counts[codes[keep]]
            kept = df[keep].assign(**{WEIGHT: np.minimum(1.0, c / per_row)})
            return kept, Truncation(
                rows_in=n,
                rows_kept=int(np.minimum(counts, c).sum()),
                rows_truncated=int((counts - np.minimum(counts, c)).sum()),
                rows_missing_id=int(missing.sum()),
                people=int(counts.size),
                people_truncated=int((counts > c).sum()),
            )
        over = np.zeros(n, dtype=bool)  # the rows of people with more than c rows: only they are ranked
        over[~missing] = counts[codes[~missing]] > self.rows_per_person
        if over.any():
            read = [c for c in dict.fromkeys(columns) if c != self.id_column]
            some = df[over]
            order = truncation_order(some, read, self.id_column)
            ranked = pd.Series(codes[over][order])
            rank = np.empty(len(some), dtype=np.int64)
            rank[order] = ranked.groupby(ranked.to_numpy(), sort=False).cumcount().to_numpy()
            keep[over] = rank < self.rows_per_person
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
        out: dict[str, Any] = {
            "neighbours": self.neighbours.value,
            "rows_per_person": self.rows_per_person,
            "id_column": self.id_column,
        }
        if self.weighted:  # the default is left out: records written before weighting stay as they were
            out["bounding"] = self.bounding
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Facts:
        return cls(
            neighbours=data.get("neighbours", "add_remove"),
            rows_per_person=data.get("rows_per_person", 1),
            id_column=data.get("id_column"),
            bounding=data.get("bounding", "sample"),
        )


@dataclass(frozen=True, slots=True)
class GroupBounds:
    """Per-group contribution bounds of a grouping column, declared by the data owner: a person touches
    at most ``max_groups`` (k) groups and adds at most ``max_rows_per_group`` (m) rows to each.

    A histogram or group-by that declares them has ℓ1 sensitivity k·m, ℓ2 √k·m and m per group (add/
    remove; MATH.md), instead of what c rows per person give; counting distinct persons per group is the
    case m = 1. They are enforced by truncation on the id column (``dpdash.group_truncation``), so they
    need one. Tumult's MaxGroupsPerID/MaxRowsPerGroupPerID and PipelineDP's max_partitions_contributed/
    max_contributions_per_partition are the same bounds.

    >>> GroupBounds(2, 1).to_list()
    [2, 1]
    """

    max_groups: int
    max_rows_per_group: int

    def __post_init__(self) -> None:
        for name in ("max_groups", "max_rows_per_group"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ParameterTypeError(f"{name} must be an integer >= 1, got {name}={value!r}")
            if not (math.isfinite(value) and value >= 1 and value == math.floor(value)):
                raise ParameterError(f"{name} must be an integer >= 1, got {name}={value!r}")
            object.__setattr__(self, name, int(value))

    @classmethod
    def of(cls, value: object) -> GroupBounds:
        """From a ``GroupBounds``, a pair (k, m) or a dict with ``max_groups`` and ``max_rows_per_group``."""
        if isinstance(value, GroupBounds):
            return value
        if isinstance(value, dict):
            return cls(value.get("max_groups"), value.get("max_rows_per_group"))  # type: ignore[arg-type]
        if isinstance(value, tuple | list) and len(value) == 2:
            return cls(value[0], value[1])
        raise ParameterTypeError(
            f"group_bounds must be a pair (max_groups k, max_rows_per_group m), got group_bounds={value!r}"
        )

    def to_list(self) -> list[int]:
        return [self.max_groups, self.max_rows_per_group]


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


def truncation_order(df: pd.DataFrame, columns: Sequence[str], id_column: str) -> np.ndarray:
    """The row order in which truncation keeps each person's first c rows: a uniform choice of each
    person's rows that is a fixed function of them (never of the row order).

    Rows sort by the key H(id, v₁ … v_k, j) of :mod:`dpdash.truncation_keys` (a keyed hash of the id, the
    values of ``columns`` and the occurrence j of the row among the person's rows equal on them), then by
    each column's missing flag and value, then j. Each person's first c rows in this order are kept.

    Why: the order of the rows in a file is not a property of the data (engines read in parallel), so it
    cannot choose the rows. A key of the value alone (or of the person and the value) keeps or drops a
    person's equal values together, which skews any histogram of a category people repeat (a per-cell
    skew of ±7 % on a panel, before this rule); a key computed in doubles from a 64-bit id loses the id
    past 2⁵³. The hash, in exact integer arithmetic, makes each person's keys behave as independent
    uniform draws, so a person with n rows keeps each with probability min(1, c/n)
    (``tests/queries/test_truncation_bias.py`` checks every cell against that expectation).
    """
    ids = df[id_column]
    keys, ties = row_keys(ids, [df[column] for column in columns])
    person, _ = pd.factorize(ids)
    frame = pd.DataFrame({"person": person, "key": keys, **{str(i): t for i, t in enumerate(ties)}})
    return frame.sort_values(list(frame.columns), kind="stable").index.to_numpy()


def _fmt(x: float) -> str:
    return f"{x:g}"


def _columns(df: pd.DataFrame) -> str:
    names = [str(c) for c in df.columns]
    return ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
