"""What an audit runs: a pair of neighbouring inputs and the mechanism's release-grade draws on each.

Every draw goes through the mechanism's ``release_trials`` (exact samplers on OS randomness, the same
calibration and code path as ``release``): the audit tests what a person would publish, not a numpy
imitation of it. Each output is reduced to one number, the *statistic*, on which the event is sought:
the output itself for one answer or a selected index; for k answers, the projection of the output on
the direction in which the neighbours' answers differ, weighted by 1/scale² (the likelihood-ratio
statistic of Gaussian noise; for other noise a good, not optimal, test). A statistic can be given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from dpdash import _validation as check
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.mechanisms import RandomizedResponse, SelectionMechanism
from dpdash.queries import CompositeQuery, NumericQuery, Query, SelectionQuery
from dpdash.release import calibrate, check_compatible, check_options, mechanism_class

__all__ = ["AuditTarget", "distance", "mechanism_target", "min_eigenvalue", "piece_answers", "query_target"]

Statistic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, slots=True)
class AuditTarget:
    """Two neighbouring worlds to tell apart, and the claim to test.

    Attributes:
        label: what is audited, in words ("Laplace, count").
        epsilon, delta: the claimed guarantee.
        draw_first, draw_second: n ↦ n statistics of independent release-grade outputs on each input.
        statistic: what the number drawn is, in words.
        pair: the two inputs, in words.
        events: the event family searched (``dpdash.audit.events.FAMILIES``): ``"thresholds"`` for an
            ordered statistic, ``"sets"`` for unordered outputs with few values.
    """

    label: str
    epsilon: float
    delta: float
    draw_first: Callable[[int], np.ndarray]
    draw_second: Callable[[int], np.ndarray]
    statistic: str
    pair: str
    events: str = "thresholds"


def _claim(mechanism: Any, delta: float | None) -> tuple[float, float]:
    epsilon = check.positive_finite(mechanism.epsilon, "epsilon")
    claimed = float(getattr(mechanism, "delta", 0.0)) if delta is None else delta
    if not 0.0 <= claimed < 1.0:
        raise ParameterError(f"delta must be in [0, 1), got delta={claimed!r}")
    return epsilon, claimed


def _projection(direction: np.ndarray) -> Statistic:
    """y ↦ ⟨y, w⟩ over the flattened output, for the weight vector w."""
    w = direction.ravel().astype(float)

    def project(outputs: np.ndarray) -> np.ndarray:
        return outputs.reshape(outputs.shape[0], -1).astype(float) @ w

    return project


def min_eigenvalue(reference: npt.ArrayLike) -> Statistic:
    """Outputs (n, d, d) ↦ the smallest eigenvalue of output − reference: negative exactly when the
    output minus the reference matrix is not positive semidefinite (the Wishart mechanism's leak)."""
    ref = np.asarray(reference, dtype=float)

    def smallest(outputs: np.ndarray) -> np.ndarray:
        return np.linalg.eigvalsh(outputs - ref[None, :, :])[:, 0]

    return smallest


def _default_statistic(first: np.ndarray, second: np.ndarray, weight: np.ndarray | float = 1.0) -> Statistic:
    """One number per output: the output itself (one answer, a selected index, one report), else the
    projection on (second − first)·weight."""
    direction = (second.astype(float) - first.astype(float)) * weight

    def statistic(outputs: np.ndarray) -> np.ndarray:
        if outputs.ndim == 1:
            return outputs
        if outputs[0].size == 1:
            return outputs.reshape(outputs.shape[0])
        return _projection(direction)(outputs)

    return statistic


def mechanism_target(
    mechanism: Any,
    first: npt.ArrayLike,
    second: npt.ArrayLike,
    *,
    statistic: Statistic | None = None,
    statistic_label: str | None = None,
    delta: float | None = None,
    label: str | None = None,
    events: str | None = None,
) -> AuditTarget:
    """Audit ``mechanism`` on two inputs a neighbour apart: true answers for the additive mechanisms,
    utility vectors for the selection mechanisms, a respondent's value for randomized response, rows for
    the Wishart mechanism (which needs a ``statistic``, e.g. ``min_eigenvalue``).

    Args:
        mechanism: any dpdash mechanism (it has ``release_trials``, ``epsilon`` and ``delta``).
        first, second: its two inputs; the caller vouches that they are neighbours (for answers:
            ‖second − first‖ ≤ the sensitivity, in the mechanism's norm).
        statistic: outputs (n, …) ↦ n numbers; default: the output itself (one number) or the projection
            on second − first.
        delta: the claimed δ, default the mechanism's.
        label: what is audited, in words.
        events: ``"thresholds"`` or ``"sets"``; default ``"sets"`` for the selection mechanisms and
            randomized response (unordered outputs), ``"thresholds"`` otherwise.
    """
    if not hasattr(mechanism, "release_trials"):
        raise ParameterTypeError(f"mechanism must be a dpdash mechanism, got {type(mechanism).__name__}")
    epsilon, claimed = _claim(mechanism, delta)
    a, b = np.asarray(first), np.asarray(second)
    if statistic is None:
        if a.shape != b.shape or a.dtype.kind not in "iuf":
            raise ParameterError(
                "first and second must be numbers of the same shape for the default statistic; "
                "give statistic=... for other outputs"
            )
        if np.array_equal(a, b):
            raise ParameterError("first and second are equal: there is nothing to tell apart")
        statistic = _default_statistic(a, b)
        statistic_label = statistic_label or (
            "the selected candidate's index"
            if isinstance(mechanism, SelectionMechanism)
            else "the released value"
            if a.size == 1
            else "projection of the release on (second − first)"
        )

    def draw(value: npt.ArrayLike) -> Callable[[int], np.ndarray]:
        return lambda n: np.asarray(statistic(mechanism.release_trials(value, n)), dtype=float)

    return AuditTarget(
        label=label or mechanism.name,
        epsilon=epsilon,
        delta=claimed,
        draw_first=draw(first),
        draw_second=draw(second),
        statistic=statistic_label or "a statistic of the release",
        pair=f"first = {_short(a)}, second = {_short(b)}",
        events=events
        or ("sets" if isinstance(mechanism, SelectionMechanism | RandomizedResponse) else "thresholds"),
    )


def query_target(
    query: Query,
    mechanism: type | str,
    first: pd.DataFrame,
    second: pd.DataFrame,
    *,
    epsilon: float,
    delta: float = 0.0,
    options: dict[str, Any] | None = None,
) -> AuditTarget:
    """Audit a query released as ``dpdash.release`` releases it, on two neighbouring tables.

    Numeric queries: the calibrated pieces of ``calibrate`` (a mean is a noisy sum and a noisy count),
    drawn together; the statistic is the weighted projection of all pieces on the change of the true
    answers (auditing the pieces is at least as strong as auditing their post-processed combination).
    Selection queries with one selection: the selected index. The tables must be neighbours under the
    query's facts; answers that moved further than the sensitivity are refused, since they cannot be.
    """
    cls = mechanism_class(mechanism)
    check_compatible(query, cls)
    epsilon = check.epsilon(epsilon)
    label = f"{cls.__name__}, {query.name}"
    pair = f"two tables of {len(first):,} and {len(second):,} rows"
    if isinstance(query, SelectionQuery):
        return _selection_target(query, cls, first, second, epsilon, check_options(cls, options), label, pair)
    if not isinstance(query, NumericQuery | CompositeQuery):
        raise ParameterTypeError(f"query must be a dpdash query, got {type(query).__name__}")
    pieces = calibrate(query, cls, first, epsilon=epsilon, delta=delta, options=options)
    calibrate(query, cls, second, epsilon=epsilon, delta=delta, options=options)  # same checks on both
    answers = [piece_answers(query, df) for df in (first, second)]
    mechanisms, a, b, weights = [], [], [], []
    for piece in pieces:
        x, y = np.asarray(answers[0][piece.name]), np.asarray(answers[1][piece.name])
        mech = piece.mechanism
        moved = distance(y - x, type(mech).sensitivity_norm)
        if moved > mech.sensitivity * (1 + 1e-9):
            raise ParameterError(
                f"the two tables are not neighbours under the query's facts: the {piece.name} moved by "
                f"{moved:.6g} in {type(mech).sensitivity_norm}, more than its sensitivity "
                f"{mech.sensitivity:.6g}; change one person's rows only"
            )
        mechanisms.append(mech)
        a.append(x)
        b.append(y)
        weights.append(np.full(x.size, 1.0 / mech.scale**2))
    flat_a, flat_b = np.concatenate([v.ravel() for v in a]), np.concatenate([v.ravel() for v in b])
    if np.array_equal(flat_a, flat_b):
        raise ParameterError("the two tables give the same answer: there is nothing to tell apart")
    statistic = _default_statistic(flat_a, flat_b, np.concatenate(weights))

    def draw(values: Sequence[np.ndarray]) -> Callable[[int], np.ndarray]:
        def run(n: int) -> np.ndarray:
            outputs = [m.release_trials(v, n).reshape(n, -1) for m, v in zip(mechanisms, values, strict=True)]
            return np.asarray(statistic(np.concatenate(outputs, axis=1)), dtype=float)

        return run

    return AuditTarget(
        label=label,
        epsilon=epsilon,
        delta=delta,
        draw_first=draw(a),
        draw_second=draw(b),
        statistic="the released value" if flat_a.size == 1 else "projection of the release on the change",
        pair=pair,
    )


def _selection_target(
    query: SelectionQuery,
    cls: type,
    first: pd.DataFrame,
    second: pd.DataFrame,
    epsilon: float,
    options: dict[str, Any],
    label: str,
    pair: str,
) -> AuditTarget:
    if len(query.selections) != 1:
        raise ParameterError(
            f"audit one selection at a time: {query.name} makes {len(query.selections)}; use one quantile"
        )
    mech = cls(
        **options, epsilon=epsilon, sensitivity=query.utility_sensitivities[0], monotone=query.monotone
    )
    u = [np.asarray(query.evaluate(df).utilities[0], dtype=np.int64) for df in (first, second)]  # type: ignore[index]
    moved = float(np.abs(u[1] - u[0]).max())
    if moved > mech.sensitivity:
        raise ParameterError(
            f"the two tables are not neighbours under the query's facts: a utility moved by {moved:g}, more "
            f"than its sensitivity {mech.sensitivity:g}; change one person's rows only"
        )
    if np.array_equal(u[0], u[1]):
        raise ParameterError("the two tables give the same utilities: there is nothing to tell apart")
    return AuditTarget(
        label=label,
        epsilon=epsilon,
        delta=0.0,
        draw_first=lambda n: mech.release_trials(u[0], n).astype(float),
        draw_second=lambda n: mech.release_trials(u[1], n).astype(float),
        statistic="the selected candidate's index",
        pair=pair,
        events="sets",
    )


def piece_answers(query: Query, df: pd.DataFrame) -> dict[str, np.ndarray]:
    """The true answer of each noisy piece of a numeric query (``"answer"`` for a plain one). NOT PRIVATE."""
    evaluation = query.evaluate(df)
    if isinstance(query, CompositeQuery):
        return dict(evaluation.pieces or {})
    return {"answer": evaluation.values}


def distance(change: np.ndarray, norm: str) -> float:
    """‖change‖ in a mechanism's sensitivity norm: ``"l1"``, ``"l2"`` or ``"coordinate"`` (ℓ∞)."""
    flat = np.abs(change.astype(float).ravel())
    if norm == "l1":
        return float(flat.sum())
    if norm == "l2":
        return float(np.sqrt((flat**2).sum()))
    return float(flat.max(initial=0.0))


def _short(array: np.ndarray) -> str:
    flat = array.ravel()
    shown = ", ".join(f"{v:.6g}" for v in flat[:4])
    if flat.size == 1:
        return shown
    return f"[{shown}{', …' if flat.size > 4 else ''}]"
