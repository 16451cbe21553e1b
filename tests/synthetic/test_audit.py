"""A privacy audit of the synthesizer's measurements (dpdash.audit, release-grade trials): a marginal's
discrete Gaussian noise is the law of dpdash's calibrated mechanism at the event's stated (ε, δ), and its
empirical ε on neighbouring counts stays below that ε."""

from __future__ import annotations

import pytest

from dpdash.accounting.events import DiscreteGaussianEvent
from dpdash.audit import audit, mechanism_target
from dpdash.datasets import PublicFacts
from dpdash.mechanisms import DiscreteGaussian
from dpdash.synthetic import synthesize
from tests.synthetic.helpers import table


@pytest.mark.slow
def test_a_measurement_is_audited_below_its_claim() -> None:
    df = table(41, rows=2000)
    small = PublicFacts(categories={"colour": ["red", "green"], "shape": ["round", "square"]})
    # A large ε, so that one measurement's stated ε is large enough for the audit to see most of it.
    s = synthesize(df, small, epsilon=8.0, delta=1e-5, rng=0, columns=["colour", "shape"])
    event = s.events[0]
    assert isinstance(event, DiscreteGaussianEvent) and event.sensitivity == 1
    mechanism = DiscreteGaussian(epsilon=event.epsilon, delta=event.delta, sensitivity=1)
    assert mechanism.scale == pytest.approx(event.sigma, rel=1e-9)  # the same noise law
    result = audit(mechanism_target(mechanism, 0, 1), trials=200_000)
    assert 0.0 < result.epsilon_lower <= event.epsilon, result.verdict
