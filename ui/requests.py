"""Release requests on the Query & release page: an analyst requests a release, an owner approves it (their
ordinary release of exactly that request: ``ui.state.draw_release`` and ``record_release``, under the
request's idempotency key) or declines it with a reason. The requests are kept in the workspace
(``dpdash.release_requests``); each step checks the role where it acts.
"""

from __future__ import annotations

import numbers
from typing import Any

import pandas as pd
import streamlit as st

from dpdash.access import Action
from dpdash.accounting import Dataset, event_for, get_accountant, running
from dpdash.errors import DPDashError, LedgerError
from dpdash.queries import Query, SelectionQuery, query_from_dict
from dpdash.release import MECHANISMS, Release, calibrate, describe_postprocessing, mechanism_class
from dpdash.release_requests import ReleaseRequest, RequestStore
from ui import auth
from ui.state import (
    ActiveTable,
    check,
    dataset_ref,
    draw_release,
    evaluate,
    ledger,
    record_release,
    workspace,
)
from ui.text import md

__all__ = ["owner_requests", "request_form", "request_list", "request_store", "spending"]

_KEY = {cls: key for key, cls in MECHANISMS.items()}
_CONFIRMING = "requests_confirming"  # the uid of the request whose approval is being confirmed
_DRAWN = "requests_drawn"  # uid → the release drawn for it, kept until the ledger has recorded it
_DONE = "requests_done"  # (uid, release) of the approval just made, shown once


def request_store() -> RequestStore:
    """The requests of this workspace's tables (``<workspace>/requests``)."""
    return RequestStore(workspace().path / "requests")


def spending(
    query: Query, mechanism: type, table: ActiveTable, *, epsilon: float, delta: float
) -> tuple[list[Any], list[Any]]:
    """(calibrated pieces, the mechanisms a release spends) for a query, as ``release`` calibrates it; a
    selection's ε is split equally over its selections. Reads only the table's column types."""
    if isinstance(query, SelectionQuery):
        share = epsilon / len(query.selections)
        selectors = [mechanism(epsilon=share, sensitivity=sensitivity, monotone=query.monotone)
                     for sensitivity in query.utility_sensitivities]  # fmt: skip
        return [], selectors
    pieces = calibrate(query, mechanism, table.queryable, epsilon=epsilon, delta=delta)
    return pieces, [piece.mechanism for piece in pieces]


def _describe(request: ReleaseRequest) -> str:
    query = query_from_dict(dict(request.query))
    steps = "; then ".join(describe_postprocessing(s) for s in request.postprocess) or "none"
    delta = f", δ = {request.delta:g}" if request.delta else ""
    note = f" Note: “{md(request.note)}”." if request.note.strip() else ""
    return (
        f"**{md(query.name)}** with the {md(mechanism_class(request.mechanism).__name__)} mechanism, "
        f"ε = {request.epsilon:g}{delta}, ± at {request.confidence:.0%}; post-processing: {md(steps)}. "
        f"Asked by **{md(request.requested_by)}** on {request.requested_at[:19].replace('T', ' ')} UTC.{note}"
    )


def request_form(
    table: ActiveTable,
    query: Query,
    mechanism: type,
    *,
    epsilon: float,
    delta: float,
    confidence: float,
    steps: list[str],
) -> None:
    """The analyst's "Request this release" (spends nothing; an owner decides)."""
    with st.form("release_request_form", border=True, clear_on_submit=True):
        st.markdown("**Request this release.** It spends nothing now: an owner of the table sees the "
                    "request with the true values, and approves it (the release is then made and spends "
                    "budget) or declines it.")  # fmt: skip
        note = st.text_input("A note for the owner (optional: what it is for)", max_chars=500,
                             key="release_request_note")  # fmt: skip
        if not st.form_submit_button("Request this release", type="primary"):
            return
    try:
        check(dataset_ref(table), Action.REQUEST)
        user = auth.current_user()
        assert user is not None  # check() refuses anyone not signed in
        made = request_store().submit(
            dataset=table.identity, table_name=table.name, query=query.to_dict(), mechanism=_KEY[mechanism],
            epsilon=epsilon, delta=delta, confidence=confidence, postprocess=steps, requested_by=user.label,
            note=note,
        )  # fmt: skip
    except DPDashError as error:
        st.error(f"Not requested: {md(error)}", icon=":material/error:")
    else:
        st.success(f"Requested: {_describe(made)} An owner will approve or decline it.",
                   icon=":material/outgoing_mail:")  # fmt: skip


