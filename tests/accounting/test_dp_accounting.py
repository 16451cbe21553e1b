"""Agreement with Google's dp_accounting on the compositions it supports."""

from __future__ import annotations

import dp_accounting
import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as pld_module

from dpdash import Gaussian
from dpdash.accounting import (
    GaussianEvent,
    GeometricEvent,
    LaplaceEvent,
    ZCDPEvent,
    event_for,
    get_accountant,
)
from dpdash.accounting.pld import _epsilon_for_delta, _Pmf

DELTAS = [1e-9, 1e-6, 1e-3]


def dp_pld(*parts: tuple[dp_event.DpEvent, int]) -> dp_accounting.pld.PLDAccountant:
    accountant = dp_accounting.pld.PLDAccountant()
    for event, count in parts:
        accountant.compose(dp_event.SelfComposedDpEvent(event, count))
    return accountant


def dp_rdp(*parts: tuple[dp_event.DpEvent, int]) -> dp_accounting.rdp.RdpAccountant:
    accountant = dp_accounting.rdp.RdpAccountant()
    for event, count in parts:
        accountant.compose(dp_event.SelfComposedDpEvent(event, count))
    return accountant


@pytest.mark.parametrize(("epsilon", "k"), [(0.1, 100), (1.0, 10), (0.02, 500)])
def test_laplace_compositions(epsilon: float, k: int) -> None:
    events = [LaplaceEvent(epsilon=epsilon, sensitivity=3.0)] * k  # only ε = Δ/b matters
    reference = dp_accounting.LaplaceDpEvent(noise_multiplier=1.0 / epsilon)
    for delta in DELTAS:
        assert get_accountant("pld").epsilon(events, delta) == pytest.approx(
            dp_pld((reference, k)).get_epsilon(delta), rel=1e-5
        )
        assert get_accountant("rdp").epsilon(events, delta) == pytest.approx(
            dp_rdp((reference, k)).get_epsilon(delta), rel=1e-12
        )


@pytest.mark.parametrize(("sigma", "k"), [(5.0, 20), (30.0, 400), (1.0, 3)])
def test_gaussian_compositions(sigma: float, k: int) -> None:
    events = [GaussianEvent.from_sigma(sigma=2 * sigma, sensitivity=2.0, delta=1e-10)] * k
    reference = dp_accounting.GaussianDpEvent(noise_multiplier=sigma)
    for delta in DELTAS:
        assert get_accountant("pld").epsilon(events, delta) == pytest.approx(
            dp_pld((reference, k)).get_epsilon(delta), rel=1e-5
        )
        assert get_accountant("rdp").epsilon(events, delta) == pytest.approx(
            dp_rdp((reference, k)).get_epsilon(delta), rel=1e-12
        )
    assert get_accountant("pld").delta(events, 2.0) == pytest.approx(
        dp_pld((reference, k)).get_delta(2.0), rel=1e-4
    )


def test_mixed_laplace_gaussian_and_discrete_laplace() -> None:
    gauss = event_for(Gaussian(epsilon=0.5, delta=1e-8, sensitivity=1.0))
    events = (
        [LaplaceEvent(epsilon=0.05, sensitivity=1.0)] * 120
        + [gauss] * 30
        + [GeometricEvent(epsilon=0.2, sensitivity=2)] * 25
    )
    reference = dp_pld(
        (dp_accounting.LaplaceDpEvent(noise_multiplier=20.0), 120),
        (dp_accounting.GaussianDpEvent(noise_multiplier=gauss.sigma), 30),
        (dp_event.DiscreteLaplaceDpEvent(noise_parameter=0.1, sensitivity=2), 25),
    )
    for delta in DELTAS:
        assert get_accountant("pld").epsilon(events, delta) == pytest.approx(
            reference.get_epsilon(delta), rel=1e-5
        )
    reference_rdp = dp_rdp(
        (dp_accounting.LaplaceDpEvent(noise_multiplier=20.0), 120),
        (dp_accounting.GaussianDpEvent(noise_multiplier=gauss.sigma), 30),
    )
    assert get_accountant("rdp").epsilon(events[:150], 1e-6) == pytest.approx(reference_rdp.get_epsilon(1e-6))


def test_one_at_a_time_agrees_with_composition_by_count() -> None:
    """dp_accounting composing each release separately (its slow path) gives the same total."""
    accountant = dp_accounting.pld.PLDAccountant()
    events = []
    for i in range(30):
        epsilon = (0.1, 0.3)[i % 2]
        accountant.compose(dp_accounting.LaplaceDpEvent(noise_multiplier=1 / epsilon))
        events.append(LaplaceEvent(epsilon=epsilon, sensitivity=1.0))
    assert get_accountant("pld").epsilon(events, 1e-6) == pytest.approx(
        accountant.get_epsilon(1e-6), rel=1e-6
    )


