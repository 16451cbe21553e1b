"""Events: validation, the mapping from mechanisms, settings, and JSON round trips."""

from __future__ import annotations

import json
import math

import pytest

from dpdash import DiscreteGaussian, Gaussian, Geometric, Laplace, Staircase
from dpdash.accounting import (
    ApproxDPEvent,
    DiscreteGaussianEvent,
    GaussianEvent,
    GeometricEvent,
    LaplaceEvent,
    PrivacyEvent,
    PureDPEvent,
    ZCDPEvent,
    event_for,
    event_from_dict,
)
from dpdash.accounting.events import EVENT_TYPES, canonical_json
from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.mechanisms import discrete_gaussian_delta, gaussian_delta
from tests.accounting.cases import EVENTS, NON_PRIVATE


@pytest.mark.parametrize("event", [*EVENTS.values(), NON_PRIVATE], ids=[*EVENTS, "non_private"])
def test_json_round_trip(event: PrivacyEvent) -> None:
    text = canonical_json(event.to_dict())  # JSON-able, no NaN or infinity
    back = event_from_dict(json.loads(text))
    assert back == event
    assert type(back) is type(event)
    assert canonical_json(back.to_dict()) == text


@pytest.mark.parametrize("event", list(EVENTS.values()), ids=list(EVENTS))
def test_round_trip_keeps_labels_and_setting_drops_them(event: PrivacyEvent) -> None:
    labelled = event_from_dict({**event.to_dict(), "query": "q", "partition": ["region", "North"]})
    assert labelled.partition == ("region", "North")
    assert labelled.setting == event.setting
    assert labelled.setting.query == "" and labelled.setting.partition is None
    assert hash(labelled.setting) == hash(event.setting)


def test_event_for_maps_every_mechanism() -> None:
    lap = event_for(Laplace(epsilon=0.5, sensitivity=2.0), query="q", partition=("a", "b"))
    assert isinstance(lap, LaplaceEvent)
    assert (lap.epsilon, lap.sensitivity, lap.scale, lap.delta, lap.rho) == (0.5, 2.0, 4.0, 0.0, 0.125)
    assert (lap.query, lap.partition) == ("q", ("a", "b"))

    mechanism = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=2.0)
    gauss = event_for(mechanism)
    assert isinstance(gauss, GaussianEvent)
    assert (gauss.sigma, gauss.epsilon, gauss.delta) == (mechanism.scale, 1.0, 1e-5)
    assert gauss.rho == pytest.approx(mechanism.rho, rel=1e-15)

    geo = event_for(Geometric(epsilon=0.4, sensitivity=3))
    assert (
        isinstance(geo, GeometricEvent)
        and geo.sensitivity == 3
        and geo.noise_parameter == pytest.approx(0.4 / 3)
    )

    dg_mechanism = DiscreteGaussian(epsilon=1.0, delta=1e-6, sensitivity=1)
    dg = event_for(dg_mechanism)
    assert isinstance(dg, DiscreteGaussianEvent) and dg.sigma == dg_mechanism.scale

    stair = event_for(Staircase(epsilon=2.0, sensitivity=1.0))
    assert isinstance(stair, PureDPEvent) and stair.mechanism == "Staircase" and stair.epsilon == 2.0


def test_event_for_refuses_what_is_not_a_mechanism() -> None:
    with pytest.raises(ParameterTypeError, match="mechanism instance"):
        event_for("laplace")
    with pytest.raises(ParameterTypeError, match="mechanism instance"):
        event_for(Laplace)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: LaplaceEvent(epsilon=-1, sensitivity=1.0), "epsilon must be a finite number > 0"),
        (lambda: LaplaceEvent(epsilon=math.inf, sensitivity=1.0), "epsilon"),
        (lambda: GeometricEvent(epsilon=1.0, sensitivity=1.5), "integer"),
        (lambda: GaussianEvent(sigma=1.0, sensitivity=1.0, epsilon=1.0, delta=0.0), "delta"),
        (lambda: ApproxDPEvent(epsilon=1.0, delta=0), "PureDPEvent"),
        (lambda: ZCDPEvent(rho=0.0), "rho"),
        (lambda: PureDPEvent(epsilon=1.0, partition=("region", "")), "partition"),
        (lambda: PureDPEvent(epsilon=1.0, partition="North"), "partition"),
    ],
)
def test_validation(build, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ParameterError, match=message):
        build()


def test_wrong_types_are_type_errors() -> None:
    with pytest.raises(ParameterTypeError):
        LaplaceEvent(epsilon="1", sensitivity=1.0)  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError):
        PureDPEvent(epsilon=1.0, query=3)  # type: ignore[arg-type]