def _released(record: Dataset, entry: str | None) -> Release | None:
    published = ledger().published(record)
    data = published.get(entry) if entry is not None else None
    return None if data is None else Release.from_dict(data)


def _show_release(result: Release, key: str) -> None:
    half_widths = list(result.accuracy.half_widths)
    widths = half_widths + [None] * (len(result.values) - len(half_widths))
    st.dataframe(pd.DataFrame({"value": result.labels, "released": result.values, "±": widths}),
                 hide_index=True, key=key)  # fmt: skip


def request_list(table: ActiveTable, record: Dataset | None) -> None:
    """Every request on this table with where it stands; an approved one with its released values."""
    try:
        found = request_store().requests(table.identity)
    except DPDashError as error:
        st.error(f"The requests cannot be read: {md(error)}", icon=":material/error:")
        return
    if not found:
        return
    st.markdown("**Requests on this table**")
    for request, decision in reversed(found):
        with st.container(border=True, key=f"request_{request.uid}"):
            st.markdown(_describe(request))
            if decision is None:
                st.caption(":material/hourglass_empty: Waiting for an owner.")
            elif not decision.approved:
                reason = f": “{md(decision.reason)}”" if decision.reason.strip() else ""
                st.caption(f":material/block: Declined by {md(decision.by)}{reason}.")
            else:
                st.caption(f":material/verified: Approved and released by {md(decision.by)} on "
                           f"{decision.at[:19].replace('T', ' ')} UTC.")  # fmt: skip
                result = None if record is None else _released(record, decision.entry)
                if result is not None:
                    _show_release(result, key=f"request_result_{request.uid}")


def owner_requests(table: ActiveTable, record: Dataset) -> None:
    """The owner's list of requests waiting on this table: approve (a release, confirmed first) or decline."""
    try:
        waiting = [r for r, d in request_store().requests(table.identity) if d is None]
    except DPDashError as error:
        st.error(f"The requests cannot be read: {md(error)}", icon=":material/error:")
        return
    done = st.session_state.pop(_DONE, None)
    if done is not None:
        uid, result, problem = done
        with st.container(border=True, key=f"request_done_{uid}"):
            st.markdown(f"#### :material/verified: Request approved and released · {md(result.query_name)}")
            _show_release(result, key=f"request_done_result_{uid}")
            if problem:
                st.warning(md(problem), icon=":material/warning:")
    if not waiting:
        return
    st.subheader(f"Release requests waiting for you ({len(waiting)})")
    keeper = get_accountant(record.accountant)
    history = ledger().events(record)
    for request in waiting:
        with st.container(border=True, key=f"request_waiting_{request.uid}"):
            _one_request(table, record, request, keeper, history)


