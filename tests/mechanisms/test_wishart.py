"""The Wishart mechanism: outputs positive semidefinite, its calibration, and its true privacy guarantee
(the probability that a neighbour cannot produce the output, checked by seeded simulation)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdash.errors import ParameterError
from dpdash.mechanisms import Wishart


def test_calibration_of_jiang_et_al() -> None:
    w = Wishart(epsilon=0.5, rows=200, dimension=4, norm_bound=2.0)
    assert w.scale == pytest.approx(3 * 4.0 / (2 * 200 * 0.5))
    assert w.degrees_of_freedom == 5
    assert w.delta == pytest.approx(1 - math.exp(-0.5 / 3))
    assert w.privacy_profile([0.0, 1.0, 50.0]).tolist() == [w.delta] * 3
    assert Wishart.for_delta(delta=w.delta, rows=200, dimension=4, norm_bound=2.0).epsilon == pytest.approx(
        0.5
    )
    assert "NOT the" in w.guarantee


def test_the_guarantee_fails_exactly_with_the_stated_probability() -> None:
    """Seeded: for x = 0 in A and ‖x′‖ = B in A′, the output A + W is impossible under A′ exactly when
    W − x′x′ᵀ/n is not positive definite; that happens with probability 1 − e^(−ε/3) (5 standard errors)."""
    w = Wishart(epsilon=1.0, rows=50, dimension=3)
    draws = w.simulate(np.zeros((3, 3)), 40_000, rng=9)
    x = np.array([1.0, 0.0, 0.0])
    shifted = draws - np.outer(x, x) / w.rows
    impossible = float((np.linalg.eigvalsh(shifted)[:, 0] <= 0).mean())
    assert abs(impossible - w.delta) <= 5 * math.sqrt(w.delta * (1 - w.delta) / 40_000)


def test_simulated_outputs_are_positive_semidefinite_with_the_wishart_mean() -> None:
    w = Wishart(epsilon=1.0, rows=100, dimension=4)
    a = np.diag([0.5, 0.1, 0.0, 0.0])
    out = w.simulate(a, 20_000, rng=1)
    assert np.all(np.linalg.eigvalsh(out)[:, 0] >= 0)
    np.testing.assert_allclose(out, np.swapaxes(out, 1, 2))
    # E[W] = (d + 1)·c·I, each entry's standard error below 3c/√20000
    np.testing.assert_allclose(out.mean(axis=0) - a, w.noise_mean, atol=5 * 3 * w.scale / math.sqrt(20_000))


def test_release_is_positive_semidefinite_symmetric_and_on_the_lattice() -> None:
    rng = np.random.default_rng(3)
    w = Wishart(epsilon=1.0, rows=80, dimension=3)
    rows = rng.normal(size=(80, 3))
    g = w.grid**2 / w.rows
    for _ in range(20):
        out = w.release(rows)
        np.testing.assert_array_equal(out, out.T)
        assert np.linalg.eigvalsh(out)[0] >= -1e-12 * np.abs(out).max()
        units = out / g
        np.testing.assert_allclose(units, np.rint(units), rtol=0, atol=1e-6)


def test_release_noise_has_about_the_wishart_mean() -> None:
    """The lattice noise approximates Wishart_d(d + 1, c·I): its mean trace is d(d + 1)c (5 standard
    errors; Var tr W = 2(d + 1)·d·c²)."""
    w = Wishart(epsilon=2.0, rows=10, dimension=2)
    traces = np.array([np.trace(w.release(np.zeros((10, 2)))) for _ in range(400)])
    mean = 2 * 3 * w.scale
    assert abs(traces.mean() - mean) <= 5 * math.sqrt(2 * 3 * 2 * w.scale**2 / 400)


def test_true_matrix_and_bad_rows() -> None:
    w = Wishart(epsilon=1.0, rows=2, dimension=2)
    np.testing.assert_allclose(
        w.true_matrix([[3.0, 4.0], [0.0, 0.5]]), np.array([[0.18, 0.24], [0.24, 0.445]])
    )
    with pytest.raises(ParameterError, match=r"rows must hold the declared n = 2 rows"):
        w.release(np.zeros((3, 2)))
    with pytest.raises(ParameterError, match=r"rows must be an n × 2 array"):
        w.release(np.zeros((2, 3)))
    with pytest.raises(ParameterError, match="finite"):
        w.release([[np.nan, 0.0], [0.0, 0.0]])
