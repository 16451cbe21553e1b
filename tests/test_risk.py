"""Risk statements against their closed forms, MATH.md's worked values and an independent check."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdash import risk
from dpdash.mechanisms import Laplace


def test_posterior_bound_closed_form() -> None:
    for p in [0.0, 0.01, 0.3, 0.5, 0.99, 1.0]:
        for eps in [0.0, 0.1, 1.0, 5.0]:
            expected = math.exp(eps) * p / (1 - p + math.exp(eps) * p)
            assert float(risk.posterior_bound(p, eps)) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert float(risk.posterior_bound(0.5, 0.0)) == 0.5  # ε = 0: nothing learnt
    assert float(risk.posterior_bound(0.5, 800.0)) == 1.0  # no overflow at huge ε


def test_posterior_bound_is_attained_by_a_laplace_release() -> None:
    """Independent check: a Bayesian attacker watching a Laplace count whose true value is c (person
    out) or c + 1 (person in) reaches exactly the bound when the output lands at or above c + 1."""
    eps, prior = 1.0, 0.2
    noise = Laplace(epsilon=eps, sensitivity=1.0).noise
    y = 7.5  # any output ≥ c + 1 with c = 5
    like_in, like_out = noise.pdf(y - 6), noise.pdf(y - 5)
    posterior = prior * like_in / (prior * like_in + (1 - prior) * like_out)
    assert posterior == pytest.approx(float(risk.posterior_bound(prior, eps)), rel=1e-12)


def test_max_detection_rate_matches_math_md() -> None:
    """ε = 1, δ = 0: at 1% false positives at most 2.7% detected; at ε = 5 up to 99%."""
    assert float(risk.max_detection_rate(0.01, 1.0)) == pytest.approx(math.e * 0.01, rel=1e-12)
    assert round(float(risk.max_detection_rate(0.01, 1.0)), 3) == 0.027
    assert round(float(risk.max_detection_rate(0.01, 5.0)), 2) == 0.99
    fpr = np.linspace(0, 1, 101)
    tpr = risk.max_detection_rate(fpr, 0.7, 1e-3)
    assert np.all(np.diff(tpr) >= -1e-15) and tpr[-1] == 1.0
    # Both inequalities of the hypothesis-testing region hold with equality on the curve's two pieces.
    fnr = 1 - tpr
    assert np.all(fpr + math.exp(0.7) * fnr >= 1 - 1e-3 - 1e-12)
    assert np.all(fnr + math.exp(0.7) * fpr >= 1 - 1e-3 - 1e-12)


def test_posterior_table_and_icon_array() -> None:
    table = risk.posterior_table([0.1, 0.5], [0.0, 1.0])
    assert table.shape == (2, 2)
    assert table[1, 1] == pytest.approx(0.7310585786300049)
    icons = risk.icon_array(0.1, 1.0)
    assert (icons.before, icons.after) == (10, 24)  # 23.2% rounded up: never understate the risk
    assert "10 in 100" in icons.sentence() and "24 in 100" in icons.sentence()


def test_reference_points_state_their_definitions() -> None:
    for point in risk.REFERENCE_POINTS:
        assert point.epsilon > 0 and point.unit and point.window and point.source
    census = next(p for p in risk.REFERENCE_POINTS if "Census" in p.label)
    assert 17.0 < census.epsilon < 18.0  # ρ = 2.63 at δ = 1e-10


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: risk.posterior_bound(1.5, 1.0), r"prior must be probabilities in \[0, 1\]"),
        (lambda: risk.posterior_bound(0.5, -1.0), r"epsilon must be a finite number >= 0"),
        (lambda: risk.max_detection_rate(0.1, 1.0, 1.0), r"delta must be a number in \[0, 1\)"),
        (lambda: risk.posterior_table([0.5], [math.inf]), r"epsilons must be finite numbers >= 0"),
    ],
)
def test_risk_validation(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
