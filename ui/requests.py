"""Release requests on the Query & release page: an analyst requests a release, an owner approves it
(``Ledger.decide_request``, then their ordinary release of exactly that request: ``ui.guarded.draw_release``
and ``record_release`` under the request's uid, which the ledger records at most once and only as the
release approved) or declines it with a reason. The requests are kept in the ledger
(``Ledger.request_release``; ``dpdash.ledger.release_requests``), so every app server sharing a
ledger sees them; each step checks the role where it acts.
"""

from __future__ import annotations

import numbers
from typing import Any

import pandas as pd
import streamlit as st

from dpdash.access import Action
from dpdash.accounting import event_for, get_accountant, running
from dpdash.errors import DPDashError, LedgerError
from dpdash.key_release import key_mechanism
from dpdash.ledger import Dataset, RequestRecord
from dpdash.queries import KeyCounts, Query, SelectionQuery
from dpdash.release import Release, calibrate, describe_postprocessing
from dpdash.rounding import ROUNDING_NOTE, published_figures
from ui.guarded import draw_release, evaluate, record_release
from ui.ledger_session import ledger
from ui.numbers import spent_text
from ui.release_choice import ReleaseChoice
from ui.roles import acting_user, check, dataset_ref
from ui.state import ActiveTable
from ui.text import md

__all__ = ["owner_requests", "request_form", "request_list", "spending"]

_CONFIRMING = "requests_confirming"  # the uid of the request whose approval is being confirmed
_DRAWN = "requests_drawn"  # uid → the release drawn for it, kept until the ledger has recorded it
_DONE = "requests_done"  # (uid, release) of the approval just made, shown once
PAGE = 10  # requests shown at a time: a long list is read a page at a time, each request's cost computed


def _a_page(requests: list[RequestRecord], key: str) -> list[RequestRecord]:
    """``requests`` (newest first), PAGE at a time: with more than a page, a choice of which ones."""
    if len(requests) <= PAGE:
        return requests
    starts = range(0, len(requests), PAGE)
    start = st.selectbox(
        f"{len(requests)} requests, {PAGE} at a time", starts, key=key,
        format_func=lambda i: f"{i + 1}–{min(i + PAGE, len(requests))}",
    )  # fmt: skip
    return requests[start : start + PAGE]


def spending(choice: ReleaseChoice, table: ActiveTable) -> tuple[list[Any], list[Any]]:
    """(calibrated pieces, the mechanisms a release spends) for a release, as ``release`` calibrates it; a
    selection's ε is split equally over its selections. Reads only the table's column types."""
    query, mechanism, epsilon, delta = choice.query, choice.mechanism, choice.epsilon, choice.delta
    if isinstance(query, KeyCounts):  # one thresholded geometric mechanism (dpdash.key_release)
        return [], [key_mechanism(query, epsilon, delta)]
    if isinstance(query, SelectionQuery):
        share = epsilon / len(query.selections)
        selectors = [mechanism(epsilon=share, sensitivity=sensitivity, monotone=query.monotone)
                     for sensitivity in query.utility_sensitivities]  # fmt: skip
        return [], selectors
    pieces = calibrate(query, mechanism, table.queryable, epsilon=epsilon, delta=delta)
    return pieces, [piece.mechanism for piece in pieces]


def _when(stamp: str | None) -> str:
    return "?" if not stamp else f"{stamp[:19].replace('T', ' ')} UTC"


def _describe(request: RequestRecord) -> str:
    planned = request.request
    choice = ReleaseChoice.from_request(planned)
    steps = "; then ".join(describe_postprocessing(s) for s in choice.steps) or "none"
    note = f" Note: “{md(planned['note'])}”." if planned["note"].strip() else ""
    return (
        f"**{md(choice.query.name)}** with the {md(choice.mechanism.__name__)} mechanism, {choice.cost}, "
        f"± at {choice.confidence:.0%}; post-processing: {md(steps)}. "
        f"Asked by **{md(request.requested_by)}** on {_when(request.requested_at)}.{note}"
    )


