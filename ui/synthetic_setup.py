"""The Synthetic table page's choices and computations: which columns can be synthesized, the events a
release will record (its cost, before anything is drawn), the owner's seeded preview and the release.

The preview and the release check the current person's role where they compute (``ui.roles.check``), as
``ui.guarded`` does for Query & release: the preview reads the true table (``SEE_TRUTH``), the release
spends (``RELEASE``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from dpdash.access import Action
from dpdash.accounting.events import PrivacyEvent
from dpdash.datasets import PublicFacts
from dpdash.synthetic import Quality, SyntheticDomain, SyntheticRelease, quality, rho_for, synthesize
from dpdash.synthetic.mst import planned_events as mst_plan
from dpdash.synthetic.synthesize import PREVIEW_SEED
from ui.roles import check, dataset_ref
from ui.state import ActiveTable

__all__ = [
    "PREVIEW_SEED", "SyntheticChoice", "draw", "kept_preview", "planned_events", "preview", "real_rows",
    "synthesizable",
]  # fmt: skip

_PREVIEWS = "synthetic_previews"
_PREVIEWS_KEPT = 4


@dataclass(frozen=True, slots=True)
class SyntheticChoice:
    """What the owner chose: the columns, the method, the numeric columns' bins, ε and δ."""

    columns: tuple[str, ...]
    method: str
    bins: int
    epsilon: float
    delta: float

    def key(self, fingerprint: str) -> tuple[object, ...]:
        return (fingerprint, self.columns, self.method, self.bins, self.epsilon, self.delta)

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


def planned_events(domain: SyntheticDomain, epsilon: float, delta: float) -> list[PrivacyEvent]:
    """The events an MST release of ``domain`` at (ε, δ) records, before it is drawn (the core's
    ``dpdash.synthetic.mst.planned_events`` at ρ = ``rho_for(ε, δ)``)."""
    return mst_plan(domain, rho_for(epsilon, delta), delta)


def _run(table: ActiveTable, choice: SyntheticChoice, rng: int | None) -> SyntheticRelease:
    return synthesize(table.queryable, table.facts, epsilon=choice.epsilon, delta=choice.delta,
                      method=choice.method, rng=rng, identity=table.identity, columns=list(choice.columns),
                      bins=choice.bins)  # fmt: skip


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
