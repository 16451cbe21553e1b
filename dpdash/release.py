"""One call from a query spec and a table to a value that may be published: ``release(...)``.

``release(query, mechanism, df, epsilon=...)`` checks that the mechanism suits the query, computes
the true answer, calibrates the mechanism to the query's exact sensitivity under its public facts,
draws release-grade noise (exact samplers on OS randomness), applies the post-processing asked for
(explicitly, and recorded), and returns a :class:`Release`: a frozen value holding everything a
ledger entry needs (query spec, mechanism and parameters of every piece, ε and δ spent, accuracy at
the chosen confidence and its definition, a SHA-256 fingerprint of the table, the time) as plain
JSON data. The true answer and the data owner's report travel with it but apart: they are never
serialised unless asked for, and never compared.

>>> import pandas as pd
>>> from dpdash.mechanisms import Geometric
>>> from dpdash.queries import Count
>>> df = pd.DataFrame({"age": [34, 71, 68, 25]})
>>> r = release(Count(), Geometric, df, epsilon=1.0, postprocess=["clamp_nonnegative"])
>>> r.epsilon, r.delta, r.accuracy.half_widths, r.accuracy.method
(1.0, 0.0, (3,), 'exact')
>>> Release.from_json(r.to_json()) == r, "true_values" in r.to_dict()
(True, False)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.calibration import (
    MECHANISMS,
    OPTIONS,
    CalibratedPiece,
    calibrate,
    check_compatible,
    check_options,
    epsilon_share,
    mechanism_class,
    parameters_of,
    plain,
    rho_of,
)
from dpdash.engines.sources import Source
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.mechanisms import (
    DiscreteGaussian,
    Gaussian,
    Geometric,
    RandomizedResponse,
)
from dpdash.postprocessing import (
    POSTPROCESSING,
    apply_steps,
    checked_steps,
    describe_postprocessing,
    postprocess_is_integer,
    postprocess_values,
    postprocessing_step,
)
from dpdash.published import Accuracy, numeric_accuracy, selection_accuracy
from dpdash.queries import (
    CompositeQuery,
    Histogram,
    KeyCounts,
    Query,
    SelectionQuery,
)
from dpdash.queries.histogram import OTHER, cell_codes
from dpdash.release_record import FORMAT, PieceRecord, Release, dataset_fingerprint, evaluate_for_release

__all__ = [
    "FORMAT",
    "MECHANISMS",
    "OPTIONS",
    "POSTPROCESSING",
    "Accuracy",
    "CalibratedPiece",
    "PieceRecord",
    "Release",
    "calibrate",
    "check_compatible",
    "dataset_fingerprint",
    "describe_postprocessing",
    "mechanism_class",
    "postprocess_is_integer",
    "postprocess_values",
    "postprocessing_step",
    "release",
]


# ---- the value --------------------------------------------------------------------------------------


# ---- the dataset fingerprint -------------------------------------------------------------------------


# ---- release ------------------------------------------------------------------------------------------


def release(
    query: Query,
    mechanism: type | str,
    df: pd.DataFrame | Source,
    *,
    epsilon: float,
    delta: float | None = None,
    confidence: float = 0.95,
    postprocess: Sequence[str] = (),
    options: Mapping[str, Any] | None = None,
    identity: str | None = None,
) -> Release:
    """Release a query's answer on ``df`` with a mechanism calibrated to its exact sensitivity.

    Args:
        query: a spec from ``dpdash.queries`` (its ``facts`` fix the sensitivity).
        mechanism: a mechanism class (``Laplace``, ``Gaussian``, ``Geometric``, ``DiscreteGaussian``,
            ``Staircase`` for numeric queries; ``ExponentialMechanism``, ``PermuteAndFlip``,
            ``ReportNoisyMax`` for selection queries; ``RandomizedResponse`` for a histogram under
            substitution) or its name in ``MECHANISMS``.
        df: the table: a DataFrame, or a ``dpdash.engines.Source`` (a table where it lives: Parquet, a
            DuckDB file, PostgreSQL, Spark), whose true answer is computed in its engine.
        epsilon: the ε to spend (split over the pieces of a mean or variance by the query's split,
            and equally over several quantiles).
        delta: the δ to spend, for the Gaussian mechanisms only (split like ε).
        confidence: the confidence of the stated accuracy.
        postprocess: steps from ``POSTPROCESSING`` (``"name"`` or ``"name:N"`` for the rounding steps),
            applied in order and recorded as given.
        options: further mechanism arguments that keep the calibration: only those in ``OPTIONS``
            (``{"calibration": "classic"}`` for Gaussian, ``{"gamma": 0.2}`` for Staircase); ε, δ and
            the sensitivity are refused there.
        identity: the dataset identity the budget is kept under (``dpdash.ledger.fingerprint`` of
            the table as loaded, before any type changes; a source's ``fingerprint()``); computed from
            ``df`` when None.

    How the budget is used. A numeric query gets the mechanism with ε (and δ) and the sensitivity in
    the mechanism's norm (ℓ1 for Laplace and geometric, ℓ2 for Gaussian). Mechanisms whose guarantee
    is per coordinate (discrete Gaussian, staircase) are calibrated to the per-coordinate sensitivity
    at ε/m (and δ/m) when one person can change m > 1 coordinates (basic composition).

    Raises:
        ParameterError: a mechanism that does not suit the query (an integer mechanism for a query with
            non-integer answers, a selection mechanism for a numeric query, ...), a query whose
            sensitivity is 0, bad data (see the query), bad parameters, a post-processing step that
            does not apply.
        ParameterTypeError: arguments of the wrong type.
    """
    if not isinstance(query, Query):
        raise ParameterTypeError(
            f"query must be a query spec from dpdash.queries, got {type(query).__name__}"
        )
    cls = mechanism_class(mechanism)
    if isinstance(query, KeyCounts):
        return _release_key_counts(query, cls, df, epsilon, delta, confidence, postprocess, options, identity)
    epsilon = check.epsilon(epsilon)
    confidence = check.open_unit(confidence, "confidence")
    steps = checked_steps(postprocess, query)
    extra = check_options(cls, options)
    needs_delta = cls in (Gaussian, DiscreteGaussian)
    if needs_delta:
        if delta is None:
            raise ParameterError(f"delta is required for the {cls.__name__} mechanism, got delta=None")
        delta = check.open_unit(delta, "delta")
    elif delta not in (None, 0, 0.0):
        raise ParameterError(
            f"delta must not be given for the {cls.__name__} mechanism, which is pure ε-DP, "
            f"got delta={delta!r}"
        )
    else:
        delta = 0.0
    check_compatible(query, cls)

    if isinstance(df, Source) and cls is RandomizedResponse:
        raise ParameterError(
            "randomized response randomizes each row, which needs the rows in memory; a connected "
            f"table ({df.description}) releases aggregates only: use Laplace, Gaussian or Geometric"
        )
    evaluation, fingerprint, identity = evaluate_for_release(query, df, identity)
    if isinstance(query, SelectionQuery):
        pieces, noisy, accuracy = _release_selection(
            query, cls, evaluation.utilities, epsilon, confidence, extra
        )
        noisy_values = tuple(noisy)
        values = noisy_values
    elif cls is RandomizedResponse:
        assert isinstance(query, Histogram)
        pieces, noisy_values, accuracy, true = _release_randomized_response(query, df, epsilon, confidence)
        note = f"randomized response: missing values are reported as {OTHER!r}, and counted there"
        report = dataclasses.replace(evaluation.report, notes=(*evaluation.report.notes, note))
        evaluation = dataclasses.replace(evaluation, values=true, report=report)
        values = apply_steps(steps, query, noisy_values)
    else:
        pieces, noisy_values, accuracy = _release_numeric(
            query, cls, df, evaluation, epsilon, delta, confidence, extra, steps
        )
        values = apply_steps(steps, query, noisy_values)

    facts = query.facts
    return Release(
        values=tuple(plain(v) for v in values),
        noisy_values=tuple(plain(v) for v in noisy_values),
        labels=_labels(query),
        postprocessing=tuple(steps),
        query=query.to_dict(),
        query_name=query.name,
        mechanism=cls.__name__,
        pieces=tuple(pieces),
        epsilon=epsilon,
        delta=float(delta),
        neighbours=facts.neighbours.value,
        unit_of_privacy=facts.describe(),
        guarantee=_guarantee(cls, epsilon, float(delta), facts),
        accuracy=accuracy,
        combination=query.combination if isinstance(query, CompositeQuery) else None,
        dataset_fingerprint=fingerprint,
        dataset_identity=identity,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        true_values=tuple(plain(v) for v in np.asarray(evaluation.values).ravel()),
        report=evaluation.report,
    )


def _release_key_counts(
    query: KeyCounts,
    cls: type,
    df: pd.DataFrame | Source,
    epsilon: float,
    delta: float | None,
    confidence: float,
    postprocess: Sequence[str],
    options: Mapping[str, Any] | None,
    identity: str | None,
) -> Release:
    """Counts per key that is not public: geometric noise and a threshold (``dpdash.key_release``)."""
    if cls is not Geometric:
        raise ParameterError(
            f"{query.name}: keys that are not public are released with geometric noise and a threshold "
            f"(mechanism='geometric', with delta), not {cls.__name__}"
        )
    if postprocess or options:
        raise ParameterError(f"{query.name} takes no post-processing and no options: its counts are integers")
    from dpdash.key_release import release_keys

    return release_keys(query, df, epsilon=epsilon, delta=delta, confidence=confidence, identity=identity)


# ---- checks -------------------------------------------------------------------------------------------


# ---- numeric queries -------------------------------------------------------------------------------------


def _labels(query: Query) -> tuple[str, ...]:
    if isinstance(query, SelectionQuery):
        return query.selections
    return query.labels  # type: ignore[attr-defined]


def _release_numeric(
    query: Query,
    cls: type,
    df: pd.DataFrame | Source,
    evaluation: Any,
    epsilon: float,
    delta: float,
    confidence: float,
    options: dict[str, Any],
    steps: Sequence[str] = (),
) -> tuple[list[PieceRecord], tuple[Any, ...], Accuracy]:
    parts = calibrate(query, cls, df, epsilon=epsilon, delta=delta, options=options)
    true_parts = evaluation.pieces if isinstance(query, CompositeQuery) else {"answer": evaluation.values}
    records, noisy = [], {}
    for part in parts:
        name, piece, share, m, mech = part.name, part.query, part.share, part.changed, part.mechanism
        norm = cls.sensitivity_norm
        sensitivity = piece.sensitivity(norm)
        values = np.asarray(true_parts[name])
        drawn = mech.release(values)
        noisy[name] = drawn
        composition = f"{share:g} of the budget" if len(parts) > 1 else "the whole budget"
        if m > 1:
            composition += f"; per coordinate ε/{m} (one person changes up to {m} coordinates)"
        records.append(
            PieceRecord(
                name=name,
                mechanism=cls.__name__,
                parameters=parameters_of(mech),
                epsilon=epsilon * share,
                delta=delta * share,
                rho=rho_of(mech, m),
                sensitivity=float(sensitivity),
                norm=norm,
                composition=composition,
                noisy_values=tuple(plain(v) for v in np.asarray(drawn).ravel()),
            )
        )
    # The ± of the published values, from public things only: the noise laws, and for composite or
    # post-processed values the released pieces (dpdash.published; the preview states the same rule).
    accuracy, _, _ = numeric_accuracy(query, parts, noisy, confidence=confidence, postprocess=steps)
    if isinstance(query, CompositeQuery):
        return records, tuple(np.atleast_1d(query.combine(noisy)).ravel()), accuracy
    return records, tuple(np.asarray(noisy["answer"]).ravel()), accuracy


# ---- selection queries ----------------------------------------------------------------------------------


def _release_selection(
    query: SelectionQuery,
    cls: type,
    utilities: Any,
    epsilon: float,
    confidence: float,
    options: dict[str, Any],
) -> tuple[list[PieceRecord], list[Any], Accuracy]:
    count = len(query.selections)
    records, chosen, mechanisms = [], [], []
    for label, u, sensitivity in zip(query.selections, utilities, query.utility_sensitivities, strict=True):
        piece_epsilon = epsilon_share(epsilon, 1 / count, f"the selection {label!r}")
        mech = cls(**options, epsilon=piece_epsilon, sensitivity=sensitivity, monotone=query.monotone)
        index = mech.release([int(x) for x in u])
        chosen.append(query.candidates[index])
        mechanisms.append(mech)
        records.append(
            PieceRecord(
                name=label,
                mechanism=cls.__name__,
                parameters=parameters_of(mech),
                epsilon=epsilon / count,
                delta=0.0,
                rho=float(mech.rho),
                sensitivity=float(sensitivity),
                norm="utility",
                composition="the whole budget"
                if count == 1
                else f"1/{count} of the budget (one per selection)",
                noisy_values=(index,),
            )
        )
    # In the column's units, from the exact chances of each candidate (dpdash.published), as previewed.
    accuracy, _ = selection_accuracy(query, mechanisms, utilities, confidence)
    return records, chosen, accuracy


# ---- randomized response --------------------------------------------------------------------------------


def _release_randomized_response(
    query: Histogram, df: pd.DataFrame, epsilon: float, confidence: float
) -> tuple[list[PieceRecord], tuple[float, ...], Accuracy, np.ndarray]:
    kept, _ = query.facts.apply(df, query.required_columns())
    cells = cell_codes(kept[query.column], categories=query.categories, bins=query.bins, outside="other")
    k = len(query.labels)
    codes = np.where(cells.codes < 0, k - 1, cells.codes)  # missing values report as "(other)"
    c = query.facts.rows_per_person
    mech = RandomizedResponse(epsilon=epsilon_share(epsilon, 1 / c, "each row's report"), categories=k)
    reports = mech.release(codes)
    n = int(codes.size)
    report_counts = np.bincount(reports, minlength=k)
    estimate = n * mech.estimate_from_counts(report_counts)
    each = n * mech.accuracy(n=n, confidence=confidence)
    half = n * mech.accuracy(n=n, confidence=1.0 - (1.0 - confidence) / k)
    record = PieceRecord(
        name="answer",
        mechanism="RandomizedResponse",
        parameters=mech.parameters(),
        epsilon=epsilon,
        delta=0.0,
        rho=epsilon**2 / 2.0,
        sensitivity=float(c),
        norm="local",
        composition=f"each of a person's ≤ {c} rows reported at ε/{c} (ε-local DP per person)",
        noisy_values=tuple(int(x) for x in report_counts),
    )
    accuracy = Accuracy(
        confidence=confidence,
        half_widths=(float(each),) * k,
        method="exact per category + union bound",
        definition=(
            f"with probability ≥ {confidence:g}, each estimated count n·π̂ is within ±a of its true count, "
            f"and all {k} at once within ±{float(half):.6g} (missing values count as {OTHER!r}); a = n × the "
            f"exact Binomial half-width of one category at confidence {confidence:g} (all at once: at "
            f"1 − (1 − {confidence:g})/{k}, a union bound over the categories), the largest over the shares; "
            "conservative for a fixed table (Hoeffding 1956)"
        ),
        joint_half_width=float(half),
    )
    true = np.bincount(codes, minlength=k).astype(np.int64)
    return [record], tuple(float(x) for x in estimate), accuracy, true


# ---- post-processing -----------------------------------------------------------------------------------


def _guarantee(cls: type, epsilon: float, delta: float, facts: Any) -> str:
    if delta > 0:
        privacy = f"(ε = {epsilon:g}, δ = {delta:g})-differential privacy"
    else:
        privacy = f"(ε = {epsilon:g}, 0)-differential privacy (pure)"
    if cls is RandomizedResponse:
        privacy += ", by randomized response (also ε-local DP for each person)"
    return f"{privacy}; {facts.describe()}"
