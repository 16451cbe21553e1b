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

from dpdash import (
    accounting,
    accuracy,
    comparison,
    conversions,
    datasets,
    export,
    ledger,
    loading,
    preview,
    queries,
    report,
    risk,
    sampling,
    synthetic,
)
from dpdash.errors import DPDashError, ParameterError, ParameterTypeError
from dpdash.facts import Facts, GroupBounds, Neighbours
from dpdash.mechanisms import (
    DiscreteGaussian,
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Laplace,
    NoiseMechanism,
    PermuteAndFlip,
    RandomizedResponse,
    ReportNoisyMax,
    Staircase,
    VectorMechanism,
    optimal_gamma,
)
from dpdash.release import Release, dataset_fingerprint, release
from dpdash.synthetic import SyntheticRelease, synthesize

__all__ = [
    "DPDashError",
    "DiscreteGaussian",
    "ExponentialMechanism",
    "Facts",
    "Gaussian",
    "Geometric",
    "GroupBounds",
    "Laplace",
    "Neighbours",
    "NoiseMechanism",
    "ParameterError",
    "ParameterTypeError",
    "PermuteAndFlip",
    "RandomizedResponse",
    "Release",
    "ReportNoisyMax",
    "Staircase",
    "SyntheticRelease",
    "VectorMechanism",
    "accounting",
    "accuracy",
    "comparison",
    "conversions",
    "dataset_fingerprint",
    "datasets",
    "export",
    "ledger",
    "loading",
    "optimal_gamma",
    "preview",
    "queries",
    "release",
    "report",
    "risk",
    "sampling",
    "synthesize",
    "synthetic",
]
