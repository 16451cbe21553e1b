"""Mechanisms: the additive noise mechanisms (Laplace, Gaussian, geometric, discrete Gaussian,
staircase), selection mechanisms (exponential, report noisy max, permute-and-flip), randomized
response, the thresholded geometric mechanism for keys that are not public (``KeyThreshold``), and the
vector and Wishart mechanisms.

Each additive noise mechanism is a frozen, keyword-only dataclass with an analytic side (``scale``,
``noise``, ``std``, ``accuracy``, ``accuracy_union_bound``, ``coverage``, ``tail``, ``privacy_profile``,
``rho``, ``for_accuracy``) and a random side: ``simulate`` (numpy, for previews only) and ``release`` (exact
samplers on OS randomness, for publishing), with ``release_accuracy`` for what ``release`` adds.
"""

from dpdash.mechanisms.base import NoiseMechanism
from dpdash.mechanisms.discrete_gaussian import (
    DiscreteGaussian,
    DiscreteGaussianNoise,
    discrete_gaussian_delta,
)
from dpdash.mechanisms.exponential import ExponentialMechanism, PermuteAndFlip
from dpdash.mechanisms.gaussian import (
    Gaussian,
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
)
from dpdash.mechanisms.geometric import Geometric
from dpdash.mechanisms.key_threshold import KeyThreshold
from dpdash.mechanisms.laplace import Laplace
from dpdash.mechanisms.noisy_max import ReportNoisyMax
from dpdash.mechanisms.randomized_response import RandomizedResponse
from dpdash.mechanisms.selection import SelectionMechanism
from dpdash.mechanisms.staircase import (
    DiscreteStaircaseNoise,
    Staircase,
    StaircaseNoise,
    optimal_gamma,
)
from dpdash.mechanisms.vector import VectorMechanism
from dpdash.mechanisms.wishart import Wishart

__all__ = [
    "DiscreteGaussian",
    "DiscreteGaussianNoise",
    "DiscreteStaircaseNoise",
    "ExponentialMechanism",
    "Gaussian",
    "Geometric",
    "KeyThreshold",
    "Laplace",
    "NoiseMechanism",
    "PermuteAndFlip",
    "RandomizedResponse",
    "ReportNoisyMax",
    "SelectionMechanism",
    "Staircase",
    "StaircaseNoise",
    "VectorMechanism",
    "Wishart",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "discrete_gaussian_delta",
    "gaussian_delta",
    "optimal_gamma",
]
