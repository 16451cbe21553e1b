"""Releasing counts per key when the keys are not public (``KeyCounts``): the thresholded geometric
mechanism (``dpdash.mechanisms.key_threshold``) draws every key's noisy count with the release-grade
sampler, and only the keys that reach the threshold are published. ``release()`` calls this for a
``KeyCounts``; the preview (``key_preview``) states each key's exact chance of being published.

What is published: the kept keys, sorted, with their noisy counts and the ± of the geometric noise. What
the data owner alone sees (``Release.report``, NOT PRIVATE): the keys that were found and not published.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.engines.sources import Source
from dpdash.errors import ParameterError
from dpdash.mechanisms.key_threshold import KeyThreshold
from dpdash.published import Accuracy
from dpdash.queries.base import Evaluation
from dpdash.queries.keys import KeyCounts, key_label

__all__ = ["KeyPreview", "key_accuracy", "key_mechanism", "key_preview", "release_keys"]


def key_mechanism(query: KeyCounts, epsilon: float, delta: float | None) -> KeyThreshold:
    """The calibrated mechanism of a key-count release (ε, δ and the query's (k, m))."""
    if delta is None or delta == 0:
        raise ParameterError(
            "releasing keys that are not public needs delta > 0: a key only one person has must be "
            "unlikely to appear (at most delta); give delta, e.g. 1e-6"
        )
    k, m = query.key_bounds.to_list()
    return KeyThreshold(epsilon=epsilon, delta=delta, max_groups=k, max_rows_per_group=m)


def key_accuracy(mechanism: KeyThreshold, kept: int, confidence: float) -> Accuracy:
    """The ± of each published count: the exact half-width of the geometric noise (per value, and all
    ``kept`` at once), from the public noise law only. It holds before the threshold: a kept key whose
    true count is near τ tends to be published above it (keys below τ are the ones that fail it)."""
    noise = mechanism.noise_mechanism
    c = check.open_unit(confidence, "confidence")
    each = int(noise.release_plan(1).half_width(1.0 - c)) if kept else 0
    joint = int(noise.release_accuracy(c, kept)) if kept else None
    definition = (
        f"exact: each published count is within ±a of its key's true count with probability {c:g} "
        f"(the geometric noise, scale {noise.scale:.4g}, before the threshold τ = {mechanism.threshold}: "
        "a key whose true count is near τ is published only when its noise is high, so low published counts "
        "lean high)"
        + (f"; all {kept} at once within ±{joint} with probability {c:g}" if kept > 1 else "")
        + "; from the public noise law only"
    )
    return Accuracy(c, (each,) * kept, "exact", definition, joint_half_width=joint)


def release_keys(
    query: KeyCounts,
    df: pd.DataFrame | Source,
    *,
    epsilon: float,
    delta: float | None,
    confidence: float = 0.95,
    identity: str | None = None,
) -> Any:
    """Release ``query`` (``dpdash.release.release`` with the geometric mechanism calls this): every key
    found gets a noisy count from the exact sampler; the keys whose noisy count reaches τ are published,
    sorted. (ε, δ)-DP (``dpdash.mechanisms.key_threshold``)."""
    from dpdash.release_record import PieceRecord, Release, evaluate_for_release

    epsilon = check.epsilon(epsilon)
    mechanism = key_mechanism(query, epsilon, delta)
    evaluation, fingerprint, identity = evaluate_for_release(query, df, identity)
    keys = evaluation.keys or ()
    noisy, kept = mechanism.release(evaluation.values) if keys else (np.zeros(0, np.int64), np.zeros(0, bool))
    published = [int(v) for v in noisy[kept]]
    labels = tuple(key_label(k) for k, keep in zip(keys, kept, strict=True) if keep)
    dropped = tuple(k for k, keep in zip(keys, kept, strict=True) if not keep)
    note = (
        f"key selection: {len(keys)} keys found, {len(labels)} published (noisy count ≥ τ = "
        f"{mechanism.threshold}), {len(dropped)} not published (listed in dropped_keys)"
    )
    report = replace(evaluation.report, dropped_keys=dropped, notes=(*evaluation.report.notes, note))
    piece = PieceRecord(
        name="answer",
        mechanism=type(mechanism).__name__,
        parameters={
            "epsilon": epsilon,
            "delta": mechanism.delta,
            "max_groups": mechanism.max_groups,
            "max_rows_per_group": mechanism.max_rows_per_group,
        },
        epsilon=epsilon,
        delta=mechanism.delta,
        rho=None,
        sensitivity=float(mechanism.sensitivity),
        norm="l1",
        composition="the whole budget: ε for the noisy counts, δ for the keys one person alone could add",
        noisy_values=tuple(published),
    )
    facts = query.facts
    return Release(
        values=tuple(published),
        noisy_values=tuple(published),
        labels=labels,
        postprocessing=(),
        query=query.to_dict(),
        query_name=query.name,
        mechanism="Geometric",  # what release() takes; the piece names the thresholded mechanism it ran
        pieces=(piece,),
        epsilon=epsilon,
        delta=mechanism.delta,
        neighbours=facts.neighbours.value,
        unit_of_privacy=facts.describe(),
        guarantee=(
            f"(ε = {epsilon:g}, δ = {mechanism.delta:g})-differential privacy; {facts.describe()}; keys "
            f"published only when their noisy count reaches τ = {mechanism.threshold}"
        ),
        accuracy=key_accuracy(mechanism, len(labels), confidence),
        combination=None,
        dataset_fingerprint=fingerprint,
        dataset_identity=identity,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        true_values=tuple(int(v) for v in np.asarray(evaluation.values)[kept]),
        report=report,
    )


@dataclass(frozen=True, slots=True)
class KeyPreview:
    """What a key-count release would do, for the data owner (NOT PRIVATE: it lists the true keys).

    ``table``: one row per key found: its true count, its exact chance of being published
    (``KeyThreshold.keep_chance``) and, from one simulated release (numpy, never published), whether it
    was kept and its noisy count. ``expected_published``: Σ chances.
    """

    mechanism: KeyThreshold
    table: pd.DataFrame
    expected_published: float
    accuracy: Accuracy


def key_preview(
    query: KeyCounts,
    evaluation: Evaluation,
    *,
    epsilon: float,
    delta: float | None,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> KeyPreview:
    """A simulated preview of ``release_keys`` that spends nothing, from the query's true evaluation
    (``query.evaluate(df)`` or ``dpdash.engines.evaluate``; owner only)."""
    mechanism = key_mechanism(query, check.epsilon(epsilon), delta)
    keys: Sequence[Any] = evaluation.keys or ()
    counts = np.asarray(evaluation.values, dtype=np.int64)
    chance = mechanism.keep_chance(counts) if keys else np.zeros(0)
    if keys:
        noisy, kept = mechanism.simulate(counts, 1, rng=rng)
        noisy, kept = noisy[0], kept[0]
    else:
        noisy, kept = np.zeros(0, np.int64), np.zeros(0, bool)
    table = pd.DataFrame(
        {
            "key": [key_label(k) for k in keys],
            "true count": counts,
            "chance published": chance,
            "simulated: published": kept,
            "simulated: noisy count": np.where(kept, noisy, pd.NA),
        }
    )
    expected = float(chance.sum())
    accuracy = key_accuracy(mechanism, max(1, round(expected)), confidence)
    return KeyPreview(mechanism, table, expected, accuracy)
