"""What every query spec offers: a true answer for the data owner, and sensitivities from public facts.

A query is a frozen, validated spec (a value: comparable, hashable, JSON round-trippable). It never
reads its sensitivity from the data: every bound follows from the spec (bounds, categories, bins,
keys, candidates) and its :class:`~dpdash.facts.Facts` (neighbour relation, c rows per person).

How sensitivities are derived, once for every query. Each row contributes a vector v to the answer,
from a set V that the spec fixes (0 ∈ V whenever a row can be dropped, e.g. for a missing value). A
person owns at most c rows, so

- add/remove: the answer moves by a sum of at most c vectors of V, hence Δ_p = c·max_(v ∈ V) ‖v‖_p;
- substitute: by a sum of at most c differences v′ − v, hence Δ_p = c·max_(v, v′ ∈ V) ‖v′ − v‖_p;

and both maxima are reached (a person's c rows may all be identical). For cell counts and sums with
values in [L, U] spread over K cells (K = 1 for a plain count or sum), with M = max(|L|, |U|) and
R = max(U, 0) − min(L, 0) (the range of one row's contribution, 0 included):

=============  ==================  ===============================  ===============
relation       ℓ1                  ℓ2                               one coordinate
=============  ==================  ===============================  ===============
add/remove     c·M                 c·M                              c·M
substitute     c·max(2M, R) (K≥2)  c·max(√2·M, R) (K≥2)             c·R
               c·R (K = 1)         c·R (K = 1)
=============  ==================  ===============================  ===============

A count is the case L = U = 1 with the row possibly not counted (M = R = 1): a histogram has ℓ1
sensitivity c under add/remove and 2c under substitute, ℓ2 c and √2·c. A count of all rows under
substitute has sensitivity 0: the number of rows is public under that relation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from dpdash._forward import Forwarded
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.facts import WEIGHT, Bins, Bounds, Facts, GroupBounds, Truncation
from dpdash.queries.report import (
    NOT_PRIVATE,
    DataReport,
    Evaluation,
    Sensitivities,
    bounded_sensitivities,
    cell_count_report,
    cell_sensitivities,
    count_sensitivities,
)

__all__ = [
    "NORMS",
    "NOT_PRIVATE",
    "CompositeQuery",
    "DataReport",
    "Evaluation",
    "NumericQuery",
    "Piece",
    "Query",
    "SelectionQuery",
    "Sensitivities",
    "bounded_sensitivities",
    "cell_count_report",
    "cell_sensitivities",
    "check_bounding",
    "count_sensitivities",
    "query_from_dict",
    "row_weights",
    "weighted_counts",
]


#: Query classes by ``kind``, for ``query_from_dict``.
_REGISTRY: dict[str, type[Query]] = {}

#: The norms a mechanism may read a numeric query's sensitivity in (``NumericQuery.sensitivity``).
NORMS = ("l1", "l2", "coordinate")


# ---- the base classes -------------------------------------------------------------------------------


class Query(ABC):
    """Base class of every query spec: frozen keyword-only dataclasses with a ``facts`` field."""

    __slots__ = ()

    kind: ClassVar[str]
    facts: Facts
    #: Whether the answer is a sum over rows (counts, sums, histograms), so that weighted bounding applies.
    weighable: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if isinstance(kind, str):
            _REGISTRY[kind] = cls

    # ---- evaluation -----------------------------------------------------------------------------
    @abstractmethod
    def required_columns(self) -> tuple[str, ...]:
        """The columns this query reads (besides the id column)."""

    def evaluate(self, df: pd.DataFrame) -> Evaluation:
        """The true answer and the data owner's report. NOT PRIVATE.

        Raises:
            ParameterError: an empty table, a missing column, a column of the wrong type.
            ParameterTypeError: ``df`` is not a pandas DataFrame.
        """
        frame = check_frame(df)
        check_bounding(self)
        for column in self.required_columns():
            require_column(frame, column, self)
        self._check_types(frame)
        kept, truncation = self._truncate(frame)
        return self._evaluate(kept, truncation)

    def _truncate(self, df: pd.DataFrame) -> tuple[pd.DataFrame, Truncation]:
        """Enforce the unit of privacy on ``df`` (default: c rows per person, ``Facts.apply``)."""
        return self.facts.apply(df, self.required_columns())

    def true_answer(self, df: pd.DataFrame) -> Any:
        """The exact answer on ``df`` (after truncation, clamping and the declared policies). NOT PRIVATE."""
        return self.evaluate(df).values

    def _check_types(self, df: pd.DataFrame) -> None:  # noqa: B027 (a hook, empty by default)
        """Refuse columns of the wrong type before anything is computed (default: nothing to check)."""

    @abstractmethod
    def _evaluate(self, df: pd.DataFrame, truncation: Truncation) -> Evaluation:
        """Evaluation on the truncated table (columns checked)."""

    # ---- description ----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """A short human label, e.g. "sum of income"."""
        return self.kind

    def to_dict(self) -> dict[str, Any]:
        """The spec as plain JSON data; ``query_from_dict`` rebuilds an equal spec."""
        out: dict[str, Any] = {"type": self.kind}
        for f in fields(self):  # type: ignore[arg-type]
            if f.init:
                out[f.name] = _to_json(getattr(self, f.name))
        return out


class _LabelledQuery(Query):
    """A query whose answer is a vector of numbers, one per label (numeric and composite queries)."""

    __slots__ = ()

    integer_valued: ClassVar[bool] = False

    @property
    @abstractmethod
    def labels(self) -> tuple[str, ...]:
        """One label per coordinate of the answer."""

    @property
    def dimension(self) -> int:
        return len(self.labels)


class NumericQuery(_LabelledQuery):
    """A query whose answer is a vector of numbers, released by adding noise.

    Subclasses define ``labels`` and ``sensitivities``; the properties below read them.
    """

    __slots__ = ()

    @property
    @abstractmethod
    def sensitivities(self) -> Sensitivities:
        """Exact ℓ1/ℓ2/coordinate sensitivities under ``facts`` (see the module docstring)."""

    # Each read from ``sensitivities``: maxima over neighbours x, x′ (and coordinates i), all exact.
    l1_sensitivity = Forwarded[float]("sensitivities.l1", "Δ₁ = max ‖f(x) − f(x′)‖₁.")
    l2_sensitivity = Forwarded[float]("sensitivities.l2", "Δ₂ = max ‖f(x) − f(x′)‖₂.")
    coordinate_sensitivity = Forwarded[float]("sensitivities.coordinate", "Δ∞ = max |f_i(x) − f_i(x′)|.")
    changed_coordinates = Forwarded[int](
        "sensitivities.changed_coordinates", "The largest number of coordinates one person can change."
    )

    def sensitivity(self, norm: str) -> float:
        """The sensitivity in a mechanism's norm: ``"l1"``, ``"l2"`` or ``"coordinate"``."""
        if norm not in NORMS:
            raise ParameterError(f"norm must be one of {NORMS}, got norm={norm!r}")
        return getattr(self, f"{norm}_sensitivity")

    @property
    def whole_when_weighted(self) -> bool:
        """Whether the answer stays an integer under weighted bounding (a count of every row does)."""
        return False

    def is_integer_valued(self, df: pd.DataFrame | None = None) -> bool:
        """Whether every possible answer is an integer (so integer mechanisms apply). Decided from the
        spec and the column types (public schema), never from the values."""
        return self.integer_valued


