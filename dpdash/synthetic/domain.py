"""The domain of a synthetic table, from the table's declared public facts only.

Each column becomes a finite set of cells, as a histogram of it would: a categorical column's declared
categories, or a numeric column's declared bounds cut into equal-width bins (or the declared ``Bins``),
plus one ``"(other)"`` cell for values outside them. Missing values fall in no cell: a marginal drops
them, as every dpdash histogram does (the report counts them). The id column is never a column of the
synthetic table. A column with no declared facts cannot be synthesized: reading its values off the table
would leak them.

>>> from dpdash.datasets import PublicFacts
>>> facts = PublicFacts(bounds={"age": (0, 100)}, categories={"sex": ["F", "M"]})
>>> domain = build_domain(facts, ["age", "sex"], bins=4)
>>> domain.shape, domain.column("age").labels
((5, 3), ('[0, 25)', '[25, 50)', '[50, 75)', '[75, 100]', '(other)'))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.datasets import PublicFacts
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.facts import MAX_GROUPS, Bins, Facts, GroupBounds
from dpdash.queries import ContingencyTable, Histogram
from dpdash.queries.histogram import OTHER, cell_codes, numeric_bins

__all__ = ["DEFAULT_BINS", "SyntheticColumn", "SyntheticDomain", "build_domain"]

#: Equal-width bins per numeric column unless the caller says otherwise.
DEFAULT_BINS = 16


@dataclass(frozen=True, slots=True)
class SyntheticColumn:
    """One column of the domain: its declared categories, or the bins of its declared bounds."""

    name: str
    categories: tuple[Any, ...] | None = None
    bins: Bins | None = None

    @property
    def kind(self) -> str:
        return "numeric" if self.bins is not None else "categorical"

    @property
    def labels(self) -> tuple[str, ...]:
        """The cells' labels: the declared ones, then ``"(other)"``."""
        declared = self.bins.labels if self.bins is not None else tuple(str(c) for c in self.categories or ())
        return (*declared, OTHER)

    @property
    def size(self) -> int:
        return len(self.labels)

    def codes(self, series: pd.Series) -> np.ndarray:
        """The cell of each value (−1 for a missing value), as a histogram of the column counts it."""
        return cell_codes(series, categories=self.categories, bins=self.bins, outside="other").codes

    def values(self, codes: np.ndarray, rng: np.random.Generator) -> pd.Series:
        """Values for cells: a category; a number drawn uniformly in its bin (the last bin closed); the
        ``"(other)"`` cell gives ``"(other)"`` for a categorical column and a missing value for a numeric
        one (what lies outside the bounds is not public)."""
        codes = np.asarray(codes, dtype=np.int64)
        other = codes == self.size - 1
        if self.bins is None:
            cats = np.array([*(self.categories or ()), OTHER], dtype=object)
            return pd.Series(cats[codes], name=self.name)
        edges = np.asarray(self.bins.edges, dtype=float)
        inside = np.minimum(codes, len(edges) - 2)
        low, high = edges[inside], edges[inside + 1]
        out = low + (high - low) * rng.random(codes.size)
        return pd.Series(np.where(other, np.nan, out), name=self.name)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "labels": list(self.labels)}
        if self.bins is not None:
            out["bins"] = list(self.bins.edges)
        else:
            out["categories"] = list(self.categories or ())
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, as_text: bool = False) -> SyntheticColumn:
        """A column from ``to_dict``; ``as_text``: its categories as the text a CSV reader gives back."""
        if data.get("bins") is not None:
            return cls(str(data["name"]), bins=Bins(tuple(float(e) for e in data["bins"])))
        categories = tuple(data.get("categories") or ())
        return cls(str(data["name"]), categories=tuple(map(str, categories)) if as_text else categories)


