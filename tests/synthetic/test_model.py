"""Estimation and sampling (Private-PGM): the tree sampler draws the model's marginals up to rounding."""

from __future__ import annotations

import numpy as np

from dpdash.synthetic.model import Compression, estimate, sample_tree


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
