"""MST (McKenna, Miklau & Sheldon 2021, "Winning the NIST Contest: A scalable and general approach to
differentially private synthetic data"), following the reference ``mechanisms/mst.py`` of Private-PGM,
with dpdash's marginals, mechanisms and events.

With d columns and a zCDP budget ρ:

1. ρ/3 for the d one-way marginals, ρ/(3d) each (discrete Gaussian, σ = Δ₂/√(2ρ/(3d))); then each
   column's cells with a noisy count below 3σ are merged into one (``Compression``).
2. ρ/3 for choosing d − 1 pairs that make a maximum spanning tree: a model fitted to the one-way
   measurements predicts every two-way marginal; each pair's utility is the L1 distance between the
   true two-way counts and the prediction (sensitivity Δ₁ of the two-way count, c under add/remove);
   Kruskal-like, each step picks among the pairs that join two components with the exponential
   mechanism at ε = √(8ρ/(3(d − 1))) (ρ = ε²/8 each).
3. ρ/3 for the d − 1 chosen two-way marginals, ρ/(3(d − 1)) each.

Every true count is a dpdash count query run in the table's engine; only counts leave it. With one
column, the whole ρ measures its one-way marginal.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpdash.synthetic.domain import SyntheticDomain
from dpdash.synthetic.measure import Counter, Measurement, Selection, measure, planned, select
from dpdash.synthetic.model import Compression, Fit, estimate

__all__ = ["MSTResult", "MSTSplit", "mst", "planned_events"]

#: Mirror-descent iterations of the model that scores candidate pairs (as in the reference).
SELECT_ITERATIONS = 1000


@dataclass(frozen=True, slots=True)
class MSTResult:
    """What MST measured and chose, and the model fitted to it."""

    measurements: tuple[Measurement, ...]
    selections: tuple[Selection, ...]
    compression: Compression
    fit: Fit


@dataclass(frozen=True, slots=True)
class MSTSplit:
    """MST's split of ρ over d columns (module docstring): each one-way marginal's ρ, each choice's ε
    (ρ = ε²/8), each chosen two-way marginal's ρ; with one column, the whole ρ on its one-way marginal."""

    one_rho: float
    choice_epsilon: float
    two_rho: float

    @classmethod
    def of(cls, rho: float, d: int) -> MSTSplit:
        if d == 1:
            return cls(rho, 0.0, 0.0)
        return cls(rho / 3.0 / d, float(np.sqrt(8.0 * (rho / 3.0) / (d - 1))), rho / 3.0 / (d - 1))


def planned_events(domain: SyntheticDomain, rho: float, delta: float) -> list[Any]:
    """The events an MST release of ``domain`` at ρ records, in order, before anything is measured: each
    marginal's σ depends on its query's Δ₂ only, and every pair of a domain has the same Δ₂ and cells
    changed per person, so the cost does not depend on which pairs are chosen (a test checks these events
    against a draw's)."""
    names, split = domain.names, MSTSplit.of(rho, len(domain.names))
    events = [e for c in names for e in planned(domain, (c,), split.one_rho).events(delta)]
    if len(names) > 1:
        pair = next(iter(itertools.combinations(names, 2)))
        two = planned(domain, pair, split.two_rho).events(delta)
        choice = Selection((pair,), 0, split.choice_epsilon, 1.0).events()
        events += (two + choice) * (len(names) - 1)
    return events


def mst(domain: SyntheticDomain, counts: Counter, rho: float, rng: np.random.Generator | None) -> MSTResult:
    """Run MST at ρ-zCDP (module docstring); ``rng`` None: release-grade sampling throughout."""
    names = domain.names
    d = len(names)
    split = MSTSplit.of(rho, d)
    one_rho = split.one_rho
    one_way = [measure(domain, (c,), counts((c,)), one_rho, rng) for c in names]
    noisy = {m.clique[0]: np.asarray(m.noisy, dtype=float) for m in one_way}
    compression = Compression.from_one_way(noisy, {m.clique[0]: m.sigma for m in one_way})
    sizes = {c: compression.size(c) for c in names}
    logged = [(m.clique, *compression.one_way(m.clique[0], noisy[m.clique[0]]), m.sigma) for m in one_way]
    one_way_log = [(clique, y, sigma, w) for clique, y, w, sigma in logged]
    if d == 1:
        return MSTResult(tuple(one_way), (), compression, estimate(sizes, one_way_log))

    pairs = list(itertools.combinations(names, 2))
    full = {p: compression.counts(p, counts(p), [domain.column(c).size for c in p]) for p in pairs}
    first = estimate(sizes, one_way_log, iterations=SELECT_ITERATIONS)
    # A model of one-way cliques only is a product of its one-way marginals: its two-way prediction is
    # their outer product over the total (what mbi's variable elimination would compute, without
    # compiling a program per pair).
    single = {c: first.project((c,)) for c in names}
    predicted = {p: np.outer(single[p[0]], single[p[1]]).ravel() / first.total for p in pairs}
    utilities = {p: float(np.abs(full[p] - predicted[p]).sum()) for p in pairs}
    selections = _spanning_tree(domain, names, pairs, utilities, split.choice_epsilon, rng)

    two_rho = split.two_rho
    two_way = [measure(domain, s.candidates[s.chosen], full[s.candidates[s.chosen]], two_rho, rng)
               for s in selections]  # fmt: skip
    log = one_way_log + [(m.clique, np.asarray(m.noisy, dtype=float), m.sigma, None) for m in two_way]
    return MSTResult((*one_way, *two_way), tuple(selections), compression, estimate(sizes, log))


def _spanning_tree(
    domain: SyntheticDomain,
    names: tuple[str, ...],
    pairs: list[tuple[str, str]],
    utilities: dict[tuple[str, str], float],
    epsilon: float,
    rng: np.random.Generator | None,
) -> list[Selection]:
    """d − 1 exponential-mechanism choices, each among the pairs joining two components."""
    component = {c: i for i, c in enumerate(names)}
    out = []
    for _ in range(len(names) - 1):
        candidates = [p for p in pairs if component[p[0]] != component[p[1]]]
        sensitivity = max(float(domain.marginal(p).sensitivities.l1) for p in candidates)
        chosen = select(candidates, np.array([utilities[p] for p in candidates]), epsilon, sensitivity, rng)
        a, b = chosen.candidates[chosen.chosen]
        old, new = component[b], component[a]
        component = {c: (new if k == old else k) for c, k in component.items()}
        out.append(chosen)
    return out
