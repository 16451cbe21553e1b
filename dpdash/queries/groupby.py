"""Group-by count, sum and mean over public keys.

The keys are declared (never read from the data: the set of groups that occur would itself leak).
A row whose key is missing is dropped and counted; a key outside the declared list is dropped
(``outside="drop"``, the default) or counted in an extra ``"(other)"`` group. Each row lands in one
group, so the sensitivities are those of ``dpdash.queries.base`` with K groups: for a sum with
values in [L, U], M = max(|L|, |U|), R = max(U, 0) − min(L, 0):

- add/remove: c·M in ℓ1, ℓ2 and per group (a person's c rows may all fall in one group);
- substitute: ℓ1 c·max(2M, R), ℓ2 c·max(√2·M, R) (a row may leave one group for another), per group
  c·R; with a single group, c·R throughout.

A group-by mean splits ε (and δ) between the group sums of the centred values and the group counts
of non-missing values, half/half by default (the argument of ``dpdash.queries.sums``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpdash.errors import ParameterError
from dpdash.facts import MAX_GROUPS, Bins, Bounds, Facts, GroupBounds, Truncation, categories_tuple
from dpdash.queries.base import (
    DataReport,
    Evaluation,
    NumericQuery,
    as_facts,
    column_name,
    require_numeric,
    row_weights,
    weighted_counts,
)
from dpdash.queries.histogram import OTHER, CellCounts, Cells, GroupBounded, Grouping, _outside, cell_codes
from dpdash.queries.means import Parts, SplitComposite, centred_mean
from dpdash.queries.sums import CENTRED_SUM, SUM, ColumnSum, Summand, clamp_column, clipping_shift

__all__ = ["GroupByCount", "GroupByMean", "GroupBySum"]


class _Grouped(GroupBounded):
    """Shared fields and checks: ``by``, ``keys``, ``outside``, ``group_bounds``, ``facts``; one label per
    group."""

    __slots__ = ()

    by: str
    keys: tuple[Any, ...] | None
    bins: Bins | None
    outside: str
    group_bounds: GroupBounds | None
    facts: Facts

    @property
    def grouping(self) -> Grouping | None:
        if self.group_bounds is None:
            return None
        return Grouping(self.by, self.keys, self.bins, self.outside, self.group_bounds)

    def _normalise_groups(self) -> None:
        column_name(self.by, "by")
        object.__setattr__(self, "facts", as_facts(self.facts))
        object.__setattr__(self, "outside", _outside(self.outside))
        if (self.keys is None) == (self.bins is None):
            raise ParameterError(
                f"give exactly one of keys (categories) and bins (a numeric column) to group by {self.by!r}, "
                f"got keys={self.keys!r}, bins={self.bins!r}"
            )
        if self.keys is not None:
            object.__setattr__(self, "keys", categories_tuple(self.keys, f"keys of {self.by!r}"))
        elif not isinstance(self.bins, Bins):
            object.__setattr__(self, "bins", Bins(tuple(self.bins)))  # type: ignore[arg-type]
        groups = len(self.declared_groups) + (self.outside == "other")
        if groups > MAX_GROUPS:
            raise ParameterError(
                f"group-by {self.by!r} would have {groups} groups; at most {MAX_GROUPS} are allowed"
            )
        self._normalise_group_bounds(self.by)

    @property
    def declared_groups(self) -> tuple[Any, ...]:
        """The declared keys, or the bins' labels ("[0, 10)", …) when grouping a numeric column."""
        return self.keys if self.keys is not None else self.bins.labels  # type: ignore[union-attr]

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(str(k) for k in self.declared_groups) + ((OTHER,) if self.outside == "other" else ())

    @property
    def labels(self) -> tuple[str, ...]:
        return self.groups

    def _check_types(self, df: pd.DataFrame) -> None:
        if self.bins is not None:
            require_numeric(df, self.by, self)  # type: ignore[arg-type]

    def _cells(self, df: pd.DataFrame) -> Cells:
        return cell_codes(df[self.by], categories=self.keys, bins=self.bins, outside=self.outside)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupByCount(_Grouped, CellCounts, NumericQuery):
    """The number of rows per declared key of ``by``. Sensitivities as a histogram over the groups.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"region": ["N", "S", "N", "W"]})
    >>> q = GroupByCount(by="region", keys=["N", "S", "E"])
    >>> q.true_answer(df).tolist(), q.evaluate(df).report.outside
    ([2, 1, 0], 1)
    """

    kind: ClassVar[str] = "group_by_count"

    by: str
    keys: tuple[Any, ...] | None = None
    bins: Bins | None = None
    outside: str = "drop"
    group_bounds: GroupBounds | None = None
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        self._normalise_groups()

    @property
    def name(self) -> str:
        return f"count by {self.by}"

    def required_columns(self) -> tuple[str, ...]:
        return (self.by,)

    @property
    def cell_names(self) -> tuple[Any, ...]:
        return self.declared_groups


