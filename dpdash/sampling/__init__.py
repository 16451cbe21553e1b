"""Release-grade exact samplers on the operating system's randomness.

Noise that a person may publish must not come from floating-point sampling: the set of floats a
sampler can output leaks the input (Mironov, "On Significance of the Least Significant Bits for
Differential Privacy", CCS 2012). Everything here is exact:

- every random bit comes from ``os.urandom`` (the kernel CSPRNG), never from numpy's generators, and
  there is no seed;
- parameters are exact rationals (``Fraction``, ``int``, or a ``float`` taken as the binary number
  it holds), and no floating-point arithmetic takes part in any sampling decision;
- each sample has exactly the stated distribution: thresholds such as exp(−g/scale) are bounded
  rigorously in fixed point, and a uniform is compared with them bit by bit, reading more random
  bits whenever the bound does not yet settle the comparison.

The samplers are vectorised (about 10^7 draws per second on one core). Algorithms follow Canonne,
Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020; their plain
transcription is :mod:`dpdash.sampling.reference`, the test oracle.

>>> from fractions import Fraction
>>> from dpdash.sampling import discrete_gaussian, discrete_laplace
>>> discrete_laplace(Fraction(10), 3).dtype
dtype('int64')
>>> discrete_gaussian(sigma=Fraction(7, 10), size=(2, 2)).shape
(2, 2)
"""

from dpdash.sampling.bernoulli import bernoulli, bernoulli_exp
from dpdash.sampling.bits import MAX_UPPER, uniform_integers
from dpdash.sampling.discrete_gaussian import MAX_SIGMA, discrete_gaussian
from dpdash.sampling.discrete_laplace import MAX_SCALE, discrete_laplace

__all__ = [
    "MAX_SCALE",
    "MAX_SIGMA",
    "MAX_UPPER",
    "bernoulli",
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_laplace",
    "uniform_integers",
]
