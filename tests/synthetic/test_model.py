"""Estimation and sampling (Private-PGM): the tree sampler draws the model's marginals up to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from dpdash.synthetic.model import Compression, estimate, sample_tree, simplex_projection


def test_the_tree_sampler_follows_the_model() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(50, 500, (4, 5)).astype(float)
    y = rng.integers(50, 500, (5, 3)).astype(float)
    y *= x.sum(axis=0)[:, None] / y.sum(axis=1)[:, None]  # consistent on the shared column
    log = [(("a", "b"), x.ravel(), 1.0, None), (("b", "c"), y.ravel(), 1.0, None)]
    fit = estimate({"a": 4, "b": 5, "c": 3}, log, iterations=3000)
    rows = 100_000
    codes = sample_tree(fit, [("a", "b"), ("b", "c")], rows, np.random.default_rng(1))
    for clique in (("a", "b"), ("b", "c")):
        shape = [fit.sizes[c] for c in clique]
        drawn = np.bincount(np.ravel_multi_index([codes[c] for c in clique], shape), minlength=np.prod(shape))
        model = fit.project(clique) * rows / fit.total
        # Randomized rounding: the root exactly up to 1 per cell, a child up to 1 per (parent, child) cell.
        assert np.abs(drawn - model).max() <= 2.0, clique


def test_compression_merges_the_cells_below_three_sigma() -> None:
    c = Compression.from_one_way({"a": np.array([100.0, 2.0, 50.0, -3.0])}, {"a": 10.0})
    assert c.mapping["a"].tolist() == [0, 2, 1, 2] and c.size("a") == 3
    y, weights = c.one_way("a", np.array([100.0, 2.0, 50.0, -3.0]))
    assert np.allclose(weights, [1, 1, 1 / np.sqrt(2)]) and np.allclose(y, [100, 50, -1 / np.sqrt(2)])
    counts = c.counts(("a",), np.array([7, 1, 5, 2]), [4])
    assert counts.tolist() == [7, 5, 3]
    expanded = c.expand("a", np.array([2] * 1000), np.random.default_rng(0))
    assert set(expanded.tolist()) == {1, 3}


def test_simplex_projection_is_the_nearest_nonnegative_point_with_that_total() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        y = rng.normal(0, 30, rng.integers(1, 12)) + rng.choice([0, 60], 1)
        total = float(rng.uniform(1, 200))
        x = simplex_projection(y, total)
        assert x.min() >= 0 and x.sum() == pytest.approx(total, rel=1e-12)
        # KKT: x = max(y − τ, 0) for one τ, i.e. y − x is the same τ wherever x > 0 and ≤ τ elsewhere.
        tau = (y - x)[x > 0]
        assert np.ptp(tau) < 1e-9 and np.all(y[x == 0] <= tau[0] + 1e-9)
        # and no random feasible point is nearer
        for _ in range(20):
            z = rng.dirichlet(np.ones(y.size)) * total
            assert np.sum((x - y) ** 2) <= np.sum((z - y) ** 2) + 1e-9


def test_a_merged_cell_is_expanded_by_its_cells_noisy_counts() -> None:
    # Cells 1 and 3 merged (below 3σ = 30): 3's noisy count 24 against 1's −6: the least-squares split with
    # total 18 is (0, 18), so cell 1 (an empty category, say) gets no rows, where the reference's uniform
    # spread gives it half of them.
    c = Compression.from_one_way({"a": np.array([100.0, -6.0, 50.0, 24.0])}, {"a": 10.0})
    assert np.allclose(c.within["a"], [1, 0, 1, 1])
    expanded = c.expand("a", np.array([2] * 1000), np.random.default_rng(0))
    assert set(expanded.tolist()) == {3}
    # noisy 20 and 10 of a total 30: shares 2/3 and 1/3 (seeded; binomial sd of 2000 draws ≈ 21)
    c = Compression.from_one_way({"a": np.array([100.0, 20.0, 10.0])}, {"a": 10.0})
    drawn = np.bincount(c.expand("a", np.array([1] * 2000), np.random.default_rng(1)), minlength=3)
    assert drawn[0] == 0 and abs(drawn[1] - 2000 * 2 / 3) < 4 * 21
