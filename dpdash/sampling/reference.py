"""The specification: Canonne, Kamath & Steinke's exact samplers, one draw at a time, in Python.

C. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020
(arXiv:2004.00010), Algorithms 1–3, transcribed with ``fractions.Fraction`` and ``secrets``. They
use only uniform integers and rational Bernoulli trials, so they are exact by inspection; they are
slow (tens of microseconds per draw) and serve as the test oracle of the vectorised samplers.

- Bernoulli(p), p = a/b: 1 iff a uniform integer in {0, …, b − 1} is < a.
- Algorithm 1, Bernoulli(exp(−γ)): for γ ∈ [0, 1], draw A_k ~ Bernoulli(γ/k) for k = 1, 2, … until
  the first A_K = 0 and return 1 iff K is odd: P(K = k) = γ^(k−1)/(k−1)! − γ^k/k!, so
  P(K odd) = Σ_j (−γ)^j/j! = e^(−γ). For γ > 1, return 1 iff ⌊γ⌋ independent Bernoulli(e^(−1)) and
  one Bernoulli(e^(−(γ − ⌊γ⌋))) all succeed.
- Algorithm 2, discrete Laplace with scale t/s (integers s, t ≥ 1): U uniform on {0, …, t − 1},
  accepted with probability e^(−U/t); V geometric with P(V ≥ v) = e^(−v); X = U + tV is geometric
  with ratio e^(−1/t); Y = ⌊X/s⌋; a fair sign B, rejecting (B = 1, Y = 0) so that 0 is not counted
  twice.
- Algorithm 3, discrete Gaussian with variance parameter σ²: t = ⌊σ⌋ + 1; Y ~ discrete Laplace(t),
  accepted with probability exp(−(|Y| − σ²/t)²/(2σ²)).

>>> from fractions import Fraction
>>> discrete_gaussian(Fraction(4)) in range(-100, 101)
True
"""

from __future__ import annotations

import secrets
from fractions import Fraction
from math import floor, isqrt

__all__ = [
    "bernoulli",
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_laplace",
    "uniform_integer",
]


def uniform_integer(upper: int) -> int:
    """A uniform integer on {0, …, upper − 1} (``secrets.randbelow`` rejects; it never reduces)."""
    return secrets.randbelow(upper)


def bernoulli(p: Fraction) -> int:
    """Bernoulli(p) for a rational p in [0, 1]."""
    p = Fraction(p)
    return int(uniform_integer(p.denominator) < p.numerator)


def bernoulli_exp(gamma: Fraction) -> int:
    """Bernoulli(exp(−γ)) for a rational γ ≥ 0 (CKS Algorithm 1)."""
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"gamma must be a finite number >= 0, got gamma={gamma!r}")
    if gamma <= 1:
        k = 1
        while bernoulli(gamma / k):
            k += 1
        return k % 2
    for _ in range(floor(gamma)):
        if not bernoulli_exp(Fraction(1)):
            return 0
    return bernoulli_exp(gamma - floor(gamma))


def discrete_laplace(scale: Fraction) -> int:
    """One draw with P(x) ∝ exp(−|x|/scale) for a rational scale > 0 (CKS Algorithm 2)."""
    scale = Fraction(scale)
    t, s = scale.numerator, scale.denominator  # scale = t/s
    while True:
        u = uniform_integer(t)
        if not bernoulli_exp(Fraction(u, t)):
            continue
        v = 0
        while bernoulli_exp(Fraction(1)):
            v += 1
        y = (u + t * v) // s
        b = bernoulli(Fraction(1, 2))
        if b and y == 0:
            continue
        return -y if b else y


def discrete_gaussian(sigma_squared: Fraction) -> int:
    """One draw with P(x) ∝ exp(−x²/(2σ²)) for a rational σ² > 0 (CKS Algorithm 3)."""
    sigma_squared = Fraction(sigma_squared)
    t = isqrt(floor(sigma_squared)) + 1
    while True:
        y = discrete_laplace(Fraction(t))
        gamma = (abs(y) - sigma_squared / t) ** 2 / (2 * sigma_squared)
        if bernoulli_exp(gamma):
            return y
