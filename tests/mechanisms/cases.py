"""Mechanism cases every contract test runs on, and brute-force reference computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import integrate

from dpdash.mechanisms import (
    DiscreteGaussian,
    Gaussian,
    Geometric,
    Laplace,
    NoiseMechanism,
    Staircase,
)

# name -> (class, constructor arguments other than ε, ε)
CASES: dict[str, tuple[type[NoiseMechanism], dict[str, object], float]] = {
    "laplace-1": (Laplace, {"sensitivity": 1.0}, 1.0),
    "laplace-small-eps": (Laplace, {"sensitivity": 3.5}, 0.1),
    "gaussian-analytic": (Gaussian, {"delta": 1e-5, "sensitivity": 1.0}, 1.0),
    "gaussian-analytic-large-eps": (Gaussian, {"delta": 1e-6, "sensitivity": 2.0}, 4.0),
    "gaussian-classic": (
        Gaussian,
        {"delta": 1e-5, "sensitivity": 1.0, "calibration": "classic"},
        0.5,
    ),
    "geometric-1": (Geometric, {"sensitivity": 1}, 1.0),
    "geometric-3": (Geometric, {"sensitivity": 3}, 0.3),
    "discrete-gaussian-1": (DiscreteGaussian, {"delta": 1e-5, "sensitivity": 1}, 1.0),
    "discrete-gaussian-small-sigma": (DiscreteGaussian, {"delta": 1e-3, "sensitivity": 2}, 3.0),
    "staircase-optimal-gamma": (Staircase, {"sensitivity": 1.0}, 1.0),
    "staircase-fixed-gamma": (Staircase, {"sensitivity": 2.0, "gamma": 0.6}, 2.5),
}


def build(name: str, epsilon: float | None = None) -> NoiseMechanism:
    """Case ``name``, at its own ε or at another one with every other parameter kept."""
    cls, params, own_epsilon = CASES[name]
    return cls(epsilon=own_epsilon if epsilon is None else epsilon, **params)


def reference_pmf(mechanism: NoiseMechanism, support: np.ndarray) -> np.ndarray:
    """The noise pmf by brute force, independent of the library's tail code."""
    if isinstance(mechanism, Geometric):
        r = math.exp(-mechanism.epsilon / mechanism.sensitivity)
        return (1 - r) / (1 + r) * r ** np.abs(support)
    if isinstance(mechanism, DiscreteGaussian):
        sigma = mechanism.scale
        wide = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61)
        z = np.exp(-(wide.astype(float) ** 2) / (2 * sigma**2)).sum()
        return np.exp(-(support.astype(float) ** 2) / (2 * sigma**2)) / z
    raise TypeError(mechanism)


def reference_delta(mechanism: NoiseMechanism, epsilon: float) -> float:
    """Hockey-stick divergence of the noise against the noise shifted by Δ, by brute force:
    ∫ (p(x) − e^ε p(x − Δ))⁺ dx (numerical quadrature), or the same sum over the integers."""
    shift = mechanism.sensitivity
    if mechanism.integer_valued:
        reach = int(80 * max(mechanism.std, 1.0)) + 80
        y = np.arange(-reach, reach + int(shift) + 1)
        p = reference_pmf(mechanism, y)
        q = reference_pmf(mechanism, y - int(shift))
        return float(np.clip(p - math.exp(epsilon) * q, 0, None).sum())
    pdf = mechanism.noise.pdf

    def gap(x: float) -> float:
        return max(float(pdf(x)) - math.exp(epsilon) * float(pdf(x - shift)), 0.0)

    reach = 40 * mechanism.std + 10 * shift
    points = np.unique(np.concatenate([np.linspace(-reach, reach, 81), [0.0, shift]]))
    if isinstance(mechanism, Staircase):  # integrate stair by stair
        k = np.arange(-int(reach / shift) - 2, int(reach / shift) + 3)
        steps = np.concatenate([k, k + mechanism.gamma, k - mechanism.gamma]) * shift
        points = np.unique(np.concatenate([steps, steps + shift]))
    total = 0.0
    for a, b in itertools.pairwise(points):
        total += integrate.quad(gap, a, b, limit=200, epsabs=1e-15, epsrel=1e-12)[0]
    return total
