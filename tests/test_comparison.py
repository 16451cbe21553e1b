"""The mechanism line-up against the mechanisms themselves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdash import comparison
from dpdash.mechanisms import Gaussian, Laplace


def test_compare_has_every_mechanism_and_explains_the_missing_ones() -> None:
    table = comparison.compare(epsilon=1.0, delta=1e-6, l1_sensitivity=1, l2_sensitivity=1, k=10)
    assert list(table["mechanism"]) == list(comparison.LINEUP)
    classic = table.set_index("mechanism").loc["Gaussian (classic)"]
    assert math.isnan(classic["scale"]) and "ε < 1" in classic["note"]
    laplace = table.set_index("mechanism").loc["Laplace"]
    m = Laplace(epsilon=1.0, sensitivity=1.0)
    assert laplace["half_width_1"] == m.accuracy(0.95, 1)
    assert laplace["half_width_k"] == m.accuracy(0.95, 10)
    assert laplace["union_bound_k"] == m.accuracy_union_bound(0.95, 10)


def test_the_ux_gap_between_classic_gaussian_and_laplace_is_visible() -> None:
    """Just under ε = 1 (classic needs ε < 1), δ = 1e-6: classic Gaussian ±10.5 against Laplace ±3.0."""
    table = comparison.compare(epsilon=0.99, delta=1e-6, l1_sensitivity=1, l2_sensitivity=1).set_index(
        "mechanism"
    )
    assert table.loc["Gaussian (classic)", "half_width_1"] == pytest.approx(10.49, abs=0.01)
    assert table.loc["Laplace", "half_width_1"] == pytest.approx(3.03, abs=0.01)


def test_integer_mechanisms_need_an_integer_sensitivity() -> None:
    table = comparison.compare(epsilon=1.0, delta=1e-6, l1_sensitivity=2.5, l2_sensitivity=1).set_index(
        "mechanism"
    )
    for label in ("Geometric", "Discrete Gaussian"):
        assert "integer sensitivity" in table.loc[label, "note"]


def test_accuracy_curves_match_single_evaluations() -> None:
    curves = comparison.accuracy_curves(
        epsilons=np.array([0.1, 1.0]), delta=1e-5, l1_sensitivity=1, l2_sensitivity=2, k=3
    )
    row = curves[(curves["mechanism"] == "Gaussian (analytic)") & (curves["epsilon"] == 0.1)]
    expected = Gaussian(epsilon=0.1, delta=1e-5, sensitivity=2.0).accuracy(0.95, 3)
    assert row["half_width"].item() == pytest.approx(expected, rel=1e-12)
    at_one = set(curves[curves["epsilon"] == 1.0]["mechanism"])
    assert at_one == set(comparison.LINEUP) - {"Gaussian (classic)"}


def test_epsilon_for_accuracy_inverts_accuracy() -> None:
    table = comparison.epsilon_for_accuracy(alpha=5.0, delta=1e-5, l1_sensitivity=1, l2_sensitivity=1)
    table = table.set_index("mechanism")
    assert table.loc["Laplace", "epsilon"] == pytest.approx(math.log(20) / 5, rel=1e-12)
    for label, row in table.iterrows():
        if row["note"]:
            assert label == "Gaussian (classic)" and "ε < 1" in row["note"]
        else:
            assert row["half_width_k"] <= 5.0


def test_lineup_validates() -> None:
    with pytest.raises(ValueError, match="epsilon must be a finite number > 0"):
        comparison.lineup(epsilon=0, delta=1e-5, l1_sensitivity=1, l2_sensitivity=1)
