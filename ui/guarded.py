"""The calls that produce a true value or spend budget, each checking the current person's role where it
acts (not only where a page hides a button): a query's true answer, drawing and recording a release, and
the ledger for an owner's change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ui.ledger_session import ledger, ledger_session
from ui.roles import acting_user, check, dataset_ref

if TYPE_CHECKING:
    from ui.active_table import ActiveTable
import streamlit as st

from dpdash.access import Action
from dpdash.engines import evaluate as evaluate_in_engine
from dpdash.ledger import Dataset, Entry, Ledger
from dpdash.queries import Evaluation, Query
from dpdash.release import Release, release

__all__ = ["draw_release", "evaluate", "owner_ledger", "record_release"]


_EVALUATIONS = "dpdash_evaluations"


_EVALUATIONS_KEPT = 16


def evaluate(table: ActiveTable, query: Query) -> Evaluation:
    """The query's true answer and report on the table (NOT PRIVATE), computed once per (table, query)
    and kept in this session only: reruns that change ε or the mechanism do not rescan the table. For
    owners only (``AccessDenied``)."""
    check(dataset_ref(table), Action.SEE_TRUTH)
    cache: dict[tuple[str, str], Evaluation] = st.session_state.setdefault(_EVALUATIONS, {})
    key = (table.fingerprint, repr(query.to_dict()))
    if key not in cache:
        if len(cache) >= _EVALUATIONS_KEPT:
            cache.pop(next(iter(cache)))
        cache[key] = evaluate_in_engine(query, table.queryable)
    return cache[key]


def owner_ledger(table: ActiveTable, action: Action = Action.BUDGET) -> Ledger:
    """The ledger, for a change to its records about ``table`` (a budget, a version, a unit, an import, a
    trusted key) that the current person's role must allow (``AccessDenied``)."""
    check(dataset_ref(table), action)
    return ledger()


def draw_release(
    table: ActiveTable,
    query: Query,
    mechanism: type,
    *,
    epsilon: float,
    delta: float | None,
    confidence: float,
    postprocess: list[str] | tuple[str, ...],
) -> Release:
    """``dpdash.release.release`` on the table: the true answer and its noise, drawn (nothing recorded
    yet: see ``record_release``). For owners only (``AccessDenied``)."""
    check(dataset_ref(table), Action.RELEASE)
    return release(query, mechanism, table.queryable, epsilon=epsilon, delta=delta, confidence=confidence,
                   postprocess=postprocess, identity=table.identity)  # fmt: skip


def record_release(table: ActiveTable, record: Dataset, result: Release, request_id: str) -> list[Entry]:
    """Spend ``result`` from the table's budget in the ledger under ``request_id`` (sent again, it spends
    once), attributed to this session. For owners only (``AccessDenied``): the one path to a spend."""
    check(dataset_ref(table), Action.RELEASE)
    if table.engine is not None:  # a file rewritten since the draw: nothing spent (SourceChangedError)
        table.engine.check_unchanged()
    return ledger().spend_release(record, result, session=ledger_session(), request_id=request_id,
                                  user=acting_user())  # fmt: skip
