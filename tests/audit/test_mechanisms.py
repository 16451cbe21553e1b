"""Every mechanism, audited: its empirical lower bound never exceeds its claimed ε, the audit has power,
and deliberately broken mechanisms are caught.

The draws are release-grade (OS randomness), so they cannot be seeded; the tolerances make a false
failure negligible instead:

- soundness: each audit runs at confidence 1 − 0.01/m over the m audits of this module (Bonferroni), so
  a correct mechanism fails *any* of them with probability ≤ 1% in a run, by construction, and in fact
  far less (Clopper–Pearson is conservative and most events' true ratio is well below e^ε);
- power: the 99% lower bound must reach 90% of ε (strong: 97%) for Laplace, geometric and randomized
  response; at these trial counts the expected bound is ≥ 0.97 ε (strong: 0.99 ε), more than
  8 standard errors above the threshold.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from dpdash.audit import AuditTarget, audit, mechanism_target
from dpdash.audit.targets import min_eigenvalue
from dpdash.mechanisms import (
    DiscreteGaussian,
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Laplace,
    PermuteAndFlip,
    RandomizedResponse,
    ReportNoisyMax,
    Staircase,
    VectorMechanism,
    Wishart,
)

TO_BE_WORSE = [0, 1, 1, 1, 1]  # one candidate gains Δ while the others lose Δ: the ratio nears e^ε
TO_BE_BETTER = [1, 0, 0, 0, 0]

#: name → (the audit target, trials relative to the default)
CASES: dict[str, tuple[Callable[[], AuditTarget], float]] = {
    "laplace": (lambda: mechanism_target(Laplace(epsilon=1.0, sensitivity=1.0), 0.0, 1.0), 1),
    "laplace_large_sensitivity": (
        lambda: mechanism_target(Laplace(epsilon=0.5, sensitivity=100.0), 1000.0, 900.0),
        1,
    ),
    "laplace_vector": (
        lambda: mechanism_target(
            VectorMechanism.laplace(epsilon=1.0, l1_sensitivity=2.0, dimension=3),
            [0.0, 0.0, 0.0],
            [1.0, -1.0, 0.0],
        ),
        1,
    ),
    "gaussian_analytic": (
        lambda: mechanism_target(Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0), 0.0, 1.0),
        1,
    ),
    "gaussian_classic": (
        lambda: mechanism_target(
            Gaussian(epsilon=0.5, delta=1e-3, sensitivity=1.0, calibration="classic"), 0.0, 1.0
        ),
        1,
    ),
    "gaussian_vector": (
        lambda: mechanism_target(
            VectorMechanism.gaussian(epsilon=1.0, delta=1e-5, l2_sensitivity=1.0, dimension=4),
            [0.0, 0.0, 0.0, 0.0],
            [0.6, 0.8, 0.0, 0.0],
        ),
        1,
    ),
    "geometric": (lambda: mechanism_target(Geometric(epsilon=1.0, sensitivity=1), 0, 1), 1),
    "geometric_sensitivity_3": (lambda: mechanism_target(Geometric(epsilon=0.5, sensitivity=3), 10, 7), 1),
    "discrete_gaussian": (
        lambda: mechanism_target(DiscreteGaussian(epsilon=1.0, delta=1e-5, sensitivity=1), 0, 1),
        1,
    ),
    "staircase": (lambda: mechanism_target(Staircase(epsilon=1.0, sensitivity=1.0), 0.0, 1.0), 1),
    "exponential": (
        lambda: mechanism_target(
            ExponentialMechanism(epsilon=1.0, sensitivity=1.0), TO_BE_WORSE, TO_BE_BETTER
        ),
        0.5,
    ),
    "exponential_monotone": (
        lambda: mechanism_target(
            ExponentialMechanism(epsilon=1.0, sensitivity=1.0, monotone=True), [0, 0, 0, 0], [1, 0, 0, 0]
        ),
        0.5,
    ),
    "permute_and_flip": (
        lambda: mechanism_target(PermuteAndFlip(epsilon=1.0, sensitivity=1.0), TO_BE_WORSE, TO_BE_BETTER),
        0.5,
    ),
    "report_noisy_max": (
        lambda: mechanism_target(
            ReportNoisyMax(epsilon=1.0, sensitivity=1, monotone=False), TO_BE_WORSE, TO_BE_BETTER
        ),
        0.5,
    ),
    "report_noisy_max_counts": (
        lambda: mechanism_target(ReportNoisyMax(epsilon=1.0, sensitivity=1), [5, 5, 4], [5, 6, 4]),
        0.5,
    ),
    "randomized_response": (lambda: mechanism_target(RandomizedResponse(epsilon=1.0), 0, 1), 1),
    "randomized_response_4": (
        lambda: mechanism_target(RandomizedResponse(epsilon=2.0, categories=4), 0, 3),
        1,
    ),
}

#: Every audit whose bound must stay at or below the claim in this module (for the Bonferroni split).
SOUND_AUDITS = len(CASES) + 2  # + the Wishart mechanism at its true δ, + the query audits' own module
CONFIDENCE = 1.0 - 0.01 / SOUND_AUDITS


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_mechanism_shows_more_privacy_loss_than_it_claims(name: str, trials: int) -> None:
    build, share = CASES[name]
    result = audit(build(), trials=int(trials * share), confidence=CONFIDENCE)
    assert result.epsilon_lower <= result.claimed_epsilon, result.verdict
    assert not result.refutes_claim


@pytest.mark.parametrize("name", ["laplace", "geometric", "randomized_response"])
def test_the_audit_has_power_on_pure_dp_counts(name: str, trials: int, strong: bool) -> None:
    result = audit(CASES[name][0](), trials=trials, confidence=0.99)
    floor = 0.97 if strong else 0.90
    assert result.epsilon_lower >= floor * result.claimed_epsilon, result.verdict


@dataclass(frozen=True)
class Broken:
    """A mechanism that claims ``epsilon`` but draws from ``inner`` (e.g. half the noise it needs)."""

    inner: Any
    epsilon: float
    name: str = "broken"
    delta: float = 0.0

    def release_trials(self, values: Any, n: int) -> np.ndarray:
        return self.inner.release_trials(values, n)


BROKEN: dict[str, Callable[[], AuditTarget]] = {
    # noise scale halved: Lap(Δ/(2ε)) while claiming ε
    "laplace_half_noise": lambda: mechanism_target(
        Broken(Laplace(epsilon=2.0, sensitivity=1.0), 1.0), 0.0, 1.0
    ),
    # sensitivity understated: calibrated to Δ = 1 for a query that moves by 2
    "laplace_sensitivity_understated": lambda: mechanism_target(
        Laplace(epsilon=1.0, sensitivity=1.0), 0.0, 2.0
    ),
    "geometric_sensitivity_understated": lambda: mechanism_target(
        Geometric(epsilon=0.5, sensitivity=1), 0, 2
    ),
    # σ a third of what (1, 10⁻⁵) needs (at half, the excess loss hides in tails of mass ~δ that
    # 10⁵ trials cannot see: the bound lands near 1.0–1.2, too close to call)
    "gaussian_third_noise": lambda: mechanism_target(
        Broken(Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1 / 3), 1.0, delta=1e-5), 0.0, 1.0
    ),
    # the monotone calibration (b = Δu/ε) used on utilities that move in both directions
    "report_noisy_max_monotone_misused": lambda: mechanism_target(
        ReportNoisyMax(epsilon=1.0, sensitivity=1, monotone=True), TO_BE_WORSE, TO_BE_BETTER
    ),
    "exponential_sensitivity_understated": lambda: mechanism_target(
        ExponentialMechanism(epsilon=1.0, sensitivity=1.0), [0, 2, 2, 2, 2], [2, 0, 0, 0, 0]
    ),
    "randomized_response_overstated": lambda: mechanism_target(
        Broken(RandomizedResponse(epsilon=1.5), 1.0), 0, 1, events="sets"
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_mechanisms_are_caught(name: str, trials: int) -> None:
    # A true ε of about 2× the claim or more; refuted at 99.9% confidence.
    result = audit(BROKEN[name](), trials=trials // 2, confidence=0.999)
    assert result.refutes_claim, result.verdict
    assert result.verdict.startswith("VIOLATION")


def _wishart_target(delta: float) -> AuditTarget:
    # Rows: the second table has one more row (x′, at the norm bound) than the first, which has x = 0
    # there. On the first table, output − A′ is not positive semidefinite with probability 1 − e^(−ε/3);
    # on the second, never: the event {λ_min(output − A′) < 0} shows an unbounded privacy loss.
    w = Wishart(epsilon=1.0, rows=4, dimension=2)
    first = np.array([[0.5, 0.0], [0.0, 0.5], [0.3, 0.3], [0.0, 0.0]])
    second = np.array([[0.5, 0.0], [0.0, 0.5], [0.3, 0.3], [0.0, 1.0]])
    return mechanism_target(
        w,
        first,
        second,
        statistic=min_eigenvalue(w.true_matrix(second)),
        statistic_label="smallest eigenvalue of output − A′",
        delta=delta,
    )


def test_the_wishart_mechanism_is_caught_breaking_its_published_claim(trials: int) -> None:
    # Jiang et al. (2016) claim (ε, 0)-DP; the audit refutes it at any ε: the lower bound is large.
    result = audit(_wishart_target(0.0), trials=trials // 10, confidence=0.99)
    assert result.refutes_claim, result.verdict
    assert result.epsilon_lower > 5.0
    assert result.event.describe().startswith("output ≤")


def test_the_wishart_mechanism_keeps_its_true_guarantee(trials: int) -> None:
    # (ε′, 1 − e^(−ε/3)) for every ε′: with that δ claimed, the same event shows nothing.
    w = Wishart(epsilon=1.0, rows=4, dimension=2)
    assert w.delta == pytest.approx(-math.expm1(-1.0 / 3.0))
    result = audit(_wishart_target(w.delta), trials=trials // 10, confidence=CONFIDENCE)
    assert not result.refutes_claim, result.verdict
