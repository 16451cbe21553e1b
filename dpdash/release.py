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
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.engines.sources import Source, SourceChangedError
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.mechanisms import (
    DiscreteGaussian,
    ExponentialMechanism,
    Gaussian,
    Geometric,
    KeyThreshold,
    Laplace,
    NoiseMechanism,
    PermuteAndFlip,
    RandomizedResponse,
    ReportNoisyMax,
    SelectionMechanism,
    Staircase,
    VectorMechanism,
    Wishart,
)
from dpdash.published import Accuracy, numeric_accuracy, selection_accuracy
from dpdash.queries import (
    CompositeQuery,
    DataReport,
    GroupByMean,
    Histogram,
    KeyCounts,
    Mean,
    NumericQuery,
    Query,
    SecondMoment,
    SelectionQuery,
    Variance,
    query_from_dict,
)
from dpdash.queries.histogram import OTHER, cell_codes

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

#: The version of the serialised form.
FORMAT = 1

#: Mechanisms ``release`` accepts, by name (a class may be passed directly too).
MECHANISMS: dict[str, type] = {
    "laplace": Laplace,
    "gaussian": Gaussian,
    "geometric": Geometric,
    "discrete_gaussian": DiscreteGaussian,
    "staircase": Staircase,
    "exponential": ExponentialMechanism,
    "permute_and_flip": PermuteAndFlip,
    "report_noisy_max": ReportNoisyMax,
    "randomized_response": RandomizedResponse,
}
_BY_CLASS_NAME = {cls.__name__: cls for cls in (*MECHANISMS.values(), KeyThreshold)}

#: The mechanism arguments ``options`` may set, per mechanism: choices that keep the stated guarantee.
#: Everything that fixes the calibration (ε, δ, the sensitivity, monotone utilities, the number of
#: categories) comes from ``release``'s own arguments and the query's facts, never from ``options``.
OPTIONS: dict[type, tuple[str, ...]] = {
    Laplace: (),
    Gaussian: ("calibration",),
    Geometric: (),
    DiscreteGaussian: (),
    Staircase: ("gamma",),
    ExponentialMechanism: (),
    PermuteAndFlip: (),
    ReportNoisyMax: (),
    RandomizedResponse: (),
}

#: Post-processing steps, by name, and what each does. Post-processing costs no privacy. A step with a
#: parameter is written ``"name:parameter"`` (``"round_decimals:2"``, ``"round_significant:3"``) and
#: recorded so. ``Release.accuracy`` is the ± of the published (post-processed) values, as
#: ``dpdash.published`` defines it (and the preview states it).
POSTPROCESSING: dict[str, str] = {
    "clamp_nonnegative": "every value v ↦ max(v, 0) (counts and sums of non-negative values)",
    "round": "every value rounded to the nearest integer (ties to even)",
    "round_decimals": "every value rounded to N decimal places (ties to even; N < 0 rounds to tens, "
    "hundreds, …); written round_decimals:N",
    "round_significant": "every value rounded to N significant digits (ties to even); written "
    "round_significant:N",
    "clamp_to_bounds": "a mean into [L, U]; a variance into [0, ((U − L)/2)²]",
    "project_psd": "a second-moment matrix to the nearest positive semidefinite one (eigenvalues < 0 → 0)",
}
#: Steps that take a parameter, with its allowed range (inclusive).
_PARAMETERS: dict[str, tuple[int, int]] = {"round_decimals": (-9, 12), "round_significant": (1, 15)}


def postprocessing_step(name: str, parameter: int | None = None) -> str:
    """The recorded form of a step: ``"round"``, ``"round_decimals:2"`` (validated)."""
    step = name if parameter is None else f"{name}:{parameter}"
    _parse_step(step)
    return step


