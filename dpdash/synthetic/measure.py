"""Measuring marginals and choosing among them, by dpdash's own mechanisms, each step a privacy event.

**The budget.** A synthetic release is ρ-zCDP for a ρ chosen from the target (ε, δ): the largest ρ whose
(ε, δ) under the zCDP conversion the ledger's zCDP accountant uses (``dpdash.conversions.zcdp_epsilon``,
Canonne, Kamath & Steinke 2020, Cor. 13, "tight") is at most ε (``rho_for``).

**A measurement** is a dpdash count query (``Histogram`` / ``ContingencyTable``) evaluated where the table
lives (``dpdash.engines.evaluate``, with the per-person truncation of every release), plus discrete
Gaussian noise N_Z(0, σ²) on every cell: release-grade exact sampling on OS randomness
(``DiscreteGaussianNoise.sample``) for a release, numpy's seeded sampler for a preview. It is ρ-zCDP with
ρ = Δ₂²/(2σ²), Δ₂ the query's own ℓ2 sensitivity (c under add/remove, √2·c under substitute, √k·m with
per-group bounds): the noise on each cell is independent, a neighbour shifts cell i by an integer vᵢ, and
each coordinate's Rényi divergence is at most α·vᵢ²/(2σ²) (Canonne, Kamath & Steinke 2020, Thm 4), so
they add to at most α·Δ₂²/(2σ²). σ is set from the ρ share: σ = Δ₂/√(2ρᵢ). Its event: a
``DiscreteGaussianEvent`` (σ, Δ = Δ₂) when one person changes one cell (add/remove with c rows, where the
one-dimensional analysis is exact and every accountant applies), else a ``ZCDPEvent`` with that ρ.

**A selection** (MST's choice of a pair) is the exponential mechanism (``ExponentialMechanism``, exact
sampling for a release) at ε, whose event is ``ZCDPEvent(ρ = ε²/8)``: it is ε-bounded-range (Cesar &
Rogers 2021), the bound MST's analysis uses. So a synthetic release is accounted by the zCDP and RDP
accountants (and ``tightest``, which takes them); the PLD, basic and optimal accountants refuse ρ-zCDP
events with their usual message.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from dpdash import _validation as check
from dpdash._search import bracket, smallest_true
from dpdash.accounting.event_base import _smallest_epsilon
from dpdash.accounting.events import DiscreteGaussianEvent, PrivacyEvent, ZCDPEvent
from dpdash.conversions import zcdp_epsilon
from dpdash.engines.evaluate import evaluate
from dpdash.engines.sources import Source
from dpdash.errors import ParameterError
from dpdash.mechanisms import ExponentialMechanism, discrete_gaussian_delta
from dpdash.mechanisms.discrete_gaussian import DiscreteGaussianNoise
from dpdash.synthetic.domain import SyntheticDomain

__all__ = ["Counter", "Measurement", "Selection", "measure", "rho_for", "select", "true_counts"]

#: A function that returns a marginal's true counts over the full domain (in the table's engine).
Counter = Callable[[tuple[str, ...]], np.ndarray]


def rho_for(epsilon: float, delta: float) -> float:
    """The largest ρ such that ρ-zCDP is (ε, δ)-DP under the tight conversion, to the last bit.

    >>> round(rho_for(1.0, 1e-6), 6)
    0.024356
    """
    epsilon = check.epsilon(epsilon)
    delta = check.open_unit(delta, "delta")

    def too_much(rho: float) -> bool:
        return zcdp_epsilon(rho, delta) > epsilon

    lo, hi = bracket(too_much, epsilon**2 / 10.0, lower=1e-300, upper=1e12, what="rho")
    rho = smallest_true(too_much, lo, hi)
    return float(np.nextafter(rho, 0.0))


@dataclass(frozen=True, slots=True)
class Measurement:
    """One noisy marginal: its columns, the noise σ, its sensitivity, and the noisy counts (publishable)."""

    clique: tuple[str, ...]
    sigma: float
    l2_sensitivity: float
    changed_cells: int
    noisy: tuple[int, ...]
    release_grade: bool

    @property
    def rho(self) -> float:
        """Δ₂²/(2σ²) (module docstring)."""
        return self.l2_sensitivity**2 / (2.0 * self.sigma**2)

    def events(self, delta: float) -> list[PrivacyEvent]:
        """The measurement's privacy event: a discrete Gaussian event stated at the smallest ε with exact
        δ(ε) ≤ ``delta`` when one person changes one cell, else its ρ-zCDP event."""
        label = f"synthetic: marginal {' × '.join(self.clique)}"
        sigma, sens = self.sigma, self.l2_sensitivity
        if self.changed_cells == 1 and sens.is_integer():
            eps = _smallest_epsilon(lambda e: float(discrete_gaussian_delta(e, sigma, int(sens))), delta)
            return [DiscreteGaussianEvent(sigma=sigma, sensitivity=int(sens), epsilon=eps, delta=delta,
                                          query=label)]  # fmt: skip
        mechanism = f"Discrete Gaussian on {self.changed_cells} cells (σ = {sigma:.4g}, Δ₂ = {sens:.4g})"
        return [ZCDPEvent(rho=self.rho, mechanism=mechanism, query=label)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "marginal": list(self.clique), "mechanism": "Discrete Gaussian", "sigma": self.sigma,
            "l2_sensitivity": self.l2_sensitivity, "changed_cells": self.changed_cells, "rho": self.rho,
            "noisy_counts": list(self.noisy),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class Selection:
    """One exponential-mechanism choice among candidate marginals (the candidates are public)."""

    candidates: tuple[tuple[str, ...], ...]
    chosen: int
    epsilon: float
    sensitivity: float

    @property
    def rho(self) -> float:
        return self.epsilon**2 / 8.0

    def events(self) -> list[PrivacyEvent]:
        return [ZCDPEvent(rho=self.rho, mechanism="Exponential mechanism (ε-bounded range)",
                          query="synthetic: choice of a marginal")]  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {
            "mechanism": "Exponential mechanism", "epsilon": self.epsilon, "rho": self.rho,
            "utility_sensitivity": self.sensitivity, "chosen": list(self.candidates[self.chosen]),
            "candidates": len(self.candidates),
        }  # fmt: skip


def true_counts(domain: SyntheticDomain, clique: tuple[str, ...], data: pd.DataFrame | Source) -> np.ndarray:
    """The true counts of a marginal over the full domain, in the table's engine. NOT PRIVATE."""
    query = domain.marginal(clique)
    if query.facts.weighted:
        raise ParameterError(
            "a synthetic table measures integer counts with the discrete Gaussian: use bounding='sample' "
            "(each person's rows sampled to c), not 'weight'"
        )
    return np.asarray(evaluate(query, data).values, dtype=np.int64)


