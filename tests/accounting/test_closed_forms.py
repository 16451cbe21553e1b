"""Exact values: each accountant against its published closed form or a brute-force computation."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special

from dpdash.accounting import (
    ApproxDPEvent,
    GaussianEvent,
    GeometricEvent,
    LaplaceEvent,
    PureDPEvent,
    ZCDPEvent,
    get_accountant,
    group_privacy,
    kov_delta,
    kov_epsilon,
    zcdp_delta,
    zcdp_epsilon,
)
from dpdash.accounting.optimal import kov_heterogeneous_epsilon
from dpdash.accounting.rdp import geometric_rdp, pure_dp_rdp
from dpdash.mechanisms import gaussian_delta

# ---- basic -------------------------------------------------------------------------------------


def test_basic_adds_up_epsilons_and_deltas() -> None:
    basic = get_accountant("basic")
    events = [LaplaceEvent(epsilon=0.1, sensitivity=1.0)] * 10
    assert basic.epsilon(events, 0.0) == 1.0  # exactly: sums are exactly rounded
    mixed = [*events, ApproxDPEvent(epsilon=0.5, delta=2e-7), ApproxDPEvent(epsilon=0.25, delta=3e-7)]
    assert basic.epsilon(mixed, 5e-7) == 1.75
    assert basic.epsilon(mixed, 4e-7) == math.inf  # the releases use more δ than the target
    assert basic.delta(mixed, 1.75) == pytest.approx(5e-7, rel=1e-15)
    assert basic.delta(mixed, 1.7) == 1.0


def test_parallel_composition_is_exact_for_epsilon_and_delta_separately() -> None:
    basic = get_accountant("basic")
    north = [ApproxDPEvent(epsilon=0.5, delta=1e-7, partition=("region", "N"))]
    south = [ApproxDPEvent(epsilon=0.2, delta=4e-7, partition=("region", "S"))] * 2
    whole = [LaplaceEvent(epsilon=0.3, sensitivity=1.0)]
    events = whole + north + south
    assert basic.epsilon(events, 8e-7) == pytest.approx(0.3 + 0.5)  # max ε is North's
    assert basic.delta(events, 0.8) == pytest.approx(8e-7)  # max δ is South's
    by_age = [LaplaceEvent(epsilon=0.1, sensitivity=1.0, partition=("age", "<30"))]
    assert basic.epsilon(events + by_age, 8e-7) == pytest.approx(0.9)


def test_many_cells_fall_back_to_a_bound_that_stays_an_upper_bound() -> None:
    from dpdash.accounting.accountant import MAX_PATHS, compositions

    events = []
    for scheme in ("a", "b", "c"):
        for cell in range(5):  # 5³ = 125 > 64 undominated paths
            events.append(
                LaplaceEvent(epsilon=0.1 + 0.01 * cell, sensitivity=1.0, partition=(scheme, str(cell)))
            )
            events.append(PureDPEvent(epsilon=0.2 - 0.01 * cell, partition=(scheme, str(cell))))
    paths, exact = compositions(events)
    assert not exact and len(paths) == 1 and MAX_PATHS < 5**3
    pld = get_accountant("pld")
    # Every real path (one cell per scheme) costs no more than the bound.
    bound = pld.epsilon(events, 1e-6)
    one_path = [e.setting for e in events if e.partition and e.partition[1] == "4"]
    assert pld.epsilon(one_path, 1e-6) <= bound


# ---- advanced ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "epsilon0", "delta0"), [(100, 0.1, 1e-8), (1000, 0.01, 0.0), (50, 0.05, 1e-9)])
def test_advanced_is_the_textbook_drv_formula(k: int, epsilon0: float, delta0: float) -> None:
    advanced = get_accountant("advanced")
    slack = 1e-6
    target = k * delta0 + slack
    drv = math.sqrt(2 * k * math.log(1 / slack)) * epsilon0 + k * epsilon0 * (math.exp(epsilon0) - 1)
    events = [ApproxDPEvent(epsilon=epsilon0, delta=delta0) if delta0 else PureDPEvent(epsilon=epsilon0)] * k
    assert drv < k * epsilon0  # these are cases where advanced beats basic
    assert advanced.epsilon(events, target) == pytest.approx(drv, rel=1e-12)
    assert advanced.delta(events, drv) == pytest.approx(target, rel=1e-9)


def test_advanced_reports_basic_when_that_is_smaller() -> None:
    events = [PureDPEvent(epsilon=0.1)] * 10  # DRV gives 1.62 at δ′ = 1e-5
    assert get_accountant("advanced").epsilon(events, 1e-5) == 1.0


def test_advanced_heterogeneous_form() -> None:
    events = [PureDPEvent(epsilon=0.05)] * 300 + [PureDPEvent(epsilon=0.02)] * 500
    squares = 300 * 0.05**2 + 500 * 0.02**2
    drift = 300 * 0.05 * math.expm1(0.05) + 500 * 0.02 * math.expm1(0.02)
    expected = math.sqrt(2 * math.log(1e6) * squares) + drift
    assert get_accountant("advanced").epsilon(events, 1e-6) == pytest.approx(expected, rel=1e-12)


# ---- optimal (Kairouz, Oh & Viswanath) --------------------------------------------------------------


def kov_published(epsilon0: float, delta0: float, k: int, i: int) -> float:
    """KOV Theorem 3.3: the δ at ε = (k − 2i)ε₀, as printed."""
    total = sum(
        math.comb(k, j) * (math.exp((k - j) * epsilon0) - math.exp((k - 2 * i + j) * epsilon0))
        for j in range(i)
    )
    delta_i = total / (1 + math.exp(epsilon0)) ** k
    return 1 - (1 - delta0) ** k * (1 - delta_i)


@pytest.mark.parametrize(("epsilon0", "delta0"), [(0.1, 0.0), (1.0, 0.0), (0.5, 1e-6)])
@pytest.mark.parametrize("k", [1, 2, 5, 12, 30])
def test_kov_matches_the_published_formula(epsilon0: float, delta0: float, k: int) -> None:
    for i in range(k // 2 + 1):
        epsilon = (k - 2 * i) * epsilon0
        assert kov_delta(epsilon0, delta0, k, epsilon) == pytest.approx(
            kov_published(epsilon0, delta0, k, i), rel=1e-9, abs=1e-15
        )


def test_kov_is_the_exact_hockey_stick_of_randomized_response_pairs() -> None:
    """Brute force: the k-fold product of the RR pair, for ε between the breakpoints too."""
    epsilon0, k = 0.7, 5
    p = np.array([math.exp(epsilon0), 1.0]) / (1 + math.exp(epsilon0))
    q = p[::-1]
    for epsilon in (0.0, 0.3, 1.1, 2.5, 3.4):
        delta = 0.0
        for outcome in itertools.product([0, 1], repeat=k):
            pp = math.prod(p[o] for o in outcome)
            qq = math.prod(q[o] for o in outcome)
            delta += max(0.0, pp - math.exp(epsilon) * qq)
        assert kov_delta(epsilon0, 0.0, k, epsilon) == pytest.approx(delta, rel=1e-12, abs=1e-15)


def test_kov_epsilon_inverts_kov_delta_to_the_last_bit() -> None:
    for epsilon0, delta0, k, target in [
        (0.1, 0.0, 100, 1e-6),
        (0.5, 1e-7, 40, 1e-4),
        (0.01, 0.0, 1000, 1e-9),
    ]:
        epsilon = kov_epsilon(epsilon0, delta0, k, target)
        assert kov_delta(epsilon0, delta0, k, epsilon) <= target
        assert kov_delta(epsilon0, delta0, k, math.nextafter(epsilon, 0)) > target
    assert kov_epsilon(0.5, 1e-6, 10, 1e-7) == math.inf  # the releases' own δ exceeds the target


def test_optimal_is_exact_for_identical_guarantees_and_a_bound_otherwise() -> None:
    optimal = get_accountant("optimal")
    same = [PureDPEvent(epsilon=0.1)] * 50 + [LaplaceEvent(epsilon=0.1, sensitivity=2.0)] * 50
    assert optimal.exact(same)
    assert optimal.epsilon(same, 1e-6) == kov_epsilon(0.1, 0.0, 100, 1e-6)
    mixed = [PureDPEvent(epsilon=0.1)] * 50 + [PureDPEvent(epsilon=0.05)] * 100
    assert not optimal.exact(mixed)
    bound = optimal.epsilon(mixed, 1e-6)
    assert bound <= min(get_accountant("basic").epsilon(mixed, 1e-6), kov_epsilon(0.1, 0.0, 150, 1e-6))
    assert bound == pytest.approx(
        min(
            kov_epsilon(0.1, 0.0, 150, 1e-6),
            kov_heterogeneous_epsilon([(0.1, 0.0, 50), (0.05, 0.0, 100)], 1e-6),
        )
    )
    # The exact optimum for these guarantees is the composition of their worst-case pairs (PLD): below it.
    assert get_accountant("pld").epsilon(mixed, 1e-6) <= bound


def test_optimal_never_exceeds_basic_or_advanced() -> None:
    for k, epsilon0 in [(5, 1.0), (100, 0.1), (1000, 0.01)]:
        events = [PureDPEvent(epsilon=epsilon0)] * k
        optimal = get_accountant("optimal").epsilon(events, 1e-6)
        assert optimal <= get_accountant("advanced").epsilon(events, 1e-6) * (1 + 1e-12)


# ---- zCDP --------------------------------------------------------------------------------------------


def test_zcdp_simple_conversion() -> None:
    rho, delta = 0.5, 1e-6
    assert zcdp_epsilon(rho, delta, "simple") == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / delta)))


@pytest.mark.parametrize("rho", [1e-4, 0.01, 0.5, 3.0, 40.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-6, 1e-2])
def test_zcdp_tight_conversion_is_cks_corollary_13(rho: float, delta: float) -> None:
    """CKS 2020 Cor. 13 minimised by brute force over a fine grid of orders α."""
    alpha = 1 + np.geomspace(1e-6, 1e6, 400_001)
    brute = float(
        np.min(alpha * rho + np.log1p(-1 / alpha) - (math.log(delta) + np.log(alpha)) / (alpha - 1))
    )
    kl_bound = delta**2 + math.expm1(-rho) > 0
    tight = zcdp_epsilon(rho, delta)
    assert tight == (0.0 if kl_bound else pytest.approx(max(brute, 0.0), rel=1e-7, abs=1e-12))
    assert tight <= zcdp_epsilon(rho, delta, "simple")
    if tight > 0:
        assert zcdp_delta(rho, tight) == pytest.approx(delta, rel=1e-5)


def test_zcdp_accountant_uses_exact_rho() -> None:
    zcdp = get_accountant("zcdp")
    gauss = GaussianEvent.from_sigma(sigma=4.0, sensitivity=2.0, delta=1e-6)
    events = [gauss] * 3 + [LaplaceEvent(epsilon=0.2, sensitivity=1.0), ZCDPEvent(rho=0.05)]
    rho = 3 * 2.0**2 / (2 * 4.0**2) + 0.2**2 / 2 + 0.05
    assert zcdp.rho(events) == pytest.approx(rho)
    assert zcdp.epsilon(events, 1e-6) == pytest.approx(zcdp_epsilon(rho, 1e-6))


def test_the_tight_zcdp_total_of_gaussians_is_close_to_their_exact_profile() -> None:
    """k Gaussians with σ compose to one with σ/√k: exact ε below every accountant's; PLD within 0.1%,
    the Rényi-based conversions within 10%."""
    sigma, k, target = 20.0, 100, 1e-6
    exact_sigma = sigma / math.sqrt(k)
    lo, hi = 0.0, 50.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if gaussian_delta(mid, exact_sigma, 1.0) <= target else (mid, hi)
    exact = hi
    events = [GaussianEvent.from_sigma(sigma=sigma, sensitivity=1.0, delta=1e-9)] * k
    for name, tolerance in [("pld", 1e-3), ("zcdp", 0.1), ("rdp", 0.1)]:
        total = get_accountant(name).epsilon(events, target)
        assert exact * (1 - 1e-9) <= total <= exact * (1 + tolerance), name


# ---- group privacy --------------------------------------------------------------------------------


def test_group_privacy() -> None:
    assert group_privacy(0.5, 1e-6, 1) == (0.5, 1e-6)
    eps, delta = group_privacy(0.5, 1e-6, 4)
    assert eps == 2.0 and delta == pytest.approx(4 * math.exp(1.5) * 1e-6)
    assert group_privacy(2.0, 0.0, 3) == (6.0, 0.0)
    assert group_privacy(5.0, 1e-3, 10) == (50.0, 1.0)  # δ capped


# ---- Rényi curves ------------------------------------------------------------------------------------


def brute_rdp(log_p: np.ndarray, log_q: np.ndarray, alpha: float) -> float:
    return float(special.logsumexp(alpha * log_p + (1 - alpha) * log_q)) / (alpha - 1)


@pytest.mark.parametrize(("a", "d"), [(0.3, 1), (0.3, 3), (1.5, 2), (0.05, 4)])
def test_geometric_rdp_closed_form(a: float, d: int) -> None:
    z = np.arange(-6000, 6000)
    log_c = math.log(math.tanh(a / 2))
    log_p, log_q = log_c - a * np.abs(z), log_c - a * np.abs(z - d)
    orders = np.array([1.25, 2.0, 5.0, 32.0, 256.0])
    expected = [brute_rdp(log_p, log_q, alpha) for alpha in orders]
    assert geometric_rdp(a, d, orders) == pytest.approx(expected, rel=1e-10)


def test_pure_dp_rdp_is_the_randomized_response_pair() -> None:
    epsilon = 0.8
    log_p = np.log(np.array([math.exp(epsilon), 1.0]) / (1 + math.exp(epsilon)))
    orders = np.array([1.5, 3.0, 20.0, 1024.0])
    expected = [brute_rdp(log_p, log_p[::-1], alpha) for alpha in orders]
    curve = pure_dp_rdp(epsilon, orders)
    assert curve == pytest.approx(expected, rel=1e-12)
    assert np.all(curve <= np.minimum(epsilon, orders * epsilon**2 / 2) + 1e-12)


def test_rdp_geometric_total_is_at_most_the_pure_bound() -> None:
    """With Δ = 1 the geometric mechanism's loss is ±ε, as for randomized response; with Δ = 2 it is less."""
    rdp = get_accountant("rdp")
    pure = rdp.epsilon([PureDPEvent(epsilon=0.1)] * 100, 1e-6)
    assert rdp.epsilon([GeometricEvent(epsilon=0.1, sensitivity=1)] * 100, 1e-6) == pytest.approx(
        pure, rel=1e-12
    )
    assert rdp.epsilon([GeometricEvent(epsilon=0.1, sensitivity=2)] * 100, 1e-6) < pure