def describe_postprocessing(step: str) -> str:
    """One step in words, its parameter filled in: ``"round_decimals:2"`` → "every value rounded to 2
    decimal places (ties to even)"."""
    name, parameter = _parse_step(step)
    if name == "round_decimals":
        if parameter is not None and parameter < 0:
            return f"every value rounded to the nearest multiple of {10 ** (-parameter):g} (ties to even)"
        return f"every value rounded to {parameter} decimal place{'s' * (parameter != 1)} (ties to even)"
    if name == "round_significant":
        return f"every value rounded to {parameter} significant digit{'s' * (parameter != 1)} (ties to even)"
    return POSTPROCESSING[name]


def _parse_step(step: object) -> tuple[str, int | None]:
    if not isinstance(step, str):
        raise ParameterTypeError(f"a postprocess step must be a string, got {step!r}")
    name, _, text = step.partition(":")
    if name not in POSTPROCESSING:
        raise ParameterError(f"postprocess steps must be among {sorted(POSTPROCESSING)}, got {step!r}")
    if name not in _PARAMETERS:
        if text:
            raise ParameterError(f"postprocess step {name!r} takes no parameter, got {step!r}")
        return name, None
    low, high = _PARAMETERS[name]
    try:
        parameter = int(text)
    except ValueError:
        parameter = None
    if parameter is None or str(parameter) != text.strip() or not low <= parameter <= high:
        raise ParameterError(
            f"postprocess step {name!r} needs an integer N from {low} to {high}, written '{name}:N', "
            f"got {step!r}"
        )
    return name, parameter


# ---- the value --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PieceRecord:
    """One mechanism run of a release: which mechanism, its parameters, what it cost, what it drew.

    Attributes:
        name: the piece (``"answer"``; ``"sum"``/``"count"``/``"squares"`` for means and variances;
            one per quantile level).
        mechanism: the mechanism's class name (``"Laplace"``, ``"ExponentialMechanism"``, ...).
        parameters: its constructor arguments, e.g. ``{"epsilon": 0.5, "sensitivity": 1.0}``.
        epsilon, delta: what this piece spent (the pieces add up to the release's ε and δ).
        rho: ρ of the zCDP guarantee this piece implies (``None`` when it has none).
        sensitivity: the sensitivity the mechanism is calibrated to, in ``norm`` (``"l1"``, ``"l2"``,
            ``"coordinate"``, ``"utility"`` or ``"local"``).
        composition: how the piece's cost is made up, in words.
        noisy_values: what the mechanism released (indices for a selection).
    """

    name: str
    mechanism: str
    parameters: dict[str, Any]
    epsilon: float
    delta: float
    rho: float | None
    sensitivity: float
    norm: str
    composition: str
    noisy_values: tuple[Any, ...]

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["noisy_values"] = list(self.noisy_values)
        out["parameters"] = dict(self.parameters)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PieceRecord:
        values = dict(data)
        values["noisy_values"] = tuple(values["noisy_values"])
        values["parameters"] = dict(values["parameters"])
        return cls(**values)

    def build(self) -> Any:
        """The mechanism instance this piece ran (e.g. to record it as a privacy event)."""
        cls = _BY_CLASS_NAME.get(self.mechanism)
        if cls is None:
            raise ParameterError(f"unknown mechanism {self.mechanism!r} in a release record")
        return cls(**self.parameters)


