"""AIM (McKenna, Mullins, Sheldon & Miklau 2022, "AIM: An Adaptive and Iterative Mechanism for
Differentially Private Synthetic Data"), following the reference ``mechanisms/aim.py`` of Private-PGM,
for a workload of column pairs the owner chose, with dpdash's marginals, mechanisms and events.

With d columns, a workload W of pairs, T = 16·d planned rounds and a zCDP budget ρ:

1. Every one-way marginal is measured at ρ_m = 0.9·ρ/T (discrete Gaussian, σ = Δ₂/√(2ρ_m)).
2. Each round spends ρ_s = 0.1·ρ/T on a choice and ρ_m on a measurement. The candidates are the
   workload's pairs and their columns (its downward closure), each weighted w_r = Σ_{a ∈ W} |r ∩ a|,
   those whose model would stay within ``max_model_size`` · (ρ spent)/ρ megabytes (or already covered).
   The exponential mechanism at ε = √(8ρ_s) (ρ_s = ε²/8, ε-bounded range) picks the worst approximated:
   utility u_r = w_r·(‖x_r − x̂_r‖₁ − √(2/π)·σ·n_r), x̂_r the current model's marginal, n_r its cells; a
   person changes ‖x_r‖₁ by at most Δ₁(r), so the utility's sensitivity is max_r w_r·Δ₁(r) over the
   candidates. The chosen marginal is measured at ρ_m and the model refitted.
3. Annealing: when the refitted model's marginal moved by at most √(2/π)·σ·n_r, σ is halved and ε
   doubled (ρ_m and ρ_s × 4).
4. When what remains is less than two rounds' worth, the last round spends all of it (0.1 on the choice,
   0.9 on the measurement): the release spends exactly ρ, whatever the number of rounds (``planned_events``
   states that cost before anything is drawn).

Estimation (post-processing): the model's cliques are fixed from the start (every column and every
workload pair; a clique not yet measured weighs nothing in the loss), so ``mbi`` compiles its solver once
and every round warm-starts from the last fit; repeated measurements of a marginal are pooled by inverse
variance, which leaves the L2 loss unchanged up to a constant. A workload whose model exceeds
``max_model_size`` is refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpdash.accounting.events import PrivacyEvent, ZCDPEvent
from dpdash.errors import ParameterError
from dpdash.synthetic.domain import SyntheticDomain
from dpdash.synthetic.measure import Counter, Measurement, Selection, measure, planned, select
from dpdash.synthetic.model import ITERATIONS, Fit, _mbi

__all__ = ["MAX_MODEL_SIZE", "AIMResult", "aim", "check_workload", "planned_events"]

#: The model's size limit in megabytes (the reference's ``max_model_size``).
MAX_MODEL_SIZE = 80.0
#: Mirror-descent iterations of each round's warm-started refit (the reference uses 1000).
ROUND_ITERATIONS = 250
#: The share of a round's ρ that goes to the choice (the rest to the measurement), as in the reference.
SELECT_SHARE = 0.1


@dataclass(frozen=True, slots=True)
class AIMResult:
    """What AIM measured and chose, the model fitted to it, and how many rounds it ran."""

    measurements: tuple[Measurement, ...]
    selections: tuple[Selection, ...]
    fit: Fit
    rounds: int


def planned_rounds(domain: SyntheticDomain) -> int:
    """T = 16·d, the reference's default number of planned rounds."""
    return 16 * len(domain.names)


def check_workload(
    domain: SyntheticDomain, workload: Sequence[tuple[str, ...]], max_model_size: float = MAX_MODEL_SIZE
) -> tuple[tuple[str, str], ...]:
    """The workload's pairs in the domain's column order, without repeats; refused (``ParameterError``)
    when empty, naming a column not synthesized, pairing a column with itself, or too large a model."""
    names = domain.names
    if not workload:
        raise ParameterError("method='aim' needs a workload: choose at least one pair of columns")
    out: list[tuple[str, str]] = []
    for pair in workload:
        unknown = [c for c in pair if c not in names]
        if unknown:
            raise ParameterError(f"the workload pair {tuple(pair)} names {unknown}, not among the "
                                 f"synthesized columns {list(names)}")  # fmt: skip
        if pair[0] == pair[1]:
            raise ParameterError(f"a workload pair needs two different columns, got {tuple(pair)}")
        ordered = tuple(sorted(pair, key=names.index))
        if ordered not in out:
            out.append(ordered)  # type: ignore[arg-type]
    size = model_size(domain, [(c,) for c in names] + out)
    if size > max_model_size:
        raise ParameterError(
            f"the workload's pairs make a model of {size:.3g} MB, over the limit of {max_model_size:g} MB: "
            "choose fewer pairs, or pairs that share fewer columns, or fewer bins"
        )
    return tuple(out)


def model_size(domain: SyntheticDomain, cliques: Sequence[tuple[str, ...]]) -> float:
    """Megabytes of the junction tree of ``cliques`` (8 bytes a cell), as the reference counts them."""
    mbi = _mbi()
    from mbi.junction_tree import hypothetical_model_size

    sizes = {c.name: c.size for c in domain.columns}
    return float(hypothetical_model_size(mbi.Domain(tuple(sizes), tuple(sizes.values())), list(cliques)))