@dataclass(frozen=True, slots=True)
class Piece:
    """One noisy part of a composite query: its name, its spec and its share of ε (and δ)."""

    name: str
    query: NumericQuery
    share: float


class CompositeQuery(_LabelledQuery):
    """A query answered from several noisy pieces (e.g. a mean from a noisy sum and a noisy count).

    The budget is split over ``pieces()`` by their ``share`` (basic composition: the shares add up to
    1); the answer is ``combine`` of the noisy pieces, which is post-processing.
    """

    __slots__ = ()

    @abstractmethod
    def pieces(self) -> tuple[Piece, ...]:
        """The noisy pieces and their shares of the budget."""

    @abstractmethod
    def combine(self, pieces: dict[str, np.ndarray]) -> np.ndarray:
        """The answer from the pieces' (noisy or true) values: post-processing."""

    @property
    @abstractmethod
    def combination(self) -> str:
        """The formula of ``combine``, in words."""


class SelectionQuery(Query):
    """A query whose answer is chosen from public candidates by a selection mechanism.

    The exponential mechanism, permute-and-flip and report-noisy-max read the exact integer
    ``utilities`` of each candidate, their sensitivity Δu (``utility_sensitivities``, one per
    selection) and ``monotone``. Utilities are integers (in the query's stated unit), so that the
    selection probabilities ∝ exp(ε·u/(2Δu)) are those of exact rationals.
    """

    __slots__ = ()

    @property
    @abstractmethod
    def candidates(self) -> tuple[Any, ...]:
        """The public candidates (labels or values)."""

    @property
    @abstractmethod
    def selections(self) -> tuple[str, ...]:
        """One label per selection made (e.g. one per quantile); ε is split equally over them."""

    @property
    @abstractmethod
    def utility_sensitivities(self) -> tuple[int, ...]:
        """Δu of each selection: max over neighbours and candidates of |u(x, r) − u(x′, r)| (exact)."""

    @property
    def utility_sensitivity(self) -> int:
        """The largest Δu over the selections."""
        return max(self.utility_sensitivities)

    @property
    @abstractmethod
    def monotone(self) -> bool:
        """Whether, between neighbours, all utilities move in the same direction (then ε/Δu suffices)."""

    @property
    @abstractmethod
    def utility_unit(self) -> str:
        """What one unit of utility means, in words."""

    @property
    def utility_per_row(self) -> tuple[int, ...]:
        """Utility units in one row, one per selection: a utility u counts u / this many rows (ranks for
        a quantile, counts for a mode). 1 unless a query's unit is a fraction of a row."""
        return (1,) * len(self.selections)

    def utilities(self, df: pd.DataFrame) -> tuple[np.ndarray, ...]:
        """The exact integer utilities of every candidate, one array per selection. NOT PRIVATE."""
        utilities = self.evaluate(df).utilities
        assert utilities is not None
        return tuple(np.asarray(u, dtype=np.int64) for u in utilities)


