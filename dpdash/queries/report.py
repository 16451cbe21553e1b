"""What evaluating a query gives (NOT PRIVATE): ``Evaluation``, the true values with the data owner's
``DataReport`` (rows read, dropped, clipped, missing), and the sensitivities a query states for a release
(``Sensitivities``, per cell for histograms, under c rows per person or per-group bounds)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dpdash.facts import Facts, GroupBounds, Truncation

__all__ = [
    "NOT_PRIVATE",
    "DataReport",
    "Evaluation",
    "Sensitivities",
    "bounded_sensitivities",
    "cell_count_report",
    "cell_sensitivities",
    "count_sensitivities",
    "group_sensitivities",
]


NOT_PRIVATE = "NOT PRIVATE: computed from the raw data, for the data owner's eyes only; never publish it"


@dataclass(frozen=True, slots=True)
class Sensitivities:
    """How far one person can move a query's answer, in the norms the mechanisms read.

    Attributes:
        l1, l2: Δ₁ and Δ₂, the largest ‖f(x) − f(x′)‖ over neighbours x, x′ (integers for counts).
        coordinate: Δ∞, the largest change of one coordinate.
        changed_coordinates: the largest number of coordinates one person can change.
    """

    l1: float
    l2: float
    coordinate: float
    changed_coordinates: int

    def whole(self) -> Sensitivities:
        """The same sensitivities with the integer-valued ones as ints (counts state 1, not 1.0; √k·m stays
        a float)."""
        whole = (_whole(self.l1), _whole(self.l2), _whole(self.coordinate))
        return Sensitivities(*whole, self.changed_coordinates)


def cell_sensitivities(
    *, rows_per_person: int, substitute: bool, cells: int, magnitude: float, spread: float
) -> Sensitivities:
    """The table of the module docstring: K = ``cells``, M = ``magnitude``, R = ``spread``."""
    c = rows_per_person
    if not substitute:
        return Sensitivities(c * magnitude, c * magnitude, c * magnitude, min(c, cells))
    if cells >= 2:
        return Sensitivities(
            c * max(2.0 * magnitude, spread),
            c * max(math.sqrt(2.0) * magnitude, spread),
            c * spread,
            min(2 * c, cells),
        )
    return Sensitivities(c * spread, c * spread, c * spread, 1 if spread > 0 else 0)


def group_sensitivities(
    bounds: GroupBounds, *, substitute: bool, cells: int, magnitude: float, spread: float
) -> Sensitivities:
    """Sensitivities of per-cell counts or sums when a person touches at most k cells with at most m rows
    each (``bounds``), K = ``cells``, M = ``magnitude``, R = ``spread``:

    - add/remove: ℓ1 k·m·M, ℓ2 √k·m·M, per cell m·M, at most min(k, K) cells change;
    - substitute (K ≥ 2): ℓ1 k·m·max(2M, R), ℓ2 m·max(√(2k)·M, √k·R), per cell m·R, min(2k, K) cells;
      with one cell, m·R throughout.
    """
    k, m = bounds.max_groups, bounds.max_rows_per_group
    if not substitute:
        return Sensitivities(k * m * magnitude, math.sqrt(k) * m * magnitude, m * magnitude, min(k, cells))
    if cells >= 2:
        return Sensitivities(
            k * m * max(2.0 * magnitude, spread),
            m * max(math.sqrt(2.0 * k) * magnitude, math.sqrt(k) * spread),
            m * spread,
            min(2 * k, cells),
        )
    return Sensitivities(m * spread, m * spread, m * spread, 1 if spread > 0 else 0)


def bounded_sensitivities(
    facts: Facts, *, cells: int, magnitude: float, spread: float, group_bounds: GroupBounds | None = None
) -> Sensitivities:
    """The sensitivities of K = ``cells`` counts or sums whose rows each add a value of magnitude at most M
    (``magnitude``) and spread R (``spread``): under the per-group bounds (k, m) when declared
    (``group_sensitivities``), else under c rows per person (``cell_sensitivities``)."""
    if group_bounds is not None:
        return group_sensitivities(
            group_bounds, substitute=facts.substitute, cells=cells, magnitude=magnitude, spread=spread
        )
    return cell_sensitivities(
        rows_per_person=facts.rows_per_person, substitute=facts.substitute, cells=cells, magnitude=magnitude,
        spread=spread,
    )  # fmt: skip


def count_sensitivities(
    facts: Facts, cells: int, group_bounds: GroupBounds | None = None, *, spread: int = 1
) -> Sensitivities:
    """Counts over K = ``cells`` cells: each row counts 1 in one cell or none (M = 1, R = ``spread``; R = 0
    for a count of every row under substitute, whose value is public), as integers where they are."""
    return bounded_sensitivities(
        facts, cells=cells, magnitude=1, spread=spread, group_bounds=group_bounds
    ).whole()


@dataclass(frozen=True, slots=True, kw_only=True)
class DataReport:
    """What the data did to a query: truncation, missing values, clipping and its bias.

    NOT PRIVATE: every number here is computed from the raw data, for the data owner only. A release
    never serialises it unless asked to (``Release.to_dict(include_private=True)``).

    Attributes:
        rows: rows in the table given.
        rows_used: rows that entered the answer (after truncation, missing values and filters).
        truncation: what enforcing the unit of privacy removed.
        missing: rows dropped because a value the query reads is missing (NaN/None): counted, never silent.
        clipped_below, clipped_above: values moved up to the lower bound / down to the upper bound.
        clipping_bias: per coordinate, (answer with the declared clamping) − (answer without it).
        outside: values outside the declared categories, bins or keys.
        outside_policy: what happened to them: ``"other"`` (counted in the extra cell) or ``"drop"``.
        empty_categories: declared categories (cells) with no row: their true count is 0.
        dropped_keys: keys found in the data that a key-selection release did not publish (their noisy
            count fell below the threshold).
        notes: anything else the owner should know, in words.
    """

    label: ClassVar[str] = NOT_PRIVATE

    rows: int
    rows_used: int
    truncation: Truncation
    missing: int = 0
    clipped_below: int = 0
    clipped_above: int = 0
    clipping_bias: tuple[float, ...] | None = None
    outside: int = 0
    outside_policy: str | None = None
    empty_categories: tuple[Any, ...] = ()
    notes: tuple[str, ...] = ()
    dropped_keys: tuple[Any, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (non-finite biases become ``None``), with the NOT PRIVATE label."""
        bias = None if self.clipping_bias is None else [_json_float(b) for b in self.clipping_bias]
        return {
            "label": NOT_PRIVATE,
            "rows": self.rows,
            "rows_used": self.rows_used,
            "truncation": {
                "rows_in": self.truncation.rows_in,
                "rows_kept": self.truncation.rows_kept,
                "rows_truncated": self.truncation.rows_truncated,
                "rows_missing_id": self.truncation.rows_missing_id,
                "people": self.truncation.people,
                "people_truncated": self.truncation.people_truncated,
            },
            "missing": self.missing,
            "clipped_below": self.clipped_below,
            "clipped_above": self.clipped_above,
            "clipping_bias": bias,
            "outside": self.outside,
            "outside_policy": self.outside_policy,
            "empty_categories": list(self.empty_categories),
            "dropped_keys": list(self.dropped_keys),
            "notes": list(self.notes),
        }


