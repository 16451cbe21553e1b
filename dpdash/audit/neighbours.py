"""A neighbouring table that moves a query's answer as far as the facts allow.

An audit has power only on a pair of neighbours that the mechanism must work hard to hide: ideally
one whose answers differ by the full sensitivity. ``worst_case_neighbour`` adds one person (c copies of
one row, c = rows per person) under add/remove, or replaces the first person's rows under substitution,
trying candidate rows built from the query's public facts (every bound, category, bin edge and candidate
it declares, and the column's own extremes) and keeping the row whose change is largest, measured as
the mean over the calibrated pieces of ‖change‖/sensitivity in each mechanism's norm (selection
queries: the largest change of a utility, over its sensitivity), so 1 is the worst case the facts allow.
"""

from __future__ import annotations

import dataclasses
import itertools
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpdash.audit.targets import distance, piece_answers
from dpdash.errors import ParameterError
from dpdash.facts import Bounds
from dpdash.queries import Query, SelectionQuery
from dpdash.release import calibrate, mechanism_class

__all__ = ["Neighbour", "worst_case_neighbour"]

#: At most this many candidate rows are tried (a seeded sample when the product is larger).
MAX_CANDIDATES = 128


@dataclass(frozen=True, slots=True)
class Neighbour:
    """The neighbouring table, the row that makes it, and how far it moves the answer (in units of the
    sensitivity: 1 is the worst case the facts allow)."""

    table: pd.DataFrame
    row: dict[str, Any]
    change: float
    description: str


def _public_values(query: Any) -> tuple[list[float], list[Any]]:
    """Numbers and labels the spec declares: bounds, bin edges, candidates, categories, filter values."""
    numbers_: list[float] = []
    labels: list[Any] = []

    def visit(value: Any) -> None:
        if isinstance(value, Bounds):
            numbers_.extend([value.lower, value.upper])
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                visit(getattr(value, f.name))
        elif isinstance(value, tuple | list):
            for item in value:
                visit(item)
        elif isinstance(value, bool):
            labels.append(value)
        elif isinstance(value, numbers.Real):
            numbers_.append(float(value))
        elif isinstance(value, str):
            labels.append(value)

    for f in dataclasses.fields(query):
        if f.name != "facts":
            visit(getattr(query, f.name))
    return numbers_, labels


def _column_candidates(column: pd.Series, numbers_: list[float], labels: list[Any]) -> list[Any]:
    present = column.dropna()
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        values = set(numbers_) | ({float(present.min()), float(present.max())} if len(present) else set())
        finite = sorted(v for v in values if np.isfinite(v))
        if pd.api.types.is_integer_dtype(column):
            finite = sorted({round(v) for v in finite})
        return finite or [0]
    seen = list(dict.fromkeys([*(x for x in labels if x in set(present.unique())), *present.unique()[:8]]))
    return seen or list(present.unique()[:1])


def _score(query: Query, base: dict[str, np.ndarray], df: pd.DataFrame, pieces: Any) -> float:
    """How far ``df`` moves the answer from ``base``, in units of the sensitivity (module docstring)."""
    if isinstance(query, SelectionQuery):
        u = np.asarray(query.evaluate(df).utilities[0], dtype=float)  # type: ignore[index]
        return float(np.abs(u - base["utilities"]).max()) / query.utility_sensitivities[0]
    answers = piece_answers(query, df)
    total = 0.0
    for piece in pieces:
        change = np.asarray(answers[piece.name], dtype=float) - base[piece.name]
        total += distance(change, type(piece.mechanism).sensitivity_norm) / piece.mechanism.sensitivity
    return total / max(len(pieces), 1)


def _with_row(df: pd.DataFrame, row: dict[str, Any], query: Query) -> pd.DataFrame:
    facts = query.facts
    c = facts.rows_per_person
    new = pd.DataFrame([row] * c).astype(df.dtypes.to_dict(), errors="ignore")
    if facts.substitute:
        if facts.id_column is not None:
            first_id = df[facts.id_column].dropna().iloc[0]
            mine = df.index[df[facts.id_column] == first_id][:c]
            new[facts.id_column] = first_id
        else:
            mine = df.index[:c]
        rest = df.drop(index=mine)
        return pd.concat([new, rest], ignore_index=True)[df.columns]
    if facts.id_column is not None:
        ids = df[facts.id_column]
        fresh = (ids.max() + 1) if pd.api.types.is_numeric_dtype(ids) else "dpdash-audit-person"
        new[facts.id_column] = fresh
    return pd.concat([df, new], ignore_index=True)[df.columns]


def worst_case_neighbour(
    query: Query,
    mechanism: type | str,
    df: pd.DataFrame,
    *,
    epsilon: float = 1.0,
    delta: float = 0.0,
) -> Neighbour:
    """The neighbour of ``df`` (one person added, or under substitution, the first person's rows
    replaced) whose answer moves furthest; see the module docstring.

    Raises:
        ParameterError: an empty table, or no candidate row moves the answer.
    """
    if len(df) == 0:
        raise ParameterError("the table is empty: load data with at least one row to build a neighbour")
    cls = mechanism_class(mechanism)
    numbers_, labels = _public_values(query)
    columns = [c for c in query.required_columns() if c in df.columns]
    choices = [_column_candidates(df[c], numbers_, labels) for c in columns]
    combos = list(itertools.product(*choices))
    if len(combos) > MAX_CANDIDATES:
        rng = np.random.default_rng(0)
        combos = [combos[i] for i in sorted(rng.choice(len(combos), MAX_CANDIDATES, replace=False))]
    template = df.iloc[0].to_dict()
    pieces: Any = None
    if isinstance(query, SelectionQuery):
        base = {"utilities": np.asarray(query.evaluate(df).utilities[0], dtype=float)}  # type: ignore[index]
    else:
        pieces = calibrate(query, cls, df, epsilon=epsilon, delta=delta)
        base = {k: np.asarray(v, dtype=float) for k, v in piece_answers(query, df).items()}
    best: Neighbour | None = None
    for combo in combos:
        row = {**template, **dict(zip(columns, combo, strict=True))}
        table = _with_row(df, row, query)
        change = _score(query, base, table, pieces)
        if best is None or change > best.change:
            c = query.facts.rows_per_person
            shown = ", ".join(f"{name}={v!r}" for name, v in zip(columns, combo, strict=True))
            rows = f"{c} row{'s' if c > 1 else ''}" + (f" with {shown}" if shown else "")
            action = (
                f"the first person's rows replaced by {rows}"
                if query.facts.substitute
                else f"one person added: {rows}"
            )
            best = Neighbour(table, row, change, action)
    if best is None or best.change <= 0:
        raise ParameterError(
            f"no neighbour of this table moves {query.name}: its answer does not depend on one person here"
        )
    return best