# ---- data checks shared by the queries -----------------------------------------------------------------


def check_bounding(query: Query) -> None:
    """Refuse weighted bounding (``Facts(bounding="weight")``) where it does not apply: a query whose
    answer is not a sum over rows, or per-group bounds (enforced by sampling cells and rows)."""
    if not query.facts.weighted:
        return
    if not type(query).weighable:
        raise ParameterError(
            f"{query.name}: weighted bounding (each row counts min(1, c/n)) applies to counts, sums, "
            "means, histograms and group-by counts, sums and means; declare bounding='sample' for this "
            "query (on the Data page: keep c of each person's rows)"
        )
    if getattr(query, "grouping", None) is not None:
        raise ParameterError(
            f"{query.name}: per-group bounds (k groups, m rows in each) are enforced by sampling; use "
            "bounding='sample' with them (on the Data page: keep c of each person's rows), or weighted "
            "bounding with c rows per person and no group bounds"
        )


def weighted_counts(codes: np.ndarray, counts: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """The rows per cell (``codes``: each row's cell, −1 for none): ``counts`` as they are, or Σ w per
    cell under weighted bounding."""
    if weights is None:
        return counts
    inside = codes >= 0
    return np.bincount(codes[inside], weights=weights[inside], minlength=len(counts))


def row_weights(df: pd.DataFrame) -> np.ndarray | None:
    """Each row's weight min(1, c/n) after weighted bounding, or None when rows were sampled."""
    return df[WEIGHT].to_numpy(dtype=float) if WEIGHT in df.columns else None


def check_frame(df: object) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise ParameterTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if len(df) == 0:
        raise ParameterError(
            "the table is empty (0 rows): there is nothing to release; check the file or the filter "
            "that produced it"
        )
    return df


def require_column(df: pd.DataFrame, column: str, query: Query) -> pd.Series:
    if column not in df.columns:
        names = [str(c) for c in df.columns]
        shown = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
        raise ParameterError(
            f"column {column!r} is not in the table, needed by {query.name} (columns: {shown})"
        )
    return df[column]


def require_numeric(df: pd.DataFrame, column: str, query: Query) -> None:
    series = df[column]
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        raise ParameterError(f"column {column!r} must be numeric for {query.name}, got dtype {series.dtype}")


def numeric_values(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(float values, missing mask) of a numeric column; missing = NaN or None."""
    missing = series.isna().to_numpy()
    values = series.to_numpy(dtype=float, na_value=np.nan)
    return values, missing


def is_integer_column(df: pd.DataFrame | None, column: str) -> bool:
    if df is None or column not in df.columns:
        return False
    dtype = df[column].dtype
    return pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)


def query_from_dict(data: dict[str, Any]) -> Query:
    """Rebuild a query spec from ``Query.to_dict()``."""
    if not isinstance(data, dict) or "type" not in data:
        raise ParameterError(f"a query dict must have a 'type', got {data!r}")
    kind = data["type"]
    cls = _REGISTRY.get(kind)
    if cls is None:
        raise ParameterError(f"unknown query type {kind!r}; known: {sorted(_REGISTRY)}")
    arguments = {k: v for k, v in data.items() if k != "type"}
    return cls(**arguments)


def as_facts(value: object) -> Facts:
    if isinstance(value, Facts):
        return value
    if isinstance(value, dict):
        return Facts.from_dict(value)
    raise ParameterTypeError(f"facts must be a Facts (or its dict), got facts={value!r}")


def column_name(value: object, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise ParameterTypeError(f"{name} must be a column name (a non-empty string), got {name}={value!r}")
    return value


def _to_json(value: Any) -> Any:
    if isinstance(value, Facts):
        return value.to_dict()
    if isinstance(value, Bounds):
        return value.to_list()
    if isinstance(value, Bins):
        return list(value.edges)
    if isinstance(value, GroupBounds):
        return value.to_list()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, tuple | list):
        return [_to_json(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


