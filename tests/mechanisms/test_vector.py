"""The vector mechanism: exact ℓ∞ and ℓ1/ℓ2 accuracy (checked by seeded simulation), release on vectors."""

from __future__ import annotations

import numpy as np
import pytest

from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.mechanisms import Gaussian, Geometric, Laplace, VectorMechanism


@pytest.fixture(
    params=[
        VectorMechanism.laplace(epsilon=0.8, l1_sensitivity=2.0, dimension=5),
        VectorMechanism.gaussian(epsilon=1.0, delta=1e-6, l2_sensitivity=1.5, dimension=12),
    ],
    ids=["laplace", "gaussian"],
)
def vector(request: pytest.FixtureRequest) -> VectorMechanism:
    return request.param


def test_the_base_mechanism_carries_the_whole_vector_sensitivity(vector: VectorMechanism) -> None:
    assert vector.accuracy(0.9) == vector.base.accuracy(0.9, k=vector.dimension)
    assert vector.expected_squared_error == pytest.approx(vector.dimension * vector.base.variance)
    assert vector.norm == ("l1" if isinstance(vector.base, Laplace) else "l2")


@pytest.mark.parametrize("confidence", [0.5, 0.95])
def test_norm_accuracy_has_the_stated_coverage(vector: VectorMechanism, confidence: float) -> None:
    """Seeded: 40 000 simulated vectors; coverage within 5 standard errors of the confidence."""
    draws = vector.simulate(np.zeros(vector.dimension), 40_000, rng=5)
    order = 1 if vector.norm == "l1" else 2
    norms = np.linalg.norm(draws, ord=order, axis=1)
    coverage = float((norms <= vector.norm_accuracy(confidence)).mean())
    assert abs(coverage - confidence) <= 5 * np.sqrt(confidence * (1 - confidence) / 40_000)
    inf_coverage = float((np.abs(draws).max(axis=1) <= vector.accuracy(confidence)).mean())
    assert abs(inf_coverage - confidence) <= 5 * np.sqrt(confidence * (1 - confidence) / 40_000)


def test_release_adds_noise_to_every_coordinate(vector: VectorMechanism) -> None:
    values = np.arange(vector.dimension, dtype=float)
    out = vector.release(values)
    assert out.shape == values.shape and not np.array_equal(out, values)
    assert vector.release_accuracy(0.95) >= vector.accuracy(0.95)
    with pytest.raises(ParameterError, match=rf"values must hold {vector.dimension} coordinates"):
        vector.release(np.zeros(vector.dimension + 1))


def test_only_laplace_and_gaussian_bases() -> None:
    with pytest.raises(ParameterTypeError, match="base must be a Laplace or Gaussian mechanism"):
        VectorMechanism(base=Geometric(epsilon=1.0, sensitivity=1), dimension=2)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="dimension must be an integer >= 1"):
        VectorMechanism(base=Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0), dimension=0)
