"""Private-PGM (``mbi``, McKenna, Sheldon & Miklau 2019) for the estimation and sampling steps.

Everything here is post-processing of the noisy marginals: a graphical model fitted to them by mirror
descent, and rows drawn from it. ``mbi`` (with JAX on CPU) is imported on first use, so the rest of dpdash
works without it; it runs in 64-bit floats (``mbi`` warns that 32 bits stall on large tables).

Also MST's domain compression (McKenna, Miklau & Sheldon 2021, §4): after the one-way marginals, the cells
of a column whose noisy count is below 3σ are merged into one cell, a public choice made from noisy counts
only; the merged cell's measurement is the sum of its noisy counts, weighted by 1/√n as in the reference.
"""

from __future__ import annotations

import secrets
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpdash.errors import DPDashError

__all__ = ["Compression", "Fit", "estimate", "sample_codes", "sample_tree", "simplex_projection"]

#: Mirror-descent iterations of the final fit (the reference MST uses 5000 with its older solver; the
#: ``mbi`` 2 solver converges in far fewer on these models).
ITERATIONS = 2000


def _mbi() -> Any:
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_enable_compilation_cache", False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import mbi
    except ImportError as exc:  # pragma: no cover - an install without the optional dependency
        raise DPDashError(
            "synthetic tables need Private-PGM: install dpdash's 'synthetic' extra (the mbi package, which "
            "brings JAX on CPU); requirements.txt pins it"
        ) from exc
    return mbi


def simplex_projection(y: np.ndarray, total: float) -> np.ndarray:
    """The point of {x ≥ 0, Σx = total} nearest to ``y`` in L2 (Duchi, Shalev-Shwartz, Singer & Chandra
    2008, Fig. 1): xᵢ = max(yᵢ − τ, 0) with τ such that the xᵢ add up to ``total`` (> 0).

    >>> simplex_projection(np.array([50.0, -20.0, 10.0]), 40.0).tolist()
    [40.0, 0.0, 0.0]
    """
    y = np.asarray(y, dtype=float)
    u = np.sort(y)[::-1]
    excess = np.cumsum(u) - total
    k = np.arange(1, y.size + 1)
    r = int(k[u - excess / k > 0][-1])
    return np.maximum(y - excess[r - 1] / r, 0.0)


