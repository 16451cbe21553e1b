"""The Gaussian mechanism's calibration: the exact privacy profile δ(ε) of N(0, σ²) noise and the σ it
takes, analytic (Balle & Wang 2018) or classic (Dwork & Roth 2014). Shared by the continuous Gaussian and
the discrete one, which starts its search from the analytic σ."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import special

from dpdash import _validation as check
from dpdash._search import bracket, smallest_true
from dpdash.errors import ParameterError

__all__ = ["analytic_gaussian_sigma", "classic_gaussian_sigma", "gaussian_delta"]


def gaussian_delta(epsilon: npt.ArrayLike, sigma: float, sensitivity: float) -> np.ndarray:
    """Exact δ(ε) of N(0, σ²) noise for ℓ2 sensitivity Δ (Balle & Wang 2018, Theorem 8):

        δ(ε) = Φ(Δ/(2σ) − εσ/Δ) − e^ε · Φ(−Δ/(2σ) − εσ/Δ).

    Evaluated as Φ(A)·(1 − exp(ε + ln Φ(B) − ln Φ(A))) with ``log_ndtr`` and ``expm1``, so it keeps its
    relative precision when δ is tiny.
    """
    eps = np.asarray(epsilon, dtype=float)
    ratio = sensitivity / sigma
    log_phi_a = special.log_ndtr(ratio / 2.0 - eps / ratio)
    log_phi_b = special.log_ndtr(-ratio / 2.0 - eps / ratio)
    exponent = np.minimum(eps + log_phi_b - log_phi_a, 0.0)
    return np.exp(log_phi_a) * -np.expm1(exponent)


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """σ = Δ₂·√(2 ln(1.25/δ))/ε, which gives (ε, δ)-DP for ε < 1 (Dwork & Roth 2014, Theorem A.1)."""
    epsilon = check.epsilon(epsilon)
    delta = check.open_unit(delta, "delta")
    sensitivity = check.sensitivity(sensitivity)
    if epsilon >= 1.0:
        raise ParameterError(
            f"epsilon must be < 1 for the classic Gaussian calibration (Dwork & Roth, Theorem A.1 "
            f"is proven only for ε < 1), got epsilon={epsilon!r}; use calibration='analytic' "
            "(Balle & Wang 2018), which is exact for every ε > 0 and needs less noise"
        )
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest σ with ``gaussian_delta(ε, σ, Δ) ≤ δ`` (Balle & Wang 2018, Algorithm 1's target).

    δ(ε; σ) decreases in σ, so a bisection over the bits of σ finds it to one unit in the last place;
    the comparison is made on ln δ to keep precision for tiny δ.
    """
    epsilon = check.epsilon(epsilon)
    delta = check.open_unit(delta, "delta")
    sensitivity = check.sensitivity(sensitivity)
    log_target = math.log(delta)

    def private_enough(sigma: float) -> bool:
        value = float(gaussian_delta(epsilon, sigma, sensitivity))
        return value <= 0.0 or math.log(value) <= log_target

    guess = sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
    lo, hi = bracket(private_enough, guess, lower=1e-300, upper=1e300, what="noise scale sigma")
    return smallest_true(private_enough, lo, hi)
