"""dpdash: differential-privacy budgets you can see.

The core library of the dpdash dashboard; it never imports Streamlit and works from a notebook:

>>> from dpdash import Laplace, Gaussian
>>> Laplace(epsilon=1.0, sensitivity=1.0).accuracy(confidence=0.95)  # doctest: +ELLIPSIS
2.9957...
>>> round(Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0).scale, 3)
3.731

``simulate`` draws previews with numpy; ``release`` draws publishable noise with the exact samplers of
``dpdash.sampling`` on the operating system's randomness.
"""

from dpdash import accuracy, comparison, conversions, preview, risk, sampling
from dpdash.errors import DPDashError, ParameterError, ParameterTypeError
from dpdash.mechanisms import (
    DiscreteGaussian,
    Gaussian,
    Geometric,
    Laplace,
    NoiseMechanism,
    Staircase,
    optimal_gamma,
)

__all__ = [
    "DPDashError",
    "DiscreteGaussian",
    "Gaussian",
    "Geometric",
    "Laplace",
    "NoiseMechanism",
    "ParameterError",
    "ParameterTypeError",
    "Staircase",
    "accuracy",
    "comparison",
    "conversions",
    "optimal_gamma",
    "preview",
    "risk",
    "sampling",
]
