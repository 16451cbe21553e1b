"""What a release records: ``Release``, the frozen value a ledger entry keeps (the query, every piece's
mechanism and parameters, ε and δ, the ± and its definition, the table's identity, the time) as plain
JSON data, with ``PieceRecord`` for each piece; the table's identity (``dataset_fingerprint``); and
``evaluate_for_release``, the true answer and identity a release is drawn from."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpdash.calibration import BY_CLASS_NAME
from dpdash.engines.sources import Source, SourceChangedError
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.published import Accuracy
from dpdash.queries import (
    DataReport,
    Query,
    query_from_dict,
)

__all__ = ["FORMAT", "PieceRecord", "Release", "dataset_fingerprint", "evaluate_for_release"]


#: The version of the serialised form.
FORMAT = 1


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
        cls = BY_CLASS_NAME.get(self.mechanism)
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