def test_zcdp_matches_rdp_of_the_same_rho_up_to_the_orders_grid() -> None:
    """dp_accounting converts ρ over a finite grid of orders; the zcdp accountant minimises over all α."""
    for rho in (1e-3, 0.1, 2.0):
        reference = dp_rdp((dp_accounting.ZCDpEvent(rho=rho), 1)).get_epsilon(1e-6)
        ours = get_accountant("zcdp").epsilon([ZCDPEvent(rho=rho)], 1e-6)
        assert reference * 0.95 <= ours <= reference * (1 + 1e-9)
        assert get_accountant("rdp").epsilon([ZCDPEvent(rho=rho)], 1e-6) == pytest.approx(
            reference, rel=1e-12
        )


def test_vectorised_epsilon_for_delta_matches_dp_accounting() -> None:
    for distribution in (
        pld_module.from_laplace_mechanism(2.0).self_compose(7),
        pld_module.from_gaussian_mechanism(3.0).self_compose(5),
        pld_module.from_discrete_laplace_mechanism(0.7, sensitivity=3),
    ):
        dense = distribution._pmf_remove.to_dense_pmf()
        assert isinstance(dense, pld_pmf.DensePLDPmf)
        pmf = _Pmf(dense._lower_loss, np.asarray(dense._probs), dense._infinity_mass)
        for delta in (1e-12, 1e-9, 1e-6, 1e-3, 0.1, 0.3, 0.9):
            assert _epsilon_for_delta(pmf, dense._discretization, delta) == pytest.approx(
                dense.get_epsilon_for_delta(delta), rel=1e-9, abs=1e-12
            )


@pytest.mark.parametrize("interval", [1e-4, 1e-3])
def test_single_laplace_and_gaussian_plds_are_dp_accountings_to_the_bit(interval: float) -> None:
    """``single_pld`` builds Laplace and Gaussian PLDs with dp_accounting's own connect-the-dots code and
    a vectorised inverse privacy loss: the pmfs equal ``from_laplace_mechanism`` / ``from_gaussian_mechanism``
    exactly (lower loss, every mass, infinity mass, symmetry)."""
    from dpdash.accounting import GaussianEvent, LaplaceEvent
    from dpdash.accounting.pld import single_pld

    rng = np.random.default_rng(12)
    settings = [
        LaplaceEvent(epsilon=float(e), sensitivity=float(d)).setting
        for e, d in zip(np.exp(rng.uniform(-7, 1.5, 40)), rng.choice([1.0, 2.0, 0.5], 40), strict=True)
    ]
    settings += [
        GaussianEvent.from_sigma(sigma=float(s), sensitivity=1.0, delta=1e-9).setting
        for s in np.exp(rng.uniform(-0.5, 6, 40))
    ]
    for setting in settings:
        mine = single_pld(setting, interval)
        if isinstance(setting, LaplaceEvent):
            theirs = pld_module.from_laplace_mechanism(
                1.0 / setting.epsilon, value_discretization_interval=interval
            )
        else:
            theirs = pld_module.from_gaussian_mechanism(
                setting.noise_multiplier, value_discretization_interval=interval
            )
        assert mine._symmetric and theirs._symmetric
        a, b = mine._pmf_remove.to_dense_pmf(), theirs._pmf_remove.to_dense_pmf()
        assert a._lower_loss == b._lower_loss
        assert a._infinity_mass == b._infinity_mass
        assert np.array_equal(a._probs, b._probs)


@pytest.mark.parametrize("interval", [1e-4, 1e-3])
def test_single_discrete_gaussian_plds_are_dp_accountings_to_the_bit(interval: float) -> None:
    """``single_pld`` sums dp_accounting's privacy buckets of the discrete Gaussian with numpy: the pmf
    equals ``from_discrete_gaussian_mechanism``'s exactly, for small and large σ and several sensitivities."""
    from dpdash import DiscreteGaussian
    from dpdash.accounting import event_for
    from dpdash.accounting.pld import single_pld

    for epsilon in (0.004, 0.03, 0.2, 1.0, 3.0, 8.0):
        for sensitivity in (1, 2, 5):
            mechanism = DiscreteGaussian(epsilon=epsilon, delta=1e-9, sensitivity=sensitivity)
            setting = event_for(mechanism).setting
            mine = single_pld(setting, interval)
            theirs = pld_module.from_discrete_gaussian_mechanism(
                setting.sigma, sensitivity=setting.sensitivity, value_discretization_interval=interval
            )
            assert mine._symmetric and theirs._symmetric
            a, b = mine._pmf_remove.to_dense_pmf(), theirs._pmf_remove.to_dense_pmf()
            assert a._lower_loss == b._lower_loss
            assert a._infinity_mass == b._infinity_mass
            assert np.array_equal(a._probs, b._probs)