def request_form(table: ActiveTable, record: Dataset | None, choice: ReleaseChoice) -> None:
    """The analyst's "Request this release" (spends nothing; an owner decides). A request is kept in the
    ledger with the table's budget: without one (``record`` ``None``) there is nothing to request from."""
    if record is None:
        st.info("Releases of this table cannot be requested yet: an owner has to set its privacy budget "
                "first (a request is kept with the budget it would spend).",
                icon=":material/lock:")  # fmt: skip
        return
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
        made = ledger().request_release(record, choice.request(note), user=acting_user())
    except DPDashError as error:
        st.error(f"Not requested: {md(error)}", icon=":material/error:")
    else:
        st.success(f"Requested: {_describe(made)} An owner will approve or decline it.",
                   icon=":material/outgoing_mail:")  # fmt: skip


def _released(record: Dataset, uid: str) -> Release | None:
    """The values published for the request ``uid``: ``spend_release`` records the request's uid as the
    release's request id, and its "release" action names the release's first entry, under which
    ``published`` holds the release record."""
    first = None
    for action in ledger().actions(record):
        if action.action == "release" and action.details.get("request_id") == uid:
            first = action.details.get("first_entry")
            break
    data = ledger().published(record).get(first) if isinstance(first, str) else None
    return None if data is None else Release.from_dict(data)


def released_table(result: Release, key: str) -> None:
    """The released values with the ± the release states, its meaning in the column's header, and with
    several values the ± for all of them at once below: as shown everywhere
    (``dpdash.rounding.published_figures``), the full values being in the JSON record."""
    accuracy, shown = result.accuracy, published_figures(result)
    table = {"value": result.labels, "released": shown.texts, accuracy.column_label: shown.half_width_texts}
    st.dataframe(pd.DataFrame(table), hide_index=True, key=key)
    if shown.joint_half_width is not None:
        st.caption(
            f"All {len(result.values)} values at once: ± {shown.joint_text} "
            f"({accuracy.confidence:.0%} confidence)."
        )
    if not shown.owner_precision:
        st.caption(ROUNDING_NOTE)


def request_list(table: ActiveTable, record: Dataset | None) -> None:
    """Every request on this table with where it stands (``RequestRecord.status``); a released one with
    its released values."""
    if record is None:
        return
    try:
        found = ledger().release_requests(record)
    except DPDashError as error:
        st.error(f"The requests cannot be read: {md(error)}", icon=":material/error:")
        return
    if not found:
        return
    st.markdown("**Requests on this table**")
    for request in _a_page(found[::-1], "requests_page"):
        with st.container(border=True, key=f"request_{request.uid}"):
            st.markdown(_describe(request))
            by, reason = md(request.decided_by or "?"), request.reason
            if request.status == "pending":
                st.caption(":material/hourglass_empty: Waiting for an owner.")
            elif request.status == "declined":
                why = f": “{md(reason)}”" if reason.strip() else ""
                st.caption(f":material/block: Declined by {by}{why}.")
            elif request.status == "approved":
                st.caption(f":material/schedule: Approved by {by} on {_when(request.decided_at)}; not "
                           "released yet.")  # fmt: skip
            else:
                st.caption(f":material/verified: Approved and released by {by} on "
                           f"{_when(request.decided_at)}.")  # fmt: skip
                try:
                    result = _released(record, request.uid)
                except DPDashError as error:
                    st.caption(f"The released values cannot be read: {md(error)}")
                    continue
                if result is not None:
                    released_table(result, key=f"request_result_{request.uid}")


def owner_requests(table: ActiveTable, record: Dataset) -> None:
    """The owner's list of requests waiting on this table: approve (a release, confirmed first) or decline;
    and those approved whose release was not made (it did not fit the budget then): release them."""
    try:
        waiting = [r for r in ledger().release_requests(record) if r.status in ("pending", "approved")]
    except DPDashError as error:
        st.error(f"The requests cannot be read: {md(error)}", icon=":material/error:")
        return
    done = st.session_state.pop(_DONE, None)
    if done is not None:
        uid, result = done
        with st.container(border=True, key=f"request_done_{uid}"):
            st.markdown(f"#### :material/verified: Request approved and released · {md(result.query_name)}")
            released_table(result, key=f"request_done_result_{uid}")
    if not waiting:
        return
    st.subheader(f"Release requests waiting for you ({len(waiting)})")
    keeper = get_accountant(record.accountant)
    history = ledger().events(record)
    for request in _a_page(waiting, "requests_waiting_page"):
        with st.container(border=True, key=f"request_waiting_{request.uid}"):
            _one_request(table, record, request, keeper, history)


