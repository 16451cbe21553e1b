"""Fixtures: one mechanism per case of ``cases.CASES``."""

from __future__ import annotations

import pytest

from dpdash.mechanisms import NoiseMechanism
from tests.mechanisms.cases import CASES, build


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def mechanism(case: str) -> NoiseMechanism:
    return build(case)
