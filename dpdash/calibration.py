"""Which mechanisms a release may use and how each is calibrated to a query: the mechanisms by name, the
options that keep their guarantee, the checks that a mechanism suits a query, and ``calibrate``, the
mechanisms of a release's pieces at their share of ε and δ for the query's exact sensitivities."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash.engines.sources import Source
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
from dpdash.queries import (
    CompositeQuery,
    Histogram,
    NumericQuery,
    Query,
    SelectionQuery,
)

__all__ = [
    "BY_CLASS_NAME",
    "MECHANISMS",
    "OPTIONS",
    "CalibratedPiece",
    "calibrate",
    "check_compatible",
    "check_options",
    "epsilon_share",
    "mechanism_class",
    "parameters_of",
    "plain",
    "rho_of",
]


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


BY_CLASS_NAME = {cls.__name__: cls for cls in (*MECHANISMS.values(), KeyThreshold)}


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


def _build(cls: type, epsilon: float, delta: float, sensitivity: float, options: dict[str, Any]) -> Any:
    arguments: dict[str, Any] = {**options, "epsilon": epsilon, "sensitivity": sensitivity}
    if cls in (Gaussian, DiscreteGaussian):
        arguments["delta"] = delta
    return cls(**arguments)


def epsilon_share(epsilon: float, fraction: float, what: str) -> float:
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
        piece_epsilon = epsilon_share(epsilon, share / m, f"the {name} piece of {query.name}")
        mech = _build(cls, piece_epsilon, delta * share / m, sensitivity, extra)
        mech.release_accuracy(0.5, piece.dimension)  # builds the release plan: refuses noise too wide
        out.append(CalibratedPiece(name, piece, share, m, mech))
    return out


def parameters_of(mech: Any) -> dict[str, Any]:
    names = [f.name for f in dataclasses.fields(mech) if f.init]
    return {n: plain(getattr(mech, n)) for n in names}


def rho_of(mech: Any, m: int) -> float | None:
    rho = getattr(mech, "rho", None)
    if rho is None or not math.isfinite(rho):
        return None
    return float(rho) * m


def plain(value: Any) -> Any:
    """A JSON scalar: numpy numbers become Python ints and floats."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise ParameterError(f"a released value is not finite ({value!r}); nothing was released")
    return value