def measure(
    domain: SyntheticDomain,
    clique: tuple[str, ...],
    counts: np.ndarray,
    rho: float,
    rng: np.random.Generator | None,
) -> Measurement:
    """Noise on ``counts`` (the marginal's true counts, already summed into its measured cells) at a ρ
    share: σ = Δ₂/√(2ρ) (``planned``); release-grade exact sampling when ``rng`` is None."""
    plan = planned(domain, clique, rho)
    noise = DiscreteGaussianNoise(plan.sigma)
    shape = (int(np.size(counts)),)
    drawn = noise.sample(shape) if rng is None else noise.rvs(shape, random_state=rng)
    noisy = np.asarray(counts, dtype=np.int64) + np.asarray(drawn, dtype=np.int64)
    return dataclasses.replace(plan, noisy=tuple(int(v) for v in noisy), release_grade=rng is None)


def planned(domain: SyntheticDomain, clique: tuple[str, ...], rho: float) -> Measurement:
    """The measurement of ``clique`` at a ρ share before any count is read: σ = Δ₂/√(2ρ) from the
    marginal query's own Δ₂, and the cells one person changes; no noisy counts."""
    sens = domain.marginal(clique).sensitivities
    l2 = float(sens.l2)
    sigma = l2 / math.sqrt(2.0 * check.positive_finite(rho, "rho"))
    return Measurement(tuple(clique), sigma, l2, int(sens.changed_coordinates), (), True)


def select(
    candidates: list[tuple[str, ...]],
    utilities: np.ndarray,
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator | None,
) -> Selection:
    """The exponential mechanism over candidates with (non-monotone) utilities of sensitivity Δu:
    Pr[r] ∝ exp(ε·u_r/(2Δu)); exact sampling on OS randomness when ``rng`` is None."""
    mech = ExponentialMechanism(epsilon=epsilon, sensitivity=sensitivity, monotone=False)
    # Utilities as exact binary rationals, shifted so the largest is 0 (the law is unchanged).
    u = np.asarray(utilities, dtype=float)
    u = u - u.max()
    if rng is None:
        chosen = mech.release([Fraction(float(x)) for x in u])
    else:
        chosen = int(mech.simulate(u, 1, rng)[0])
    return Selection(tuple(tuple(c) for c in candidates), int(chosen), float(epsilon), float(sensitivity))