@dataclass(frozen=True, slots=True, kw_only=True)
class _GroupedColumn(_Grouped):
    """A group-by of one column clamped into public bounds (the query adds its own fields, then
    ``group_bounds`` and ``facts``); its name is "<title> of <column> by <by>", one label per group."""

    title: ClassVar[str]

    by: str
    column: str
    keys: tuple[Any, ...] | None = None
    bins: Bins | None = None
    bounds: Bounds
    outside: str = "drop"

    def __post_init__(self) -> None:
        self._normalise_groups()
        column_name(self.column, "column")
        object.__setattr__(self, "bounds", Bounds.of(self.bounds, self.column))

    @property
    def name(self) -> str:
        return f"{self.title} of {self.column} by {self.by}"

    def required_columns(self) -> tuple[str, ...]:
        return (self.by, self.column)

    def _check_types(self, df: pd.DataFrame) -> None:
        _Grouped._check_types(self, df)
        require_numeric(df, self.column, self)  # type: ignore[arg-type]

    def _group_sums(
        self, df: pd.DataFrame, centre: float, truncation: Truncation
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Per group: Σ (clamp(x) − centre) (each row weighted under weighted bounding), the values counted,
        the clipping shift Σ (clamped − raw), and the owner report's fields."""
        cells = self._cells(df)
        codes, key_missing, outside = cells.codes, cells.missing, cells.outside
        data = clamp_column(df, self.column, self.bounds)
        used = (codes >= 0) & data.present
        clamped = np.zeros(len(df))
        clamped[data.present] = data.values - centre
        raw = np.full(len(df), np.nan)
        raw[data.present] = data.raw
        k = len(self.groups)
        weights = row_weights(df)
        if weights is not None:
            clamped = clamped * weights
        sums = np.bincount(codes[used], weights=clamped[used], minlength=k)
        # Per group, Σ (clamped − raw) over the values clamping moved (exactly 0 when none moved).
        shifts = np.zeros(k)
        kept = np.full(len(df), np.nan)
        kept[data.present] = data.values
        moved = np.flatnonzero(used & (raw != kept))
        if moved.size:
            moved = moved[np.argsort(codes[moved], kind="stable")]
            groups, starts = np.unique(codes[moved], return_index=True)
            for g, rows in zip(groups, np.split(moved, starts[1:]), strict=True):
                shifts[g] = clipping_shift(raw[rows], kept[rows], None if weights is None else weights[rows])
        counts = np.bincount(codes[used], minlength=k).astype(np.int64)
        in_group = codes >= 0
        report_args = {
            "rows": truncation.rows_in,
            "truncation": truncation,
            "rows_used": int(used.sum()),
            "missing": int((in_group & ~data.present).sum()) + key_missing,
            "clipped_below": int((raw[used] < self.bounds.lower).sum()),
            "clipped_above": int((raw[used] > self.bounds.upper).sum()),
            "outside": outside,
            "outside_policy": self.outside,
            "empty_categories": tuple(
                k_ for k_, n in zip(self.declared_groups, counts, strict=False) if n == 0
            ),
        }
        return sums, weighted_counts(np.where(used, codes, -1), counts, weights), shifts, report_args


@dataclass(frozen=True, slots=True, kw_only=True)
class _GroupedSum(_GroupedColumn, ColumnSum):
    """Σ summand(clamp(x)) per group: K cells (module docstring), the clipping bias per group."""

    group_bounds: GroupBounds | None = None
    facts: Facts = field(default_factory=Facts)

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        sums, _, shifts, args = self._group_sums(df, self.summand.centre(self.bounds), truncation)
        return Evaluation(sums, DataReport(clipping_bias=tuple(float(b) for b in shifts), **args))


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupBySum(_GroupedSum):
    """Σ clamp(x, L, U) of ``column`` per declared key of ``by`` (module docstring for sensitivities).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"region": ["N", "S", "N"], "income": [10.0, 500.0, 30.0]})
    >>> q = GroupBySum(by="region", keys=["N", "S"], column="income", bounds=(0, 100))
    >>> q.true_answer(df).tolist(), q.l1_sensitivity, q.evaluate(df).report.clipping_bias
    ([40.0, 100.0], 100.0, (0.0, -400.0))
    """

    kind: ClassVar[str] = "group_by_sum"
    weighable: ClassVar[bool] = True
    summand: ClassVar[Summand] = SUM


@dataclass(frozen=True, slots=True, kw_only=True)
class _GroupCentredSum(_GroupedSum):
    """Σ (clamp(x) − m) per group: values in [−h, h] or 0, so M = h and R = 2h."""

    kind: ClassVar[str] = "group_centred_sum"
    weighable: ClassVar[bool] = True
    summand: ClassVar[Summand] = CENTRED_SUM


@dataclass(frozen=True, slots=True, kw_only=True)
class _GroupValidCount(_GroupedColumn, CellCounts, NumericQuery):
    """The number of non-missing values of ``column`` per group (rows whose value is missing are in no
    cell): sensitivities as a histogram."""

    kind: ClassVar[str] = "group_valid_count"

    group_bounds: GroupBounds | None = None
    facts: Facts = field(default_factory=Facts)

    @property
    def name(self) -> str:
        return f"count of non-missing {self.column} by {self.by}"

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        _, counts, _, args = self._group_sums(df, 0.0, truncation)
        return Evaluation(counts, DataReport(**args))


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupByMean(_GroupedColumn, SplitComposite):
    """The mean of clamp(x, L, U) per declared key: m + S̃_g/max(Ñ_g, 1) for each group g, from the
    noisy group sums of clamp(x) − m and the noisy group counts of non-missing values (``split``: the
    sums' share of ε and δ, default 1/2). A group with no value has true mean m = (L + U)/2.

    Accuracy: the ± a release states is simulated from both pieces' noise laws at the released pieces
    (``dpdash.published``): about the c-quantile of |Z_S − (mean_g − m)·Z_N| / max(Ñ_g, 1).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"region": ["N", "S", "N"], "age": [20, 30, 60]})
    >>> q = GroupByMean(by="region", keys=["N", "S", "E"], column="age", bounds=(0, 100))
    >>> q.true_answer(df).tolist()
    [40.0, 30.0, 50.0]
    """

    kind: ClassVar[str] = "group_by_mean"
    weighable: ClassVar[bool] = True
    title: ClassVar[str] = "mean"
    parts: ClassVar[Parts] = (("sum", _GroupCentredSum), ("count", _GroupValidCount))

    split: float = 0.5
    group_bounds: GroupBounds | None = None
    facts: Facts = field(default_factory=Facts)

    def __post_init__(self) -> None:
        _GroupedColumn.__post_init__(self)
        self._normalise_split()

    @property
    def combination(self) -> str:
        return "mean_g = (L + U)/2 + noisy centred sum_g / max(noisy count_g, 1)"

    def combine(self, pieces: dict[str, np.ndarray]) -> np.ndarray:
        return centred_mean(self.bounds.centre, pieces)

    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        sums, counts, shifts, args = self._group_sums(df, self.bounds.centre, truncation)
        pieces = {"sum": sums, "count": counts}
        # mean(clamped) − mean(raw) = Σ (clamped − raw)/n_g: the changes of the clipped values only.
        bias = tuple(float(b) / max(float(n), 1.0) for b, n in zip(shifts, counts, strict=True))
        return Evaluation(self.combine(pieces), DataReport(clipping_bias=bias, **args), pieces=pieces)
