"""The Planner page's rows: a planned release as a row of its editor (sensitivity in the mechanism's norm,
k answers), the default plan from a table's declared facts, and the ± of answers added as several pieces
(a mean) at the ε the plan gives them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from dpdash.access import Action
from dpdash.datasets import PublicFacts
from dpdash.errors import DPDashError
from dpdash.preview import preview_accuracy
from dpdash.queries import Count, Histogram, NumericQuery, Sum, query_from_dict
from dpdash.queries.histogram import numeric_bins
from dpdash.release import calibrate
from ui.guarded import evaluate
from ui.state import allowed

__all__ = ["COLUMNS", "DEFAULT_BINS", "MECHANISMS", "blank", "combined_answers", "default_plan", "plan_row"]

MECHANISMS = ("laplace", "gaussian", "geometric", "discrete_gaussian", "staircase")
COLUMNS = ["query", "mechanism", "sensitivity", "answers k", "weight", "lock ε", "lock ±accuracy"]
#: Numeric histograms in the default plan: this many equal bins over the declared bounds.
DEFAULT_BINS = 10


def plan_row(label: str, mechanism: str, query: NumericQuery, weight: float = 1.0) -> dict[str, object]:
    """A plan row for one noisy answer of ``query``: its sensitivity in the mechanism's norm, k answers."""
    norm = {"gaussian": "l2", "discrete_gaussian": "coordinate", "staircase": "coordinate"}.get(
        mechanism, "l1"
    )
    return {
        "query": label,
        "mechanism": mechanism,
        "sensitivity": float(query.sensitivity(norm)),
        "answers k": query.dimension,
        "weight": weight,
        "lock ε": None,
        "lock ±accuracy": None,
    }


def combined_answers(
    table: Any, plan: Any, queries: dict[str, tuple[dict[str, Any], str]], confidence: float, delta: float
) -> pd.DataFrame | None:
    """For queries added as several pieces (a mean: sum and count), the ± of the combined answer at the
    ε the plan gives its pieces, by ``dpdash.preview.preview_accuracy``; ``None`` when there are none."""
    rows = []
    epsilons = {r.query.query: r.epsilon for r in plan.releases}
    for name, (spec, mechanism) in queries.items():
        query = query_from_dict(spec)
        parts = [(f"{name}: {p.name}", p.share) for p in query.pieces()]
        if not all(epsilons.get(label) for label, _ in parts):
            continue
        total = sum(epsilons[label] for label, _ in parts)
        if any(abs(epsilons[label] / total - share) > 1e-6 for label, share in parts):
            rows.append(
                {"query": name, "ε": total, "±": None, "how": "pieces no longer in the query's split"}
            )
            continue
        if not allowed(table, Action.SEE_TRUTH):  # the combined ± needs the true pieces: the owners'
            rows.append({"query": name, "ε": total, "±": None,
                         "how": "depends on the true values (a mean's on the true count): the owners'"})
            continue
        try:
            gaussian = mechanism in ("gaussian", "discrete_gaussian")
            pieces = calibrate(query, mechanism, table.queryable, epsilon=total,
                               delta=delta * len(parts) if gaussian else 0.0)  # fmt: skip
            evaluation = evaluate(table, query)
            accuracy = preview_accuracy(query, pieces, evaluation.values, true_pieces=evaluation.pieces,
                                        confidence=confidence)  # fmt: skip
        except DPDashError as error:
            rows.append({"query": name, "ε": total, "±": None, "how": str(error)})
            continue
        rows.append(
            {"query": name, "ε": total, "±": float(np.max(accuracy.half_widths)), "how": accuracy.label}
        )
    return pd.DataFrame(rows, columns=["query", "ε", "±", "how"]) if rows else None


def default_plan(facts: PublicFacts) -> pd.DataFrame:
    """A starting plan from the active table's own declared facts: the number of rows, a histogram of
    the first categorical column, and a histogram (public bins over the declared bounds) and a sum of
    the first numeric column. Queries whose value is public under the facts (sensitivity 0) are left
    out. Empty when nothing is declared."""
    unit = facts.unit
    cells = "laplace" if unit.weighted else "geometric"  # weighted cells are fractional: continuous noise
    candidates: list[tuple[str, str, NumericQuery]] = [("count of rows", "geometric", Count(facts=unit))]
    for column in sorted(facts.categories)[:1]:
        histogram = Histogram(column=column, categories=facts.categories[column], facts=unit,
                              group_bounds=facts.bounds_for_groups(column))  # fmt: skip
        candidates.append((f"histogram of {column}", cells, histogram))
    for column in sorted(facts.bounds)[:1]:
        bounds = facts.bounds[column]
        bins = numeric_bins(bounds, count=DEFAULT_BINS)
        candidates.append((f"histogram of {column} ({DEFAULT_BINS} bins)", cells,
                           Histogram(column=column, bins=bins, facts=unit)))  # fmt: skip
        candidates.append((f"sum of {column}", "laplace", Sum(column=column, bounds=bounds, facts=unit)))
    rows = [plan_row(label, mechanism, query) for label, mechanism, query in candidates
            if query.sensitivity("l1") > 0]  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def blank(value: object) -> bool:
    """Whether a cell of the plan's editor is empty (None, or NaN from pandas)."""
    return value is None or (isinstance(value, float) and math.isnan(value))