def cell_count_report(
    truncation: Truncation,
    counts: np.ndarray,
    names: Sequence[Any],
    *,
    missing: int,
    outside: int,
    policy: str,
    notes: tuple[str, ...] = (),
) -> DataReport:
    """The owner report of counts per cell (histograms, group-by counts, contingency tables, mode), in
    pandas and in every engine: the rows used are the rows counted, and ``names[i]`` is listed as empty
    when ``counts[i]`` is 0 (cells past ``names``, such as the "other" cell, never are)."""
    return DataReport(
        rows=truncation.rows_in,
        rows_used=int(counts.sum()),
        truncation=truncation,
        missing=missing,
        outside=outside,
        outside_policy=policy,
        empty_categories=tuple(name for name, n in zip(names, counts, strict=False) if n == 0),
        notes=notes,
    )


@dataclass(frozen=True, slots=True)
class Evaluation:
    """A query's true answer on a table (NOT PRIVATE) and the data owner's report.

    ``values``: the true answer, one entry per coordinate (selection queries: the best candidate of
    each selection). ``utilities``: selection queries only, the exact scores, one row per selection.
    ``pieces``: composite queries only, the true answer of each piece. ``keys``: key counts only, the
    keys found in the data, one per value (NOT PUBLIC: which keys exist is what key selection protects).
    """

    values: np.ndarray
    report: DataReport
    utilities: tuple[np.ndarray, ...] | None = None
    pieces: dict[str, np.ndarray] | None = None
    keys: tuple[Any, ...] | None = None


def _json_float(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _whole(x: float) -> float:
    """An integer-valued sensitivity as an int (counts' sensitivities are integers but for √k·m)."""
    return int(x) if float(x).is_integer() else float(x)
