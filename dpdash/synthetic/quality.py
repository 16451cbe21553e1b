"""How close a synthetic table is to the true one. NOT PRIVATE: every figure here reads the true table;
they are the data owner's preview figures, never part of a release or its public card.

- **Total variation distance** of every one-way marginal and of every measured two-way marginal, over the
  synthetic domain's cells: TVD(p, q) = ½ Σ |p_i − q_i| of the two tables' cell shares (0: identical, 1:
  disjoint). The true counts are the release's own count queries, run in the table's engine (so with the
  per-person truncation the synthesizer saw); missing values fall in no cell, on both sides.
- **Association matrices** of every pair of columns, true and synthetic, and their difference: for two
  numeric columns the Pearson correlation of their bins' midpoints (computed from the two-way counts, so
  at the bins' resolution, the same on both sides); for a pair with a categorical column Cramér's V,
  √(χ²/(n·(min(r, k) − 1))) over the declared cells (r, k: the declared categories or bins, the same on
  both sides; no bias correction), which lies in [0, 1] and is 0 for independent columns. The "(other)"
  cells stay out of both figures (in a synthetic table they hold mostly noise).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpdash.engines.sources import Source
from dpdash.synthetic.domain import SyntheticDomain
from dpdash.synthetic.measure import true_counts
from dpdash.synthetic.record import SyntheticRelease

__all__ = [
    "QUALITY_LABEL", "Quality", "association", "association_matrix", "quality", "table_counts", "tvd",
]  # fmt: skip

NOT_PRIVATE = "NOT PRIVATE: computed from the true table, for the data owner only"
#: How a data card (and the stakeholder report) labels the preview's figures when the owner includes them.
QUALITY_LABEL = (
    "NOT PRIVATE: computed on the true table, for a seeded preview at the same budget (another draw than "
    "this table), by the data owner's choice; outside the (ε, δ) guarantee"
)


@dataclass(frozen=True, slots=True)
class Quality:
    """A synthetic table against the true one (module docstring). NOT PRIVATE."""

    one_way: dict[str, float]
    two_way: dict[tuple[str, str], float]
    association_true: pd.DataFrame
    association_synthetic: pd.DataFrame
    label: str = NOT_PRIVATE

    @property
    def mean_one_way(self) -> float:
        return float(np.mean(list(self.one_way.values())))

    @property
    def mean_two_way(self) -> float:
        return float(np.mean(list(self.two_way.values()))) if self.two_way else float("nan")

    @property
    def association_difference(self) -> pd.DataFrame:
        """Synthetic − true, per pair of columns."""
        return self.association_synthetic - self.association_true


def tvd(p: np.ndarray, q: np.ndarray) -> float:
    """½ Σ |p/Σp − q/Σq| (1.0 when one side has no rows and the other has some).

    >>> tvd(np.array([1, 1]), np.array([2, 0]))
    0.5
    """
    p, q = np.asarray(p, dtype=float).ravel(), np.asarray(q, dtype=float).ravel()
    if p.sum() <= 0 or q.sum() <= 0:
        return 0.0 if p.sum() == q.sum() else 1.0
    return float(0.5 * np.abs(p / p.sum() - q / q.sum()).sum())


def association(counts: np.ndarray, a_mid: np.ndarray | None, b_mid: np.ndarray | None) -> float:
    """Pearson correlation of cell midpoints when both are given (numeric columns), else Cramér's V."""
    x = np.asarray(counts, dtype=float)
    n = x.sum()
    if n <= 0:
        return float("nan")
    if a_mid is not None and b_mid is not None:
        ok_a, ok_b = np.isfinite(a_mid), np.isfinite(b_mid)
        x = x[np.ix_(ok_a, ok_b)]
        a, b, n = a_mid[ok_a], b_mid[ok_b], x.sum()
        if n <= 0:
            return float("nan")
        ma, mb = (x.sum(axis=1) @ a) / n, (x.sum(axis=0) @ b) / n
        cov = ((a - ma)[:, None] * (b - mb)[None, :] * x).sum() / n
        va, vb = (x.sum(axis=1) @ (a - ma) ** 2) / n, (x.sum(axis=0) @ (b - mb) ** 2) / n
        return float(cov / np.sqrt(va * vb)) if va > 0 and vb > 0 else 0.0
    x = x[:-1, :-1]  # the declared cells: "(other)" is mostly noise in a synthetic table
    n, k = x.sum(), min(x.shape) - 1
    if k < 1 or n <= 0:
        return 0.0
    expected = np.outer(x.sum(axis=1), x.sum(axis=0)) / n
    seen = expected > 0
    chi2 = float(((x[seen] - expected[seen]) ** 2 / expected[seen]).sum())
    return float(np.sqrt(chi2 / (n * k)))


def quality(data: pd.DataFrame | Source, synthetic: SyntheticRelease) -> Quality:
    """The TVDs and association matrices of ``synthetic.table`` against ``data``. NOT PRIVATE."""
    domain = synthetic.domain
    codes = domain.codes(synthetic.table)
    names = domain.names
    one = {c: tvd(true_counts(domain, (c,), data), table_counts(codes, (c,), domain)) for c in names}
    true = {p: true_counts(domain, p, data) for p in itertools.combinations(names, 2)}
    measured = {m.clique for m in synthetic.measurements if len(m.clique) == 2}
    two = {p: tvd(true[p], table_counts(codes, p, domain)) for p in true if p in measured}
    return Quality(one, two, association_matrix(domain, true.__getitem__),
                   association_matrix(domain, lambda p: table_counts(codes, p, domain)))  # fmt: skip


def association_matrix(
    domain: SyntheticDomain, counts: Callable[[tuple[str, str]], np.ndarray]
) -> pd.DataFrame:
    """Every pair's association (``association``) from its two-way counts over the domain's cells
    (``counts((a, b))``, flattened row by row), as a symmetric matrix with 1 on the diagonal."""
    names = list(domain.names)
    out = pd.DataFrame(np.eye(len(names)), index=names, columns=names)
    for a, b in itertools.combinations(names, 2):
        shape = (domain.column(a).size, domain.column(b).size)
        mids = (_midpoints(domain, a), _midpoints(domain, b))
        out.loc[a, b] = out.loc[b, a] = association(np.asarray(counts((a, b))).reshape(shape), *mids)
    return out


def table_counts(codes: pd.DataFrame, clique: tuple[str, ...], domain: SyntheticDomain) -> np.ndarray:
    """A marginal's counts of a table's cells (``SyntheticDomain.codes``; rows with a −1 left out)."""
    sizes = [domain.column(c).size for c in clique]
    cells = np.stack([codes[c].to_numpy() for c in clique])
    ok = (cells >= 0).all(axis=0)
    flat = np.ravel_multi_index(tuple(cells[:, ok]), sizes)
    return np.bincount(flat, minlength=int(np.prod(sizes)))


def _midpoints(domain: SyntheticDomain, name: str) -> np.ndarray | None:
    """A numeric column's bin midpoints (NaN for its "(other)" cell); None for a categorical column."""
    bins = domain.column(name).bins
    if bins is None:
        return None
    e = np.asarray(bins.edges, dtype=float)
    return np.append((e[:-1] + e[1:]) / 2.0, np.nan)
