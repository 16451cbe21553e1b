"""Events of every kind, shared by the accounting tests."""

from __future__ import annotations

from dpdash import DiscreteGaussian, Gaussian, Geometric, Laplace, Staircase
from dpdash.accounting import (
    ApproxDPEvent,
    DiscreteGaussianEvent,
    GaussianEvent,
    GeometricEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PrivacyEvent,
    PureDPEvent,
    ZCDPEvent,
    event_for,
)

# One private event of each kind, with labels, built the way the app builds them.
EVENTS: dict[str, PrivacyEvent] = {
    "laplace": event_for(Laplace(epsilon=0.3, sensitivity=2.0), query="count"),
    "gaussian": event_for(Gaussian(epsilon=0.5, delta=1e-7, sensitivity=1.0), query="mean"),
    "geometric": event_for(Geometric(epsilon=0.2, sensitivity=2), query="histogram"),
    "discrete_gaussian": event_for(DiscreteGaussian(epsilon=0.6, delta=1e-7, sensitivity=1), query="sum"),
    "staircase": event_for(Staircase(epsilon=0.4, sensitivity=1.0), query="median"),
    "approximate": ApproxDPEvent(epsilon=0.25, delta=1e-8, mechanism="sparse vector", query="above"),
    "zcdp": ZCDPEvent(rho=0.01, query="sgd"),
}

NON_PRIVATE = NonPrivateEvent(query="exact count")

# The event kinds each accountant refuses (by events' keys above).
REFUSED: dict[str, set[str]] = {
    "basic": {"zcdp"},
    "advanced": {"zcdp"},
    "optimal": {"zcdp"},
    "zcdp": {"approximate"},
    "rdp": {"approximate"},
    "pld": {"zcdp"},
    "tightest": set(),
}


def bigger(event: PrivacyEvent) -> PrivacyEvent:
    """The same kind of release with more privacy loss (ε, or ρ, raised; noise lowered)."""
    if isinstance(event, LaplaceEvent):
        return LaplaceEvent(epsilon=event.epsilon * 1.5, sensitivity=event.sensitivity)
    if isinstance(event, GeometricEvent):
        return GeometricEvent(epsilon=event.epsilon * 1.5, sensitivity=event.sensitivity)
    if isinstance(event, GaussianEvent):
        return event_for(
            Gaussian(epsilon=event.epsilon * 1.5, delta=event.delta, sensitivity=event.sensitivity)
        )
    if isinstance(event, DiscreteGaussianEvent):
        return event_for(
            DiscreteGaussian(epsilon=event.epsilon * 1.5, delta=event.delta, sensitivity=event.sensitivity)
        )
    if isinstance(event, PureDPEvent):
        return PureDPEvent(epsilon=event.epsilon * 1.5, mechanism=event.mechanism)
    if isinstance(event, ApproxDPEvent):
        return ApproxDPEvent(epsilon=event.epsilon * 1.5, delta=event.delta * 2)
    if isinstance(event, ZCDPEvent):
        return ZCDPEvent(rho=event.rho * 2)
    raise AssertionError(event)
