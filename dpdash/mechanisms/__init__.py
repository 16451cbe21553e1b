"""Additive noise mechanisms: Laplace, Gaussian, geometric, discrete Gaussian, staircase.

Each is a frozen, keyword-only dataclass with an analytic side (``scale``, ``noise``, ``std``,
``accuracy``, ``accuracy_union_bound``, ``coverage``, ``tail``, ``privacy_profile``, ``rho``,
``for_accuracy``) and a random side: ``simulate`` (numpy, for previews only) and ``release`` (exact
samplers on OS randomness, for publishing), with ``release_accuracy`` for what ``release`` adds.
"""

from dpdash.mechanisms.base import NoiseMechanism
from dpdash.mechanisms.discrete_gaussian import (
    DiscreteGaussian,
    DiscreteGaussianNoise,
    discrete_gaussian_delta,
)
from dpdash.mechanisms.gaussian import (
    Gaussian,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
)
from dpdash.mechanisms.geometric import Geometric
from dpdash.mechanisms.laplace import Laplace
from dpdash.mechanisms.staircase import (
    DiscreteStaircaseNoise,
    Staircase,
    StaircaseNoise,
    optimal_gamma,
)

__all__ = [
    "DiscreteGaussian",
    "DiscreteGaussianNoise",
    "DiscreteStaircaseNoise",
    "Gaussian",
    "Geometric",
    "Laplace",
    "NoiseMechanism",
    "Staircase",
    "StaircaseNoise",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "discrete_gaussian_delta",
    "gaussian_delta",
    "optimal_gamma",
]