def _one_request(
    table: ActiveTable, record: Dataset, request: RequestRecord, keeper: Any, history: Any
) -> None:
    st.markdown(_describe(request))
    planned = request.request
    approved = request.status == "approved"
    if approved:
        st.caption(f":material/schedule: Approved by {md(request.decided_by or '?')} on "
                   f"{_when(request.decided_at)}, but not released yet (it did not fit the budget "
                   "then).")  # fmt: skip
    try:
        choice = ReleaseChoice.from_request(planned)
        _, spent = spending(choice, table)
        events = [event_for(m, query=choice.query.name) for m in spent]
    except DPDashError as error:
        st.error(f"This request cannot be released as asked: {md(error)}", icon=":material/error:")
        fits = False
    else:
        # On demand: computing every waiting request's true answer on every rerun made the page slow.
        if st.toggle("Show the true answer now (owner only)", key=f"request_truth_{request.uid}"):
            _true_answer(table, choice.query)
        after = running.kept_epsilon(keeper, history, events, record.budget.delta)
        fits = running.fits(keeper, history, events, record.budget.delta, record.budget.epsilon)
        doing = "Releasing it" if approved else "Approving it releases it now:"
        st.caption(f"{doing} spent ε would go to {spent_text(after)} of {record.budget.epsilon:g} "
                   f"({md(record.accountant)} accountant)."
                   + ("" if fits else " **It does not fit the remaining budget.**"))  # fmt: skip
    uid = request.uid
    if st.session_state.get(_CONFIRMING) == uid and fits:
        st.markdown(f"**Confirm: {'release' if approved else 'approve and release'}.** Cost: {choice.cost}. "
                    "**This cannot be undone:** the budget is spent, and the analyst sees the released "
                    "values.")  # fmt: skip
        go, cancel = st.columns(2)
        if cancel.button("Cancel", key=f"request_cancel_{uid}"):
            st.session_state.pop(_CONFIRMING, None)
            st.rerun()
        label = "Release now" if approved else "Approve: release now"
        if go.button(label, type="primary", key=f"request_approve_confirm_{uid}"):
            st.session_state.pop(_CONFIRMING, None)
            _approve(table, record, request, choice)
        return
    if approved:
        if fits and st.button("Release… (spends budget)", type="primary", key=f"request_approve_{uid}"):
            st.session_state[_CONFIRMING] = uid
            st.rerun()
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
                ledger().decide_request(uid, False, user=acting_user(), reason=reason)
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


def _approve(table: ActiveTable, record: Dataset, request: RequestRecord, choice: ReleaseChoice) -> None:
    """The owner's approval (``decide_request``, unless the request is approved already: a release that
    failed before) and then their release of the request, through the one release path, under the
    request's uid; the draw is kept until the ledger has recorded it, so a retry sends the same values."""
    drawn: dict[str, Release] = st.session_state.setdefault(_DRAWN, {})
    try:
        check(dataset_ref(table), Action.RELEASE)
        if request.status == "pending":
            ledger().decide_request(request.uid, True, user=acting_user())
        result = drawn.get(request.uid)
        if result is None:
            result = draw_release(
                table, choice.query, choice.mechanism, epsilon=choice.epsilon, delta=choice.delta or None,
                confidence=choice.confidence, postprocess=list(choice.steps),
            )  # fmt: skip
            drawn[request.uid] = result
        entries = record_release(table, record, result, request_id=request.uid)
    except DPDashError as error:
        if not isinstance(error, LedgerError):  # refused for good: a new try draws anew
            drawn.pop(request.uid, None)
        st.error(f"Not released: {md(error)}", icon=":material/block:")
        return
    drawn.pop(request.uid, None)
    data = ledger().published(record).get(entries[0].uid)  # what the ledger holds is what is published
    st.session_state[_DONE] = (request.uid, result if data is None else Release.from_dict(data))
    st.rerun()