@dataclass(frozen=True, slots=True)
class Compression:
    """Per column, the measured cell of each full-domain cell (merged cells share the last index), and
    the share of each cell of the merged one within it (``within``: 1 for a kept cell)."""

    mapping: Mapping[str, np.ndarray]
    within: Mapping[str, np.ndarray] | None = None

    @classmethod
    def from_one_way(cls, noisy: Mapping[str, np.ndarray], sigma: Mapping[str, float]) -> Compression:
        """Cells with a noisy count ≥ 3σ kept, the others merged into one (when there are some).

        Within the merged cell, each of its cells gets the share its noisy counts give it: the least-squares
        counts that are ≥ 0 and add up to the merged cell's noisy total (``simplex_projection``; uniform
        when that total is ≤ 0). The reference spreads a merged cell uniformly, which puts as many rows in
        a cell no one is in (an empty declared category, the "(other)" cell of a column whose values all
        lie inside its declared cells) as in the rare cells that hold the merged cell's rows. Post-
        processing of the noisy one-way counts."""
        out, within = {}, {}
        for column, y in noisy.items():
            y = np.asarray(y, dtype=float)
            keep = y >= 3.0 * sigma[column]
            m = np.empty(len(keep), dtype=np.int64)
            m[keep] = np.arange(int(keep.sum()))
            m[~keep] = int(keep.sum())
            out[column] = m
            share = np.ones(len(keep))
            merged, total = y[~keep], float(y[~keep].sum())
            if merged.size:
                estimate = simplex_projection(merged, total) if total > 0 else np.ones(merged.size)
                share[~keep] = estimate / estimate.sum()
            within[column] = share
        return cls(out, within)

    def size(self, column: str) -> int:
        return int(self.mapping[column].max()) + 1

    def one_way(self, column: str, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The compressed one-way measurement and its weights (1, and 1/√n for a merged cell)."""
        m = self.mapping[column]
        y2 = np.bincount(m, weights=np.asarray(y, dtype=float), minlength=self.size(column))
        weights = np.ones(y2.size)
        n = int((m == y2.size - 1).sum())
        if n > 1 or y2.size < len(m):
            weights[-1] = 1.0 / np.sqrt(n)
        return y2 * weights, weights

    def counts(self, clique: Sequence[str], counts: np.ndarray, shape: Sequence[int]) -> np.ndarray:
        """Full-domain counts of a marginal (flattened row by row) summed into the measured cells."""
        x = np.asarray(counts).reshape(tuple(shape))
        for axis, column in enumerate(clique):
            m = self.mapping[column]
            x = np.moveaxis(x, axis, 0)
            out = np.zeros((self.size(column), *x.shape[1:]), dtype=x.dtype)
            np.add.at(out, m, x)
            x = np.moveaxis(out, 0, axis)
        return x.ravel()

    def expand(self, column: str, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Full-domain cells for measured ones: a merged cell becomes one of its cells, drawn by its share
        (``within``; uniformly without one)."""
        m = self.mapping[column]
        groups = [np.flatnonzero(m == j) for j in range(self.size(column))]
        out = np.empty(codes.size, dtype=np.int64)
        for j, cells in enumerate(groups):
            hit = codes == j
            if cells.size == 1:
                out[hit] = cells[0]
                continue
            p = None if self.within is None else self.within[column][cells]
            out[hit] = cells[rng.choice(cells.size, int(hit.sum()), p=p)]
        return out


@dataclass(frozen=True, slots=True)
class Fit:
    """A fitted ``mbi`` model over the measured (compressed) domain."""

    model: Any
    sizes: Mapping[str, int]

    @property
    def total(self) -> float:
        return float(self.model.total)

    def project(self, clique: Sequence[str]) -> np.ndarray:
        """The model's counts of a marginal, flattened row by row."""
        return np.asarray(self.model.project(tuple(clique)).datavector(), dtype=float)


def estimate(
    sizes: Mapping[str, int],
    measurements: Sequence[tuple[tuple[str, ...], np.ndarray, float, np.ndarray | None]],
    *,
    iterations: int = ITERATIONS,
) -> Fit:
    """Fit a graphical model to noisy marginals (clique, noisy vector, σ, weights or None) by mirror
    descent on the L2 loss Σ ‖(Q·μ − y)/σ‖² (``mbi.estimation.MirrorDescent``)."""
    mbi = _mbi()
    from mbi.estimation import MirrorDescent
    from mbi.marginal_loss import WeightedQuery

    domain = mbi.Domain(tuple(sizes), tuple(sizes.values()))
    linear = []
    for clique, y, sigma, weights in measurements:
        y = np.asarray(y, dtype=float)
        if weights is None or np.all(weights == 1.0):
            linear.append(mbi.LinearMeasurement(y, tuple(clique), stddev=float(sigma)))
        else:
            query = WeightedQuery(np.asarray(weights, dtype=float))
            linear.append(mbi.LinearMeasurement(y, tuple(clique), stddev=float(sigma), query=query))
    model = MirrorDescent().estimate(domain, linear, iters=iterations)
    return Fit(model, dict(sizes))


def sample_codes(fit: Fit, rows: int, rng: np.random.Generator | None) -> dict[str, np.ndarray]:
    """``rows`` records drawn from the model (``mbi``'s randomized rounding), as measured cells per column.

    ``mbi`` draws with numpy's global generator: it is seeded here (from ``rng``, or from the operating
    system for a release) and restored after, so no other code's randomness changes. Post-processing: the
    privacy of the table does not depend on this randomness."""
    state = np.random.get_state()
    seed = int(rng.integers(0, 2**32)) if rng is not None else secrets.randbits(32)
    try:
        np.random.seed(seed)
        data = fit.model.synthetic_data(rows=rows)
    finally:
        np.random.set_state(state)
    return {name: np.asarray(data.data[name], dtype=np.int64) for name in fit.sizes}


def sample_tree(
    fit: Fit, edges: Sequence[tuple[str, str]], rows: int, rng: np.random.Generator | None
) -> dict[str, np.ndarray]:
    """``rows`` records from a model whose cliques form a spanning tree (MST's), in O(rows · log rows) per
    column: the root's cells by randomized rounding of its marginal, then each column, given its parent in
    the tree, by randomized rounding of the conditional counts within each of the parent's cells, shuffled
    within the cell (what ``mbi``'s ``synthetic_data`` does, without its row-wise ``unique``).
    Post-processing: the randomness is numpy's (seeded from the OS for a release)."""
    gen = rng if rng is not None else np.random.default_rng(secrets.randbits(128))
    names = list(fit.sizes)
    neighbours: dict[str, list[str]] = {c: [] for c in names}
    for a, b in edges:
        neighbours[a].append(b)
        neighbours[b].append(a)
    root = names[0]
    out = {root: _rounded(fit.project((root,)), rows, gen)}
    queue = [root]
    while queue:
        parent = queue.pop(0)
        for child in neighbours[parent]:
            if child in out:
                continue
            joint = fit.project((parent, child)).reshape(fit.sizes[parent], fit.sizes[child])
            codes = np.empty(rows, dtype=np.int64)
            order = np.argsort(out[parent], kind="stable")
            starts = np.concatenate([[0], np.cumsum(np.bincount(out[parent], minlength=fit.sizes[parent]))])
            for value in range(fit.sizes[parent]):
                where = order[starts[value] : starts[value + 1]]
                if where.size:
                    codes[where] = gen.permutation(_rounded(joint[value], where.size, gen))
            out[child] = codes
            queue.append(child)
    return {c: out[c] for c in names}


def _rounded(weights: np.ndarray, n: int, gen: np.random.Generator) -> np.ndarray:
    """n cells in proportion to ``weights`` (negative ones as 0): the integer parts, then the remaining
    cells drawn without replacement in proportion to the fractional parts; in random order."""
    w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    w = w / w.sum() if w.sum() > 0 else np.full(w.size, 1.0 / w.size)
    frac, whole = np.modf(w * n)
    whole = whole.astype(np.int64)
    extra = n - int(whole.sum())
    if extra > 0:  # Σ frac = extra, but for rounding: never more cells than have a fraction
        p = frac / frac.sum() if frac.sum() > 0 else np.full(w.size, 1.0 / w.size)
        k = min(extra, int((p > 0).sum()))
        whole[gen.choice(w.size, k, replace=False, p=p)] += 1
        np.add.at(whole, gen.choice(w.size, extra - k, p=w), 1)
    return gen.permutation(np.repeat(np.arange(w.size), whole))