@dataclass(frozen=True, slots=True, kw_only=True)
class Release:
    """A published answer: noisy values, how they were made, what they cost, how accurate they are.

    Publishable fields (serialised by ``to_dict``/``to_json``): ``values`` (after post-processing),
    ``noisy_values`` (before it), ``labels``, ``postprocessing`` (the steps applied, in order),
    ``query`` (the spec, ``query_from_dict`` rebuilds it), ``mechanism``, ``pieces``, ``epsilon`` and
    ``delta`` (the total spent), ``neighbours``, ``unit_of_privacy``, ``guarantee``, ``accuracy``,
    ``combination`` (composite queries), ``dataset_fingerprint`` (the exact table queried),
    ``dataset_identity`` (the budget's key: ``dpdash.ledger.fingerprint`` of the table as loaded),
    ``created_at`` (ISO 8601, UTC).

    NOT PRIVATE, kept apart (not compared, not serialised unless ``include_private=True``):
    ``true_values`` and ``report``.
    """

    values: tuple[Any, ...]
    noisy_values: tuple[Any, ...]
    labels: tuple[str, ...]
    postprocessing: tuple[str, ...]
    query: dict[str, Any]
    query_name: str
    mechanism: str
    pieces: tuple[PieceRecord, ...]
    epsilon: float
    delta: float
    neighbours: str
    unit_of_privacy: str
    guarantee: str
    accuracy: Accuracy
    combination: str | None
    dataset_fingerprint: str
    created_at: str
    dataset_identity: str | None = None
    true_values: tuple[Any, ...] | None = field(default=None, compare=False, repr=False)
    report: DataReport | None = field(default=None, compare=False, repr=False)

    @property
    def spec(self) -> Query:
        """The query spec, rebuilt."""
        return query_from_dict(self.query)

    def as_series(self) -> pd.Series:
        """The published values, labelled."""
        return pd.Series(list(self.values), index=list(self.labels), name=self.query_name)

    def to_dict(self, include_private: bool = False) -> dict[str, Any]:
        """Plain JSON data. ``include_private=True`` adds the true values and the report (NOT PRIVATE:
        for the data owner's own records only)."""
        out: dict[str, Any] = {
            "format": FORMAT,
            "values": list(self.values),
            "noisy_values": list(self.noisy_values),
            "labels": list(self.labels),
            "postprocessing": list(self.postprocessing),
            "query": self.query,
            "query_name": self.query_name,
            "mechanism": self.mechanism,
            "pieces": [p.to_dict() for p in self.pieces],
            "epsilon": self.epsilon,
            "delta": self.delta,
            "neighbours": self.neighbours,
            "unit_of_privacy": self.unit_of_privacy,
            "guarantee": self.guarantee,
            "accuracy": self.accuracy.to_dict(),
            "combination": self.combination,
            "dataset_fingerprint": self.dataset_fingerprint,
            "dataset_identity": self.dataset_identity,
            "created_at": self.created_at,
        }
        if include_private:
            out["private"] = {
                "label": "NOT PRIVATE: true values and data report, for the data owner only",
                "true_values": None if self.true_values is None else list(self.true_values),
                "report": None if self.report is None else self.report.to_dict(),
            }
        return out

    def to_json(self, include_private: bool = False) -> str:
        """``to_dict`` as JSON text (sorted keys)."""
        return json.dumps(self.to_dict(include_private), sort_keys=True, ensure_ascii=False, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Release:
        """Rebuild a release from ``to_dict`` (private parts, if present, are not read back)."""
        if not isinstance(data, Mapping):
            raise ParameterTypeError(f"a release must be a dict, got {type(data).__name__}")
        if data.get("format") != FORMAT:
            raise ParameterError(
                f"unsupported release format {data.get('format')!r}; this dpdash reads {FORMAT}"
            )
        try:
            return cls(
                values=tuple(data["values"]),
                noisy_values=tuple(data["noisy_values"]),
                labels=tuple(data["labels"]),
                postprocessing=tuple(data["postprocessing"]),
                query=dict(data["query"]),
                query_name=str(data["query_name"]),
                mechanism=str(data["mechanism"]),
                pieces=tuple(PieceRecord.from_dict(p) for p in data["pieces"]),
                epsilon=float(data["epsilon"]),
                delta=float(data["delta"]),
                neighbours=str(data["neighbours"]),
                unit_of_privacy=str(data["unit_of_privacy"]),
                guarantee=str(data["guarantee"]),
                accuracy=Accuracy.from_dict(data["accuracy"]),
                combination=data.get("combination"),
                dataset_fingerprint=str(data["dataset_fingerprint"]),
                created_at=str(data["created_at"]),
                dataset_identity=None
                if data.get("dataset_identity") is None
                else str(data["dataset_identity"]),
            )
        except KeyError as missing:
            raise ParameterError(f"a release record lacks the field {missing}") from None

    @classmethod
    def from_json(cls, text: str) -> Release:
        return cls.from_dict(json.loads(text))


# ---- the dataset fingerprint -------------------------------------------------------------------------


def dataset_fingerprint(df: pd.DataFrame) -> str:
    """``"sha256:<hex>"`` of a canonical serialisation of the table.

    Covered: the number of rows, and for each column in order of its name: the name, the dtype and the
    values in row order (numbers as little-endian 64-bit words with one NaN pattern; other values as
    type-tagged, length-prefixed UTF-8 text; missing values as one marker). Not covered: the index and
    the order of the columns, which no query reads. Two tables with the same fingerprint give every
    query the same true answer.
    """
    if not isinstance(df, pd.DataFrame):
        raise ParameterTypeError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    digest = hashlib.sha256()
    digest.update(f"dpdash-table-v1\0{len(df)}\0{df.shape[1]}\0".encode())
    order = sorted(range(df.shape[1]), key=lambda i: (str(df.columns[i]), i))
    for i in order:
        column = df.iloc[:, i]
        digest.update(f"column\0{df.columns[i]!s}\0{column.dtype!s}\0".encode())
        digest.update(_column_bytes(column))
    return "sha256:" + digest.hexdigest()


def _column_bytes(column: pd.Series) -> bytes:
    dtype = column.dtype
    if isinstance(dtype, np.dtype):
        if dtype.kind == "b":
            return column.to_numpy().astype(np.uint8).tobytes()
        if dtype.kind == "i":
            return column.to_numpy().astype("<i8").tobytes()
        if dtype.kind == "u":
            return column.to_numpy().astype("<u8").tobytes()
        if dtype.kind == "f":
            values = column.to_numpy().astype("<f8")
            values[np.isnan(values)] = np.nan  # one NaN bit pattern
            return values.tobytes()
        if dtype.kind in "mM":
            return column.to_numpy().view("<i8").tobytes()
    missing = column.isna().to_numpy()
    parts = []
    for value, absent in zip(column.to_numpy(dtype=object), missing, strict=True):
        if absent:
            parts.append("\0NA")
        else:
            text = f"{type(value).__name__}:{value!r}"
            parts.append(f"{len(text)}:{text}")
    return "\x1f".join(parts).encode("utf-8", "surrogatepass")


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
    steps = _postprocess_steps(postprocess, query)
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
        values = _apply(steps, query, noisy_values)
    else:
        pieces, noisy_values, accuracy = _release_numeric(
            query, cls, df, evaluation, epsilon, delta, confidence, extra, steps
        )
        values = _apply(steps, query, noisy_values)

    facts = query.facts
    return Release(
        values=tuple(_plain(v) for v in values),
        noisy_values=tuple(_plain(v) for v in noisy_values),
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
        true_values=tuple(_plain(v) for v in np.asarray(evaluation.values).ravel()),
        report=evaluation.report,
    )


def evaluate_for_release(
    query: Query, df: pd.DataFrame | Source, identity: str | None
) -> tuple[Any, str, str]:
    """(the query's evaluation, the exact table's fingerprint, the budget's identity) of a release on a
    DataFrame or in a source's engine; ``identity`` defaults to the source's fingerprint, or the content
    fingerprint of the DataFrame.

    A source is checked before and after its answer is computed: its files as they were when it was
    opened (``Source.check_unchanged``: a ``stat`` per file), and its fingerprint, the one this release
    states and spends under, the ``identity`` given. A rewritten file is other data, whose answer must not
    spend the budget of what was connected: ``SourceChangedError``, before anything is drawn."""
    if isinstance(df, Source):
        from dpdash.engines.evaluate import evaluate as evaluate_in_source

        df.check_unchanged()
        evaluation = evaluate_in_source(query, df)
        fingerprint = df.fingerprint()
        df.check_unchanged()
        if identity is not None and fingerprint != identity:
            raise SourceChangedError(
                f"{df.description} changed since it was connected (its files, columns or row count: it is "
                f"now {fingerprint}, not {identity}): connect it again on the Data page; nothing was spent"
            )
        identity = fingerprint if identity is None else identity
    else:
        evaluation = query.evaluate(df)
        fingerprint = dataset_fingerprint(df)
    if identity is None:
        from dpdash.identity import content_fingerprint

        identity = content_fingerprint(df)
    elif not isinstance(identity, str) or not identity:
        raise ParameterTypeError(f"identity must be a fingerprint string, got {identity!r}")
    return evaluation, fingerprint, identity


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


def mechanism_class(mechanism: object) -> type:
    """The mechanism class ``release`` uses for a class or a name in ``MECHANISMS`` (readable errors
    for the Wishart and vector mechanisms, instances, and unknown names)."""
    if isinstance(mechanism, str):
        key = mechanism.strip().lower().replace("-", "_").replace(" ", "_")
        if key not in MECHANISMS:
            raise ParameterError(
                f"mechanism must be one of {sorted(MECHANISMS)}, got mechanism={mechanism!r}"
            )
        return MECHANISMS[key]
    if isinstance(mechanism, type):
        if mechanism is Wishart:
            raise ParameterError(
                "the Wishart mechanism is not differentially private as published (Jiang et al. 2016: "
                "its true "
                "guarantee is (0, 1 − e^(−ε/3))-DP, see dpdash.mechanisms.wishart), so release() refuses it; "
                "release SecondMoment with the Gaussian mechanism and postprocess=['project_psd'] for a "
                "private positive semidefinite matrix"
            )
        if mechanism is VectorMechanism:
            raise ParameterError(
                "pass Laplace or Gaussian: release() calibrates them to the query's ℓ1/ℓ2 sensitivity, "
                "which is the vector mechanism"
            )
        if mechanism in MECHANISMS.values():
            return mechanism
    if isinstance(mechanism, NoiseMechanism | SelectionMechanism | RandomizedResponse):
        raise ParameterTypeError(
            f"mechanism must be a mechanism class such as {type(mechanism).__name__}, not an instance: "
            "release() calibrates the noise to the query's sensitivity (give epsilon=... instead)"
        )
    raise ParameterTypeError(f"mechanism must be a mechanism class or name, got mechanism={mechanism!r}")


def check_options(cls: type, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``options`` as a dict, refusing any name not in ``OPTIONS[cls]``: ε, δ, the sensitivity and the
    other arguments that fix the calibration come from ``release``'s arguments and the query only."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ParameterTypeError(f"options must be a dict of mechanism arguments, got options={options!r}")
    allowed = OPTIONS.get(cls, ())
    refused = sorted(str(name) for name in options if name not in allowed)
    if refused:
        what = f"only {', '.join(allowed)}" if allowed else "none"
        raise ParameterError(
            f"options {refused} are not allowed for {cls.__name__}: the calibration (epsilon, delta, "
            f"sensitivity, ...) comes from release's own arguments and the query's facts; allowed options "
            f"for {cls.__name__}: {what}"
        )
    return dict(options)


def check_compatible(query: Query, cls: type) -> None:
    """Refuse, with the reason and what to use instead, a mechanism class that does not suit ``query``."""
    label = query.name
    if isinstance(query, SelectionQuery):
        if not issubclass(cls, SelectionMechanism):
            raise ParameterError(
                f"{label} selects one of its candidates: use ExponentialMechanism, PermuteAndFlip or "
                f"ReportNoisyMax, not {cls.__name__}"
            )
        return
    if issubclass(cls, SelectionMechanism):
        raise ParameterError(
            f"{cls.__name__} selects among candidates; {label} is a numeric query: use Laplace, Gaussian, "
            "Geometric, DiscreteGaussian or Staircase"
        )
    if cls is RandomizedResponse:
        if not isinstance(query, Histogram):
            raise ParameterError(
                f"RandomizedResponse releases a histogram (one category per row), not {label}"
            )
        if not query.facts.substitute:
            raise ParameterError(
                "RandomizedResponse reveals the number of respondents, which is private under add/remove "
                "neighbours: declare Facts(neighbours='substitute') (the number of rows is then public), or "
                "release the histogram with Laplace or Geometric noise"
            )
        if query.outside != "other":
            raise ParameterError(
                "RandomizedResponse needs a category for every row: use outside='other' (missing values are "
                "reported as '(other)' too)"
            )


def _postprocess_steps(steps: Sequence[str], query: Query) -> list[str]:
    if isinstance(steps, str):
        steps = [steps]
    out = []
    for step in steps:
        name, _ = _parse_step(step)
        if isinstance(query, SelectionQuery):
            raise ParameterError(
                f"a selection ({query.name}) has no numeric values to post-process, got {step!r}"
            )
        if name == "clamp_to_bounds" and not isinstance(query, Mean | Variance | GroupByMean):
            raise ParameterError(f"clamp_to_bounds applies to means and variances, not to {query.name}")
        if name == "project_psd" and not isinstance(query, SecondMoment):
            raise ParameterError(f"project_psd applies to a SecondMoment, not to {query.name}")
        out.append(step)
    return out


# ---- numeric queries -------------------------------------------------------------------------------------


def _labels(query: Query) -> tuple[str, ...]:
    if isinstance(query, SelectionQuery):
        return query.selections
    return query.labels  # type: ignore[attr-defined]


def _build(cls: type, epsilon: float, delta: float, sensitivity: float, options: dict[str, Any]) -> Any:
    arguments: dict[str, Any] = {**options, "epsilon": epsilon, "sensitivity": sensitivity}
    if cls in (Gaussian, DiscreteGaussian):
        arguments["delta"] = delta
    return cls(**arguments)


def _piece_epsilon(epsilon: float, fraction: float, what: str) -> float:
    """ε·fraction for one piece of a release, refused with the reason when below the supported range."""
    piece = epsilon * fraction
    if piece < check.EPSILON_MIN:
        raise ParameterError(
            f"{what} gets epsilon={piece:.3g} ({fraction:.3g} of epsilon={epsilon:g}), below the smallest "
            f"supported epsilon {check.EPSILON_MIN:g}; give a larger epsilon"
        )
    return piece


@dataclass(frozen=True, slots=True)
class CalibratedPiece:
    """One noisy piece of a numeric query, calibrated as ``release`` will calibrate it.

    ``mechanism`` runs at ε·share/changed (and δ likewise) with the piece's sensitivity in the
    mechanism's norm; ``changed`` > 1 only for per-coordinate mechanisms when one person can change
    several coordinates (basic composition over them).
    """

    name: str
    query: NumericQuery
    share: float
    changed: int
    mechanism: NoiseMechanism


def calibrate(
    query: Query,
    mechanism: type | str,
    df: pd.DataFrame | Source,
    *,
    epsilon: float,
    delta: float = 0.0,
    options: Mapping[str, Any] | None = None,
) -> list[CalibratedPiece]:
    """The mechanisms ``release`` would use for a numeric (or composite) query, without drawing noise:
    what a preview shows. Raises the same readable errors as ``release`` for unsuitable combinations.
    Only the column types of ``df`` are read (a source's schema), never its values."""
    cls = mechanism_class(mechanism)
    if isinstance(df, Source):
        df = df.empty_frame()
    check_compatible(query, cls)
    extra = check_options(cls, options)
    epsilon = check.epsilon(epsilon)
    if isinstance(query, CompositeQuery):
        parts = [(p.name, p.query, p.share) for p in query.pieces()]
    elif isinstance(query, NumericQuery):
        parts = [("answer", query, 1.0)]
    else:
        raise ParameterError(f"calibrate() is for numeric queries; {query.name} is a selection query")
    out = []
    for name, piece, share in parts:
        norm = cls.sensitivity_norm
        sensitivity = piece.sensitivity(norm)
        if sensitivity <= 0:
            raise ParameterError(
                f"{piece.name} has sensitivity 0 under {piece.facts.neighbours.description}: "
                "its value is public "
                "under these facts, so there is nothing to protect and nothing to release with noise"
            )
        if cls.integer_valued and not piece.is_integer_valued(df):
            raise ParameterError(
                f"{cls.__name__} adds integer noise and needs integer answers; {piece.name} is not "
                "integer-valued (integer bounds and an integer column are needed): use Laplace, Gaussian or "
                "Staircase"
            )
        if cls.integer_valued and piece.facts.weighted and not piece.whole_when_weighted:
            raise ParameterError(
                f"{cls.__name__} adds integer noise and needs integer answers; under weighted bounding "
                f"{piece.name} is fractional (each of a person's n rows counts min(1, c/n)): use Laplace, "
                "Gaussian or Staircase, or declare bounding='sample'"
            )
        m = piece.changed_coordinates if norm == "coordinate" else 1
        piece_epsilon = _piece_epsilon(epsilon, share / m, f"the {name} piece of {query.name}")
        mech = _build(cls, piece_epsilon, delta * share / m, sensitivity, extra)
        mech.release_accuracy(0.5, piece.dimension)  # builds the release plan: refuses noise too wide
        out.append(CalibratedPiece(name, piece, share, m, mech))
    return out


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
                parameters=_parameters(mech),
                epsilon=epsilon * share,
                delta=delta * share,
                rho=_rho(mech, m),
                sensitivity=float(sensitivity),
                norm=norm,
                composition=composition,
                noisy_values=tuple(_plain(v) for v in np.asarray(drawn).ravel()),
            )
        )
    # The ± of the published values, from public things only: the noise laws, and for composite or
    # post-processed values the released pieces (dpdash.published; the preview states the same rule).
    accuracy, _, _ = numeric_accuracy(query, parts, noisy, confidence=confidence, postprocess=steps)
    if isinstance(query, CompositeQuery):
        return records, tuple(np.atleast_1d(query.combine(noisy)).ravel()), accuracy
    return records, tuple(np.asarray(noisy["answer"]).ravel()), accuracy