def planned_events(domain: SyntheticDomain, rho: float, delta: float) -> list[PrivacyEvent]:
    """The cost of an AIM release before anything is drawn: the d one-way measurements' events, then one
    ρ-zCDP event for the rounds, ρ − (their ρ). A draw's rounds spend exactly that (step 4), so under the
    zCDP, RDP and tightest accountants (all linear in ρ) the two compose to the same total."""
    share = 0.9 * rho / planned_rounds(domain)
    one_way = [planned(domain, (c,), share) for c in domain.names]
    rest = rho - math.fsum(m.rho for m in one_way)
    events = [e for m in one_way for e in m.events(delta)]
    rounds = ZCDPEvent(rho=rest, query="synthetic: AIM's adaptive rounds",
                       mechanism="AIM's rounds (exponential-mechanism choices, discrete Gaussian marginals)")
    return [*events, rounds]


def aim(
    domain: SyntheticDomain,
    counts: Counter,
    rho: float,
    workload: Sequence[tuple[str, ...]],
    rng: np.random.Generator | None,
    *,
    max_model_size: float = MAX_MODEL_SIZE,
) -> AIMResult:
    """Run AIM at ρ-zCDP for ``workload`` (module docstring); ``rng`` None: release-grade sampling."""
    pairs = check_workload(domain, workload, max_model_size)
    names = domain.names
    rounds = planned_rounds(domain)
    rho_m, rho_s = (1 - SELECT_SHARE) * rho / rounds, SELECT_SHARE * rho / rounds
    closure: list[tuple[str, ...]] = [(c,) for c in names] + list(pairs)
    weights = {r: float(sum(len(set(r) & set(q)) for q in pairs)) for r in closure}
    candidates = [r for r in closure if weights[r] > 0]
    model = _SlotModel(domain, closure)

    known: dict[tuple[frozenset[tuple[str, ...]], tuple[str, ...]], float] = {}

    def sized(measured: list[tuple[str, ...]], r: tuple[str, ...]) -> float:
        key = (frozenset(measured), r)  # the same cliques from round to round: one junction tree each
        if key not in known:
            known[key] = model_size(domain, [*measured, r])
        return known[key]

    measurements = [measure(domain, (c,), counts((c,)), rho_m, rng) for c in names]
    used = math.fsum(m.rho for m in measurements)
    fit = model.fit(measurements, ITERATIONS)
    selections: list[Selection] = []
    last = False
    while not last:
        if rho - used < 2 * (rho_m + rho_s):
            remaining = rho - used
            rho_m, rho_s, last = (1 - SELECT_SHARE) * remaining, SELECT_SHARE * remaining, True
        size_limit = max_model_size * (used + rho_m + rho_s) / rho
        measured = list(dict.fromkeys(m.clique for m in measurements))
        covered = {(c,) for c in names} | set(measured)
        allowed = [r for r in candidates if r in covered or sized(measured, r) <= size_limit]
        sigma = {r: planned(domain, r, rho_m).sigma for r in allowed}
        estimates = {r: fit.project(r) for r in allowed}
        utilities = np.array([
            weights[r] * (float(np.abs(counts(r) - estimates[r]).sum())
                          - math.sqrt(2 / math.pi) * sigma[r] * estimates[r].size)
            for r in allowed
        ])  # fmt: skip
        sensitivity = max(weights[r] * float(domain.marginal(r).sensitivities.l1) for r in allowed)
        epsilon = math.sqrt(8 * rho_s)
        choice = select(allowed, utilities, epsilon, sensitivity, rng)
        selections.append(choice)
        chosen = allowed[choice.chosen]
        measurements.append(measure(domain, chosen, counts(chosen), rho_m, rng))
        used = math.fsum([*(m.rho for m in measurements), *(s.rho for s in selections)])
        fit = model.fit(measurements, ROUND_ITERATIONS, warm=fit)
        moved = float(np.abs(fit.project(chosen) - estimates[chosen]).sum())
        if moved <= math.sqrt(2 / math.pi) * sigma[chosen] * estimates[chosen].size:
            rho_m, rho_s = 4 * rho_m, 4 * rho_s
    fit = model.fit(measurements, ITERATIONS, warm=fit)
    return AIMResult(tuple(measurements), tuple(selections), fit, len(selections))


class _SlotModel:
    """A graphical model whose cliques are fixed (``slots``): each fit passes one measurement per slot,
    pooled by inverse variance, an unmeasured slot with σ = ∞ (no weight), so one compiled solver serves
    every round."""

    def __init__(self, domain: SyntheticDomain, slots: list[tuple[str, ...]]) -> None:
        self.mbi = _mbi()
        self.sizes = {c.name: c.size for c in domain.columns}
        self.domain = self.mbi.Domain(tuple(self.sizes), tuple(self.sizes.values()))
        self.slots = slots
        self.cells = {s: int(np.prod([self.sizes[c] for c in s])) for s in slots}

    def fit(self, measurements: Sequence[Measurement], iterations: int, warm: Fit | None = None) -> Fit:
        from mbi.estimation import MirrorDescent

        pooled: dict[tuple[str, ...], tuple[np.ndarray, float]] = {}
        for m in measurements:
            y, precision = np.asarray(m.noisy, dtype=float), 1.0 / m.sigma**2
            if m.clique in pooled:
                acc, p = pooled[m.clique]
                pooled[m.clique] = (acc + precision * y, p + precision)
            else:
                pooled[m.clique] = (precision * y, precision)
        linear: list[Any] = []
        for s in self.slots:
            if s in pooled:
                acc, p = pooled[s]
                linear.append(self.mbi.LinearMeasurement(acc / p, s, stddev=float(1 / math.sqrt(p))))
            else:
                linear.append(self.mbi.LinearMeasurement(np.zeros(self.cells[s]), s, stddev=math.inf))
        model = MirrorDescent().estimate(self.domain, linear, iters=iterations,
                                         warm_start=None if warm is None else warm.model)  # fmt: skip
        return Fit(model, dict(self.sizes))
