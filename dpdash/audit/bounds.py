"""Confidence bounds on probabilities, and the lower bound on ε they give.

An event S with Pr[M(x) ∈ S] = p and Pr[M(x′) ∈ S] = q for neighbours x, x′ proves, for an (ε, δ)-DP
mechanism, p ≤ e^ε·q + δ, so ε ≥ ln((p − δ)/q) (Dwork & Roth 2014, Def. 2.4). Estimated from n trials
of each side, p and q are replaced by one-sided Clopper–Pearson bounds (Clopper & Pearson 1934): a lower
bound p̲ on p and an upper bound q̄ on q, each at confidence 1 − α/2, so that with probability ≥ 1 − α
(Bonferroni) both hold and ε ≥ ln((p̲ − δ)/q̄). This is the statistical core of DP auditing tools
(Ding et al. 2018, "Detecting Violations of Differential Privacy"; Bichsel et al. 2021, DP-Sniper;
Jagielski et al. 2020).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import special

__all__ = ["clopper_pearson_lower", "clopper_pearson_upper", "epsilon_bounds", "epsilon_lower_bound"]


def clopper_pearson_lower(successes: npt.ArrayLike, trials: npt.ArrayLike, alpha: float) -> np.ndarray:
    """One-sided lower bound on p at confidence 1 − α: the α quantile of Beta(x, n − x + 1); 0 for x = 0."""
    x = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = special.betaincinv(np.maximum(x, 1.0), n - x + 1.0, alpha)
    return np.where(x <= 0, 0.0, bound)


def clopper_pearson_upper(successes: npt.ArrayLike, trials: npt.ArrayLike, alpha: float) -> np.ndarray:
    """One-sided upper bound on p at confidence 1 − α: the 1 − α quantile of Beta(x + 1, n − x);
    1 for x = n."""
    x = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = special.betaincinv(x + 1.0, np.maximum(n - x, 1.0), 1.0 - alpha)
    return np.where(x >= n, 1.0, bound)


def _log_ratio(numerator: np.ndarray, denominator: np.ndarray, delta: float) -> np.ndarray:
    """ln((p − δ)/q) with the conventions of a bound: −∞ when p ≤ δ, +∞ when q = 0 < p − δ."""
    top = numerator - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.where(top > 0, top, 1.0)) - np.log(denominator)
    return np.where(top > 0, out, -np.inf)


def epsilon_lower_bound(
    hits_first: npt.ArrayLike,
    trials_first: npt.ArrayLike,
    hits_second: npt.ArrayLike,
    trials_second: npt.ArrayLike,
    *,
    delta: float = 0.0,
    confidence: float = 0.99,
) -> np.ndarray:
    """ln((p̲ − δ)/q̄): with probability ≥ ``confidence`` no (ε, δ)-DP mechanism with ε below it could have
    produced these counts (p̲, q̄ one-sided Clopper–Pearson at 1 − α/2 each, α = 1 − confidence).

    −∞ when p̲ ≤ δ (no evidence); never +∞ (q̄ > 0 always). Vectorised over the counts.
    """
    alpha = 1.0 - confidence
    p_low = clopper_pearson_lower(hits_first, trials_first, alpha / 2.0)
    q_high = clopper_pearson_upper(hits_second, trials_second, alpha / 2.0)
    return _log_ratio(p_low, q_high, delta)


def epsilon_bounds(
    hits_first: int,
    trials_first: int,
    hits_second: int,
    trials_second: int,
    *,
    delta: float,
    confidence: float,
) -> tuple[float, float, float]:
    """(lower, estimate, upper) for ln((p − δ)/q) of one event: the lower bound above, the plug-in
    estimate ln((p̂ − δ)/q̂), and the matching upper bound ln((p̄ − δ)/q̲) (+∞ when q̲ = 0)."""
    alpha = 1.0 - confidence
    lower = float(
        epsilon_lower_bound(
            hits_first, trials_first, hits_second, trials_second, delta=delta, confidence=confidence
        )
    )
    estimate = float(
        _log_ratio(np.float64(hits_first / trials_first), np.float64(hits_second / trials_second), delta)
    )
    p_high = clopper_pearson_upper(hits_first, trials_first, alpha / 2.0)
    q_low = clopper_pearson_lower(hits_second, trials_second, alpha / 2.0)
    upper = float(_log_ratio(p_high, q_low, delta))
    return lower, estimate, upper