def _one_request(
    table: ActiveTable, record: Dataset, request: ReleaseRequest, keeper: Any, history: Any
) -> None:
    st.markdown(_describe(request))
    try:
        query = query_from_dict(dict(request.query))
        mechanism = mechanism_class(request.mechanism)
        _, spent = spending(query, mechanism, table, epsilon=request.epsilon, delta=request.delta)
        events = [event_for(m, query=query.name) for m in spent]
    except DPDashError as error:
        st.error(f"This request cannot be released as asked: {md(error)}", icon=":material/error:")
        fits = False
    else:
        _true_answer(table, query)
        after = running.epsilon(keeper, history, events, record.budget.delta)
        fits = after <= record.budget.epsilon * (1 + 1e-12)
        st.caption(f"Approving it releases it now: spent ε would go to {after:.4g} of "
                   f"{record.budget.epsilon:g} ({md(record.accountant)} accountant)."
                   + ("" if fits else " **It does not fit the remaining budget.**"))  # fmt: skip
    uid = request.uid
    if st.session_state.get(_CONFIRMING) == uid and fits:
        st.markdown(f"**Confirm: approve and release.** Cost: ε = {request.epsilon:g}"
                    f"{f', δ = {request.delta:g}' if request.delta else ''}. **This cannot be undone:** the "
                    "budget is spent, and the analyst sees the released values.")  # fmt: skip
        go, cancel = st.columns(2)
        if cancel.button("Cancel", key=f"request_cancel_{uid}"):
            st.session_state.pop(_CONFIRMING, None)
            st.rerun()
        if go.button("Approve: release now", type="primary", key=f"request_approve_confirm_{uid}"):
            st.session_state.pop(_CONFIRMING, None)
            _approve(table, record, request, query, mechanism)
        return
    left, right = st.columns(2)
    approve = "Approve and release… (spends budget)"
    if fits and left.button(approve, type="primary", key=f"request_approve_{uid}"):
        st.session_state[_CONFIRMING] = uid
        st.rerun()
    with right.popover("Decline…"):
        reason = st.text_input("Why (the analyst sees it)", max_chars=500, key=f"request_reason_{uid}")
        if st.button("Decline this request", key=f"request_decline_{uid}"):
            try:
                check(dataset_ref(table), Action.RELEASE)
                user = auth.current_user()
                assert user is not None
                request_store().decide(uid, approved=False, by=user.label, reason=reason)
            except DPDashError as error:
                st.error(f"Not declined: {md(error)}", icon=":material/error:")
            else:
                st.rerun()


def _true_answer(table: ActiveTable, query: Query) -> None:
    """The request's true answer, for the owner deciding on it (``evaluate`` checks the role)."""
    try:
        evaluation = evaluate(table, query)
    except DPDashError as error:
        st.caption(f"No true answer: {md(error)}")
        return
    labels = query.selections if isinstance(query, SelectionQuery) else query.labels
    shown = [f"{md(label)} = {value:.6g}" if isinstance(value, numbers.Real) else f"{md(label)} = {md(value)}"
             for label, value in list(zip(labels, evaluation.values, strict=False))[:8]]  # fmt: skip
    more = f" (and {len(evaluation.values) - 8} more)" if len(evaluation.values) > 8 else ""
    st.caption(f"True answer now (owner only): {'; '.join(shown)}{more}.")


def _approve(
    table: ActiveTable, record: Dataset, request: ReleaseRequest, query: Query, mechanism: type
) -> None:
    """The owner's release of the request, through the one release path; kept drawn until recorded."""
    drawn: dict[str, Release] = st.session_state.setdefault(_DRAWN, {})
    try:
        result = drawn.get(request.uid)
        if result is None:
            result = draw_release(
                table, query, mechanism, epsilon=request.epsilon, delta=request.delta or None,
                confidence=request.confidence, postprocess=list(request.postprocess),
            )  # fmt: skip
            drawn[request.uid] = result
        entries = record_release(table, record, result, request.request_id)
    except DPDashError as error:
        if not isinstance(error, LedgerError):  # refused for good: a new try draws anew
            drawn.pop(request.uid, None)
        st.error(f"Not released: {md(error)}", icon=":material/block:")
        return
    drawn.pop(request.uid, None)
    recorded = _released(record, entries[0].uid) or result  # what the ledger holds is what is published
    problem = ""
    try:
        user = auth.current_user()
        by = user.label if user is not None else "?"
        request_store().decide(request.uid, approved=True, by=by, entry=entries[0].uid)
    except DPDashError as error:
        problem = f"Released and recorded in the ledger, but the request's decision was not written: {error}"
    st.session_state[_DONE] = (request.uid, recorded, problem)
    st.rerun()
