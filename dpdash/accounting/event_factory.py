"""Privacy events made from what they describe: a calibrated mechanism (``event_for``), a release's
recorded mechanisms (``events_for_release``) and an event's JSON (``event_from_dict``, which checks the
derived values it carries)."""

from __future__ import annotations

import math
from dataclasses import MISSING, fields
from typing import Any

from dpdash.accounting import events as ev
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.mechanisms import (
    DiscreteGaussian,
    Gaussian,
    Geometric,
    Laplace,
    Staircase,
)

__all__ = ["event_for", "event_from_dict", "events_for_release"]


# Derived fields read back from JSON (a Laplace scale, ρ) must match the recomputed value this closely.
_DERIVED_RTOL = 1e-12


# Values recomputed from the parameters, present in ``to_dict`` for people and checked on the way back.
_DERIVED = {"scale", "rho"}


def event_from_dict(data: Any) -> ev.PrivacyEvent:
    """The event a ``to_dict()`` dict describes, validated as on construction.

    Raises:
        ParameterTypeError: ``data`` is not a dict.
        ParameterError: unknown ``type``, missing or unexpected keys, bad values, or derived values (scale, ρ)
            that disagree with the parameters.
    """
    if not isinstance(data, dict):
        raise ParameterTypeError(f"an event must be a dict, got {type(data).__name__}")
    kind = data.get("type")
    cls = ev.EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ParameterError(f"unknown event type {kind!r}; known types: {sorted(ev.EVENT_TYPES)}")
    init_names = {f.name for f in fields(cls) if f.init}
    given = set(data) - {"type"}
    unexpected = given - init_names - _DERIVED
    if unexpected:
        raise ParameterError(f"unexpected keys {sorted(unexpected)} in a {kind!r} event")
    required = {f.name for f in fields(cls) if f.init and f.name not in ("query", "partition")}
    required -= {f.name for f in fields(cls) if f.init and f.default is not MISSING}
    missing = required - given
    if missing:
        raise ParameterError(f"a {kind!r} event needs the keys {sorted(missing)}")
    kwargs = {name: data[name] for name in given & init_names}
    event = cls(**kwargs)
    for name in given & _DERIVED:
        stated, actual = data[name], getattr(event, name)
        if (
            not isinstance(stated, (int, float))
            or isinstance(stated, bool)
            or not math.isclose(float(stated), actual, rel_tol=_DERIVED_RTOL)
        ):
            raise ParameterError(
                f"{name}={stated!r} in a {kind!r} event does not match its parameters ({name}={actual!r})"
            )
    return event


def event_for(
    mechanism: Any, *, query: str = "", partition: tuple[str, str] | None = None
) -> ev.PrivacyEvent:
    """The event of one release by a dpdash mechanism.

    Laplace → ``LaplaceEvent``; Gaussian → ``GaussianEvent`` (σ, Δ₂ and the calibrated (ε, δ));
    Geometric → ``GeometricEvent``; DiscreteGaussian → ``DiscreteGaussianEvent``; a vector mechanism → the
    event of its base mechanism (whose sensitivity is that of the whole vector); the staircase, selection
    mechanisms (exponential, report noisy max, permute-and-flip), randomized response and any other
    mechanism with ``epsilon`` and ``delta = 0`` → ``PureDPEvent`` named after it; a mechanism with
    ``delta > 0`` (e.g. Wishart, whose true δ is 1 − e^(−ε/3)) → ``ApproxDPEvent``.

    >>> from dpdash import Gaussian
    >>> e = event_for(Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0), query="mean age")
    >>> e.mechanism, e.epsilon, e.delta, round(e.sigma, 4), round(e.rho, 5)
    ('Gaussian', 1.0, 1e-05, 3.7306, 0.03593)
    """
    from dpdash.mechanisms import VectorMechanism

    labels = {"query": query, "partition": partition}
    for laplace_type, scaled_event in ((Laplace, ev.LaplaceEvent), (Geometric, ev.GeometricEvent)):
        if isinstance(mechanism, laplace_type):
            return scaled_event(epsilon=mechanism.epsilon, sensitivity=mechanism.sensitivity, **labels)
    stated = ((Gaussian, ev.GaussianEvent), (DiscreteGaussian, ev.DiscreteGaussianEvent))
    for gaussian_type, stated_event in stated:
        if isinstance(mechanism, gaussian_type):
            return stated_event(
                sigma=mechanism.scale,
                sensitivity=mechanism.sensitivity,
                epsilon=mechanism.epsilon,
                delta=mechanism.delta,
                **labels,
            )
    if isinstance(mechanism, VectorMechanism):
        return event_for(mechanism.base, **labels)
    if isinstance(mechanism, Staircase):
        return ev.PureDPEvent(epsilon=mechanism.epsilon, mechanism=mechanism.name, **labels)
    epsilon, delta = getattr(mechanism, "epsilon", None), getattr(mechanism, "delta", None)
    if isinstance(mechanism, type) or not _is_number(epsilon) or not _is_number(delta):
        raise ParameterTypeError(
            "mechanism must be a dpdash mechanism instance (Laplace, Gaussian, ExponentialMechanism, ...) "
            f"with epsilon and delta, got {mechanism!r}"[:300]
        )
    name = str(getattr(mechanism, "name", type(mechanism).__name__))
    if delta == 0:
        return ev.PureDPEvent(epsilon=epsilon, mechanism=name, **labels)
    return ev.ApproxDPEvent(epsilon=epsilon, delta=delta, mechanism=name, **labels)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def events_for_release(release: Any, *, partition: tuple[str, str] | None = None) -> list[ev.PrivacyEvent]:
    """The events of a ``dpdash.release.Release``: one per mechanism run of each of its pieces.

    A piece that spent ε on a query whose neighbours change m coordinates ran the per-coordinate
    mechanism at ε/m (``PieceRecord.composition`` says so): it counts as m runs of that mechanism, which
    is how a neighbour sees it. Each event's query label is the release's query name (and the piece's
    name, for composite queries such as a mean).

    Raises:
        ParameterError: a piece's recorded ε or δ is not a whole number of runs of its mechanism.
    """
    pieces = getattr(release, "pieces", None)
    if pieces is None:
        raise ParameterTypeError(f"release must be a dpdash.release.Release, got {type(release).__name__}")
    events: list[ev.PrivacyEvent] = []
    for piece in pieces:
        mechanism = piece.build()
        event = event_for(
            mechanism,
            query=release.query_name if len(pieces) == 1 else f"{release.query_name}: {piece.name}",
            partition=partition,
        )
        runs = max(1, round(piece.epsilon / event.epsilon))
        if not (
            math.isclose(runs * event.epsilon, piece.epsilon, rel_tol=1e-9)
            and math.isclose(runs * (event.delta or 0.0), piece.delta, rel_tol=1e-9, abs_tol=1e-300)
        ):
            raise ParameterError(
                f"piece {piece.name!r} of the release records ε = {piece.epsilon!r}, δ = {piece.delta!r}, "
                f"which is not a whole number of runs of its mechanism ({event.describe()})"
            )
        events.extend([event] * runs)
    return events