def _parameters(mech: Any) -> dict[str, Any]:
    names = [f.name for f in dataclasses.fields(mech) if f.init]
    return {n: _plain(getattr(mech, n)) for n in names}


def _rho(mech: Any, m: int) -> float | None:
    rho = getattr(mech, "rho", None)
    if rho is None or not math.isfinite(rho):
        return None
    return float(rho) * m


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
        piece_epsilon = _piece_epsilon(epsilon, 1 / count, f"the selection {label!r}")
        mech = cls(**options, epsilon=piece_epsilon, sensitivity=sensitivity, monotone=query.monotone)
        index = mech.release([int(x) for x in u])
        chosen.append(query.candidates[index])
        mechanisms.append(mech)
        records.append(
            PieceRecord(
                name=label,
                mechanism=cls.__name__,
                parameters=_parameters(mech),
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
    mech = RandomizedResponse(epsilon=_piece_epsilon(epsilon, 1 / c, "each row's report"), categories=k)
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


def postprocess_values(steps: Sequence[str], query: Query, values: Any) -> np.ndarray:
    """The post-processing ``steps`` applied, in order, to released values of ``query``: a vector of
    its k values, or an array (..., k) of many possible releases (the preview's simulation uses the
    same function as ``release``). Returns floats; see ``postprocess_is_integer``."""
    checked = _postprocess_steps(steps, query)
    out = np.array(values, dtype=float)
    for step in checked:
        name, parameter = _parse_step(step)
        if name == "clamp_nonnegative":
            out = np.maximum(out, 0.0)
        elif name == "round":
            out = np.rint(out)
        elif name == "round_decimals":
            out = _round_decimals(out, np.full(out.shape, parameter))
        elif name == "round_significant":
            assert parameter is not None
            with np.errstate(divide="ignore"):
                magnitude = np.floor(np.log10(np.abs(out)))
            magnitude = np.where(np.isfinite(magnitude), magnitude, 0.0)
            out = _round_decimals(out, (parameter - 1 - magnitude).astype(int))
        elif name == "clamp_to_bounds":
            bounds = query.bounds  # type: ignore[attr-defined]
            if isinstance(query, Variance):
                out = np.clip(out, 0.0, bounds.half_width**2)
            else:
                out = np.clip(out, bounds.lower, bounds.upper)
        elif name == "project_psd":
            assert isinstance(query, SecondMoment)
            flat = out.reshape(-1, out.shape[-1])
            iu = np.triu_indices(query.size)
            for row in range(flat.shape[0]):
                eigenvalues, vectors = np.linalg.eigh(query.matrix(flat[row]))
                projected = (vectors * np.maximum(eigenvalues, 0.0)) @ vectors.T
                flat[row] = ((projected + projected.T) / 2.0)[iu]
            out = flat.reshape(out.shape)
    return out


def _round_decimals(values: np.ndarray, decimals: np.ndarray) -> np.ndarray:
    """Each value rounded to its number of decimals (negative: tens, hundreds, …), ties to even. The
    scaling multiplies or divides by an exact power of ten, so the result is the double nearest the
    rounded decimal (26.75780335979852 → 26.76)."""
    scale = np.power(10.0, np.abs(decimals))
    with np.errstate(over="ignore", invalid="ignore"):
        up = np.rint(values * scale) / scale
        down = np.rint(values / scale) * scale
    out = np.where(decimals >= 0, up, down)
    return np.where(np.isfinite(out), out, values)  # huge values: nothing to round at that precision


def postprocess_is_integer(steps: Sequence[str], noisy_integer: bool) -> bool:
    """Whether the post-processed values are integers: integer noisy values stay integers under every
    step but clamp_to_bounds and project_psd; ``round`` and ``round_decimals:N`` with N ≤ 0 make them so."""
    integer = noisy_integer
    for step in steps:
        name, parameter = _parse_step(step)
        if name == "round" or (name == "round_decimals" and parameter is not None and parameter <= 0):
            integer = True
        elif name in ("clamp_to_bounds", "project_psd"):
            integer = False
    return integer


def _apply(steps: Sequence[str], query: Query, values: Sequence[Any]) -> tuple[Any, ...]:
    out = postprocess_values(steps, query, values)
    if postprocess_is_integer(steps, np.asarray(values).dtype.kind in "iu"):
        return tuple(int(v) for v in out)
    return tuple(float(v) for v in out)


def _guarantee(cls: type, epsilon: float, delta: float, facts: Any) -> str:
    if delta > 0:
        privacy = f"(ε = {epsilon:g}, δ = {delta:g})-differential privacy"
    else:
        privacy = f"(ε = {epsilon:g}, 0)-differential privacy (pure)"
    if cls is RandomizedResponse:
        privacy += ", by randomized response (also ε-local DP for each person)"
    return f"{privacy}; {facts.describe()}"


def _plain(value: Any) -> Any:
    """A JSON scalar: numpy numbers become Python ints and floats."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise ParameterError(f"a released value is not finite ({value!r}); nothing was released")
    return value
