"""The Synthetic table page's choices and computations: which columns can be synthesized, the events a
release will record (its cost, before anything is drawn), the owner's seeded preview and the release.

The preview and the release check the current person's role where they compute (``ui.roles.check``), as
``ui.guarded`` does for Query & release: the preview reads the true table (``SEE_TRUTH``), the release
spends (``RELEASE``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dpdash.access import Action
from dpdash.accounting.events import PrivacyEvent
from dpdash.datasets import PublicFacts
from dpdash.synthetic import Quality, SyntheticDomain, SyntheticRelease, quality, rho_for, synthesize
from dpdash.synthetic.aim import check_workload
from dpdash.synthetic.aim import planned_events as aim_plan
from dpdash.synthetic.mst import planned_events as mst_plan
from dpdash.synthetic.synthesize import PREVIEW_SEED
from ui.roles import check, dataset_ref
from ui.state import ActiveTable

__all__ = [
    "METHODS", "PREVIEW_SEED", "SyntheticChoice", "draw", "kept_preview", "method_caption", "pair_options",
    "planned_events", "preview", "real_rows", "synthesizable",
]  # fmt: skip

_PREVIEWS = "synthetic_previews"
_PREVIEWS_KEPT = 4
#: The methods offered, by label.
METHODS = {"MST (maximum spanning tree of pairs)": "mst", "AIM (adaptive, for the pairs you choose)": "aim"}


@dataclass(frozen=True, slots=True)
class SyntheticChoice:
    """What the owner chose: the columns, the method, the numeric columns' bins, ε and δ, and for AIM the
    workload of column pairs."""

    columns: tuple[str, ...]
    method: str
    bins: int
    epsilon: float
    delta: float
    workload: tuple[tuple[str, str], ...] = ()

    def key(self, fingerprint: str) -> tuple[object, ...]:
        return (fingerprint, self.columns, self.method, self.bins, self.epsilon, self.delta, self.workload)

    @property
    def cost(self) -> str:
        return f"ε = {self.epsilon:g}, δ = {self.delta:g}"


def synthesizable(facts: PublicFacts, columns: list[str]) -> tuple[list[str], dict[str, str]]:
    """(the columns a synthetic table can have, {column: why not} for the others), from declared facts."""
    ok: list[str] = []
    refused: dict[str, str] = {}
    for name in columns:
        if name == facts.id_column:
            refused[name] = "the id column: it says who each row belongs to, so it is never synthesized"
        elif name in facts.categories or name in facts.bounds:
            ok.append(name)
        else:
            refused[name] = "no declared categories or bounds (declare them on the Data page)"
    return ok, refused


def pair_options(columns: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """Every pair of the chosen columns, by its label ``"a × b"``."""
    return {f"{a} × {b}": (a, b) for a, b in itertools.combinations(columns, 2)}


def planned_events(
    domain: SyntheticDomain, epsilon: float, delta: float, method: str = "mst",
    workload: tuple[tuple[str, str], ...] = (),
) -> list[PrivacyEvent]:
    """The events that state a release's cost before it is drawn, at ρ = ``rho_for(ε, δ)``: MST's own
    events (``dpdash.synthetic.mst.planned_events``), or for AIM, whose rounds depend on the data, its
    one-way measurements and one event for the rounds, which spend exactly the rest
    (``dpdash.synthetic.aim.planned_events``); a bad workload is refused (``ParameterError``)."""
    rho = rho_for(epsilon, delta)
    if method == "aim":
        check_workload(domain, workload)
        return aim_plan(domain, rho, delta)
    return mst_plan(domain, rho, delta)


def method_caption(choice: SyntheticChoice) -> str:
    """What the chosen method measures and chooses, in a sentence."""
    rho, d = rho_for(choice.epsilon, choice.delta), len(choice.columns)
    head = f"{choice.method.upper()} at ρ = {rho:.6g}-zCDP (the largest ρ whose (ε, δ) fits yours): "
    ones = f"{d} one-way marginal{'s' * (d > 1)}"
    if choice.method == "aim":
        return head + (
            f"{ones}, then rounds that each choose the worst-fitted of your {len(choice.workload)} pair"
            f"{'s' * (len(choice.workload) > 1)} (or their columns) and measure it, until ρ is spent "
            "exactly (the number of rounds depends on the data, the cost does not); discrete Gaussian "
            "noise in the table's engine."
        )
    pairs = d - 1
    return head + ones + (
        f", {pairs} choice{'s' * (pairs > 1)} of a pair and {pairs} two-way marginal{'s' * (pairs > 1)}"
        if pairs else ""
    ) + ", each measured with discrete Gaussian noise in the table's engine."


def _run(table: ActiveTable, choice: SyntheticChoice, rng: int | None) -> SyntheticRelease:
    return synthesize(table.queryable, table.facts, epsilon=choice.epsilon, delta=choice.delta,
                      method=choice.method, workload=choice.workload, rng=rng, identity=table.identity,
                      columns=list(choice.columns), bins=choice.bins)  # fmt: skip


def preview(table: ActiveTable, choice: SyntheticChoice) -> tuple[SyntheticRelease, Quality]:
    """The seeded preview and its quality against the true table (NOT PRIVATE; spends nothing), kept in
    this session for the same choices. For owners only (``AccessDenied``)."""
    check(dataset_ref(table), Action.SEE_TRUTH)
    kept: dict[tuple[object, ...], tuple[SyntheticRelease, Quality]]
    kept = st.session_state.setdefault(_PREVIEWS, {})
    key = choice.key(table.fingerprint)
    if key not in kept:
        if len(kept) >= _PREVIEWS_KEPT:
            kept.pop(next(iter(kept)))
        drawn = _run(table, choice, PREVIEW_SEED)
        kept[key] = (drawn, quality(table.queryable, drawn))
    return kept[key]


def kept_preview(table: ActiveTable, choice: SyntheticChoice) -> tuple[SyntheticRelease, Quality] | None:
    """The preview already made for these choices in this session, if any (nothing computed)."""
    return st.session_state.get(_PREVIEWS, {}).get(choice.key(table.fingerprint))


def draw(table: ActiveTable, choice: SyntheticChoice) -> SyntheticRelease:
    """A release-grade synthetic table (fresh draws on OS randomness; nothing recorded yet: record it
    with ``ui.guarded.record_release`` before showing it). For owners only (``AccessDenied``)."""
    check(dataset_ref(table), Action.RELEASE)
    return _run(table, choice, None)


def real_rows(table: ActiveTable, columns: tuple[str, ...], n: int) -> pd.DataFrame:
    """The true table's first ``n`` rows of ``columns`` (NOT PRIVATE: owners only, ``AccessDenied``)."""
    from ui.state import sample_rows

    return sample_rows(table, n)[list(columns)].reset_index(drop=True)