def test_a_gaussian_event_cannot_claim_more_privacy_than_its_noise_gives() -> None:
    # σ = 1 on Δ = 1 has exact δ(0.5) ≈ 0.24, nowhere near 1e-5.
    with pytest.raises(ParameterError, match="is not"):
        GaussianEvent(sigma=1.0, sensitivity=1.0, epsilon=0.5, delta=1e-5)
    with pytest.raises(ParameterError, match="is not"):
        DiscreteGaussianEvent(sigma=1.0, sensitivity=1, epsilon=0.5, delta=1e-5)


def test_from_sigma_states_the_smallest_epsilon() -> None:
    event = GaussianEvent.from_sigma(sigma=4.0, sensitivity=1.0, delta=1e-6)
    assert float(gaussian_delta(event.epsilon, 4.0, 1.0)) <= 1e-6
    assert float(gaussian_delta(math.nextafter(event.epsilon, 0), 4.0, 1.0)) > 1e-6
    dg = DiscreteGaussianEvent(sigma=4.0, sensitivity=1, epsilon=1.5, delta=1e-4)
    assert float(discrete_gaussian_delta(1.5, 4.0, 1)) <= 1e-4 and dg.rho == pytest.approx(1 / 32)


def test_laplace_from_scale() -> None:
    assert LaplaceEvent.from_scale(scale=4.0, sensitivity=2.0).epsilon == 0.5


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"type": "gamma", "epsilon": 1}, "unknown event type"),
        ({"type": "laplace", "sensitivity": 1.0}, "needs the keys"),
        ({"type": "laplace", "epsilon": 1.0, "sensitivity": 1.0, "colour": "red"}, "unexpected keys"),
        ({"type": "laplace", "epsilon": 1.0, "sensitivity": 1.0, "scale": 2.0}, "does not match"),
        (
            {"type": "gaussian", "sigma": 5.0, "sensitivity": 1.0, "epsilon": 1.0, "delta": 1e-5, "rho": 0.5},
            "does not match",
        ),
    ],
)
def test_from_dict_refuses_bad_dicts(data: dict, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        event_from_dict(data)


def test_from_dict_refuses_non_dicts() -> None:
    with pytest.raises(ParameterTypeError):
        event_from_dict([1, 2])


def test_every_family_is_registered_once() -> None:
    assert set(EVENT_TYPES) == {e.family for e in EVENTS.values()} | {"pure", "non_private"}
    for family, cls in EVENT_TYPES.items():
        assert cls.family == family


def test_events_are_frozen() -> None:
    event = EVENTS["laplace"]
    with pytest.raises(AttributeError):
        event.epsilon = 3.0  # type: ignore[misc]


def test_event_for_the_other_mechanisms() -> None:
    from dpdash.mechanisms import (
        ExponentialMechanism,
        PermuteAndFlip,
        RandomizedResponse,
        ReportNoisyMax,
        VectorMechanism,
        Wishart,
    )

    for mechanism in (
        ExponentialMechanism(epsilon=0.5, sensitivity=1.0),
        PermuteAndFlip(epsilon=0.5, sensitivity=1.0),
        ReportNoisyMax(epsilon=0.5, sensitivity=1.0),
        RandomizedResponse(epsilon=0.5),
    ):
        event = event_for(mechanism, query="pick")
        assert event == PureDPEvent(epsilon=0.5, mechanism=mechanism.name, query="pick")
    vector = VectorMechanism.gaussian(epsilon=1.0, delta=1e-5, l2_sensitivity=2.0, dimension=10)
    assert event_for(vector) == event_for(vector.base)
    wishart = Wishart.for_delta(delta=1e-6, rows=1000, dimension=3)
    event = event_for(wishart)
    assert (
        isinstance(event, ApproxDPEvent) and event.delta == wishart.delta and event.epsilon == wishart.epsilon
    )


def test_events_for_a_release() -> None:
    import pandas as pd

    from dpdash.accounting import events_for_release
    from dpdash.facts import Bounds, Facts, Neighbours
    from dpdash.queries import Histogram, Mean
    from dpdash.release import release

    df = pd.DataFrame({"age": [34, 71, 68, 25], "ward": ["A", "B", "A", "B"]})
    mean = release(Mean(column="age", bounds=Bounds(0, 100)), "Laplace", df, epsilon=1.0)
    events = events_for_release(mean)
    assert [(e.query, e.epsilon, e.sensitivity) for e in events] == [
        ("mean of age: sum", 0.5, 50.0),
        ("mean of age: count", 0.5, 1.0),
    ]
    # Under substitution a histogram changes in two bins: two runs of the per-bin mechanism at ε/2.
    histogram = Histogram(column="ward", categories=("A", "B"), facts=Facts(neighbours=Neighbours.SUBSTITUTE))
    events = events_for_release(release(histogram, "Staircase", df, epsilon=1.0))
    assert events == [PureDPEvent(epsilon=0.5, mechanism="Staircase", query="histogram of ward")] * 2
    with pytest.raises(ParameterTypeError):
        events_for_release("not a release")