@dataclass(frozen=True, slots=True)
class SyntheticDomain:
    """The columns of a synthetic table, each a finite set of cells, and the unit of privacy."""

    columns: tuple[SyntheticColumn, ...]
    unit: Facts = field(default_factory=Facts)
    group_bounds: Mapping[str, GroupBounds] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(c.size for c in self.columns)

    def column(self, name: str) -> SyntheticColumn:
        for c in self.columns:
            if c.name == name:
                return c
        raise ParameterError(f"{name!r} is not a column of the synthetic domain; its columns: {self.names}")

    def marginal(self, clique: Sequence[str]) -> Histogram | ContingencyTable:
        """The dpdash count query of a one- or two-column marginal, over exactly this domain's cells
        (values outside the declared cells counted in "(other)"), under the table's unit of privacy.
        One column: a histogram, with the column's declared per-group bounds (k, m) when it has some;
        two columns: a contingency table (flattened row by row, as ``mbi`` lays out a clique)."""
        names = tuple(clique)
        if len(names) == 1:
            c = self.column(names[0])
            return Histogram(
                column=c.name, categories=c.categories, bins=c.bins, outside="other",
                group_bounds=self.group_bounds.get(c.name), facts=self.unit,
            )  # fmt: skip
        if len(names) != 2:
            raise ParameterError(f"a marginal has one or two columns, got {names!r}")
        a, b = self.column(names[0]), self.column(names[1])
        return ContingencyTable(
            columns=(a.name, b.name), categories=(a.categories, b.categories), bins=(a.bins, b.bins),
            outside="other", facts=self.unit,
        )  # fmt: skip

    def codes(self, df: pd.DataFrame) -> pd.DataFrame:
        """Every row's cell in every column (−1 for missing). NOT PRIVATE: for quality figures only."""
        return pd.DataFrame({c.name: c.codes(df[c.name]) for c in self.columns}, index=df.index)

    def facts(self) -> PublicFacts:
        """Declared facts that give back this domain: ``build_domain(d.facts(), d.names, bins=d.edges())``
        is ``d`` (each numeric column's bounds are its outer bin edges)."""
        return PublicFacts(
            bounds={c.name: (c.bins.edges[0], c.bins.edges[-1]) for c in self.columns if c.bins is not None},
            categories={c.name: c.categories or () for c in self.columns if c.bins is None},
            unit=self.unit,
            group_bounds=dict(self.group_bounds),
        )

    def edges(self) -> dict[str, list[float]]:
        """Each numeric column's bin edges."""
        return {c.name: list(c.bins.edges) for c in self.columns if c.bins is not None}

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": [c.to_dict() for c in self.columns],
            "unit_of_privacy": self.unit.to_dict(),
            "group_bounds": {k: v.to_list() for k, v in self.group_bounds.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, as_text: bool = False) -> SyntheticDomain:
        """The columns of a record's ``domain`` (``to_dict``), under the default unit: enough to read a
        released table's cells back (``as_text``: categories as a CSV reader gives them, ``str``)."""
        return cls(tuple(SyntheticColumn.from_dict(c, as_text=as_text) for c in data.get("columns", ())))


def build_domain(
    facts: PublicFacts,
    columns: Sequence[str],
    *,
    bins: int | Mapping[str, int | Bins | Sequence[float]] = DEFAULT_BINS,
) -> SyntheticDomain:
    """The domain of ``columns`` from the declared ``facts``.

    Args:
        facts: the table's public facts (bounds, categories, unit of privacy, per-group bounds).
        columns: the columns of the synthetic table (not the id column).
        bins: the number of equal-width bins over each numeric column's declared bounds, or a mapping
            column → a number of bins or declared ``Bins`` (columns it leaves out get ``DEFAULT_BINS``).

    Raises:
        ParameterError: no columns, a repeated column, the id column, a column without declared bounds or
            categories, a pair of columns whose two-way table would exceed ``MAX_GROUPS`` cells.
    """
    if not isinstance(facts, PublicFacts):
        raise ParameterTypeError(f"facts must be a dpdash.datasets.PublicFacts, got {type(facts).__name__}")
    if isinstance(columns, str) or not isinstance(columns, Sequence):
        raise ParameterTypeError(f"columns must be a list of column names, got columns={columns!r}")
    names = [str(c) for c in columns]
    if not names:
        raise ParameterError("a synthetic table needs at least one column, got none")
    if len(set(names)) != len(names):
        raise ParameterError(f"columns must be distinct, got {names}")
    if facts.id_column is not None and facts.id_column in names:
        raise ParameterError(
            f"{facts.id_column!r} is the id column (it says who each row belongs to): a synthetic table "
            "leaves it out; remove it from the columns"
        )
    undeclared = [c for c in names if c not in facts.bounds and c not in facts.categories]
    if undeclared:
        raise ParameterError(
            f"the columns {undeclared} have no declared bounds or categories, so they cannot be synthesized "
            "(their values would have to be read off the table): declare them in the public facts, or "
            "leave them out of the columns"
        )
    out = []
    for name in names:
        if name in facts.categories:
            out.append(SyntheticColumn(name, categories=facts.categories[name]))
        else:
            out.append(SyntheticColumn(name, bins=_bins_of(name, facts, bins)))
    _check_pairs(out)
    group_bounds = {c: g for c in names if (g := facts.bounds_for_groups(c)) is not None}
    return SyntheticDomain(tuple(out), facts.unit, group_bounds)


def _bins_of(name: str, facts: PublicFacts, bins: Any) -> Bins:
    choice = bins.get(name, DEFAULT_BINS) if isinstance(bins, Mapping) else bins
    if isinstance(choice, Bins):
        return choice
    if isinstance(choice, Sequence) and not isinstance(choice, str):
        return Bins(tuple(choice))
    count = check.positive_int(choice, f"bins of {name!r}")
    return numeric_bins(facts.bounds[name], count=count)


def _check_pairs(columns: list[SyntheticColumn]) -> None:
    sizes = sorted(((c.size, c.name) for c in columns), reverse=True)
    if len(sizes) >= 2 and sizes[0][0] * sizes[1][0] > MAX_GROUPS:
        (n0, c0), (n1, c1) = sizes[0], sizes[1]
        raise ParameterError(
            f"the two-way table of {c0!r} ({n0} cells) × {c1!r} ({n1} cells) would have {n0 * n1} cells; "
            f"at most {MAX_GROUPS} are allowed: use fewer bins or fewer categories"
        )
