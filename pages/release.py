"""Query & release: preview what a release could look like (free), then release it (spends budget).

An owner previews with the true values and releases; an analyst previews the accuracy without any true
value (ui/blind_preview.py) and requests the release, which an owner approves or declines (ui/requests.py).
"""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py's shell (README, Layout)

import uuid

import streamlit as st

from dpdash.access import Action
from dpdash.accounting import event_for, get_accountant, running
from dpdash.errors import DPDashError, LedgerError
from dpdash.export import release_csv, release_script
from dpdash.facts import Facts
from dpdash.mechanisms import (
    DiscreteGaussian,
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Laplace,
    PermuteAndFlip,
    ReportNoisyMax,
    Staircase,
)
from dpdash.queries import KeyCounts, SelectionQuery
from dpdash.release import Release
from dpdash.wording import Guarantee, accuracy_words, guarantee, protected_unit
from ui.access import guard_page
from ui.blind_preview import analyst_numeric_preview, analyst_selection_preview
from ui.checklist import mark_previewed
from ui.guarded import draw_release, evaluate, record_release
from ui.key_preview import key_counts_preview, offer_published_keys
from ui.ledger_session import ledger, registered_or_stop
from ui.previews import numeric_preview, report_caption, selection_preview
from ui.query_builder import postprocess_controls, query_controls
from ui.requests import owner_requests, released_table, request_form, request_list, spending
from ui.state import active_table, allowed, row_count
from ui.text import md, show_guarantee
from ui.widgets import delta_control, epsilon_control, table_epsilon_default

MECHANISMS = {
    "Laplace": Laplace,
    "Gaussian (analytic)": Gaussian,
    "Geometric": Geometric,
    "Discrete Gaussian": DiscreteGaussian,
    "Staircase": Staircase,
}
SELECTION_MECHANISMS = {
    "Exponential mechanism": ExponentialMechanism,
    "Permute-and-flip": PermuteAndFlip,
    "Report noisy max": ReportNoisyMax,
}
#: Keys that are not public: one mechanism, the geometric with a threshold (dpdash.key_release).
KEY_MECHANISMS = {"Geometric with a key threshold": Geometric}
_LAST = "release_last"
_LAST_REQUEST = "release_last_request"  # the request the last release answered
_PENDING = "release_pending"  # (request, drawn release, request id) until the ledger has recorded it
_LAST_SOURCE = "release_last_source"  # the table's name, type changes and lossy flag at that release
_CONFIRMING = "release_confirming"
#: A release that would leave less than this share of the budget ε warns before it is confirmed.
LOW_REMAINING = 0.05

st.title("Query & release")
guard_page(__file__)
table = active_table()
# The owner previews with the true values and releases; anyone else with this page (an analyst) previews
# without them and requests. Each path checks the role again where it computes or spends (ui/state.py).
owner = allowed(table, Action.RELEASE)
rows = row_count(table)
st.caption(
    f"Table: **{md(table.name)}**{'' if rows is None else f' · {rows:,} rows'} · protects "
    f"{md(protected_unit(table.facts.unit))}"
)
if owner:
    record = registered_or_stop(table)
    if record is not None:
        owner_requests(table, record)

left, right = st.columns([1, 1], gap="large")
with left:
    query = query_controls(table.facts, "release", columns=list(table.data.columns))
    selecting, keyed = isinstance(query, SelectionQuery), isinstance(query, KeyCounts)
    choices = SELECTION_MECHANISMS if selecting else KEY_MECHANISMS if keyed else MECHANISMS
    mechanism_label = st.selectbox(
        "Mechanism", list(choices), key=f"release_mechanism{'_selection' * selecting}{'_keys' * keyed}"
    )
    mechanism = choices[mechanism_label]
    confidence = st.select_slider(
        "Confidence of the ± intervals",
        options=(0.9, 0.95, 0.99),
        value=0.95,
        format_func=lambda c: f"{c:.0%}",
        key="release_confidence",
    )
with right:
    epsilon = epsilon_control("release_epsilon", default=table_epsilon_default(table))  # ⅒ of what remains
    if keyed:
        delta = delta_control("release_delta_keys", label="δ (the chance a lone person's key is published)")
    else:
        delta = delta_control("release_delta") if mechanism in (Gaussian, DiscreteGaussian) else 0.0
    steps = [] if query is None else postprocess_controls(query, "release")
if query is None or epsilon is None:
    st.stop()

try:
    evaluation = evaluate(table, query) if owner else None  # the true answer: the owner's alone
    # ε is split equally over a selection's selections (basic composition), as release() does
    pieces, spent_by = spending(query, mechanism, table, epsilon=epsilon, delta=delta)
    selectors = spent_by if selecting else []
except DPDashError as error:
    st.error(md(error), icon=":material/error:")
    st.stop()

labels = [] if keyed else [str(label) for label in (query.selections if selecting else query.labels)]
# ---- the preview: simulated, free --------------------------------------------------------------------
with st.container(border=True):
    st.markdown("#### :material/visibility: Simulated preview · spends no budget")
    st.caption(
        "The ± of what will be published, before anything is published: exact where a closed form exists, "
        "otherwise a seeded simulation with the fast numpy sampler (each ± says which). "
        + ("True values are shown to you, the data owner, only. " if owner else "No true value is shown: "
           "that is the owners'. ")
        + "Nothing here may be published."
    )  # fmt: skip
    if keyed:
        key_counts_preview(query, spent_by[0], table, owner=owner, confidence=confidence)
    elif evaluation is None:
        if selecting:
            analyst_selection_preview(query, selectors, labels=labels, mechanism_label=mechanism_label,
                                      confidence=confidence)  # fmt: skip
        else:
            analyst_numeric_preview(query, pieces, labels=labels, mechanism_label=mechanism_label,
                                    confidence=confidence, steps=steps, key="release")  # fmt: skip
    elif selecting:
        selection_preview(query, selectors, evaluation, labels=labels, mechanism_label=mechanism_label,
                          confidence=confidence, key="release")  # fmt: skip
    else:
        numeric_preview(query, pieces, evaluation, labels=labels, mechanism_label=mechanism_label,
                        confidence=confidence, steps=steps, key="release")  # fmt: skip
    if evaluation is not None:
        report_caption(query, evaluation, selecting)
    mark_previewed(table)

# ---- the release: spends budget ---------------------------------------------------------------------
st.subheader("Release" if owner else "Request a release")
record = registered_or_stop(table)
if record is None:
    st.warning(
        "Set this table's privacy budget on the **Data** page before releasing." if owner else
        "An owner of this table has to set its privacy budget before releases can be requested.",
        icon=":material/lock:",
    )  # fmt: skip
    st.stop()

events = [event_for(spent, query=query.name) for spent in spent_by]
keeper = get_accountant(record.accountant)
history = ledger().events(record)
# The ledger's total, what the release would bring it to (the kept running state, which the spend's check
# then finds warm) and whether it fits, as the ledger decides it.
spent_now = running.epsilon(keeper, history, (), record.budget.delta)
spent_after = running.kept_epsilon(keeper, history, events, record.budget.delta)
fits = running.fits(keeper, history, events, record.budget.delta, record.budget.epsilon)
remaining_after = record.budget.epsilon - spent_after
remaining_after = 0.0 if remaining_after < 1e-9 * record.budget.epsilon else remaining_after


# The confirmation is tied to exactly this query, mechanism and budget: change any of them and it lapses.
request = (
    repr(query.to_dict()),
    mechanism.__name__,
    epsilon,
    delta,
    confidence,
    tuple(steps),
    table.fingerprint,
)
# The same request as the release just made: a click would repeat it, at the same cost again.
repeat = st.session_state.get(_LAST_REQUEST) == request
cost = f"ε = {epsilon:g}{f', δ = {delta:g}' if delta else ''}"
st.markdown(
    f"Spent so far ε = {spent_now:.4g} of {record.budget.epsilon:g}; this release would bring it to "
    f"**{spent_after:.4g}** ({md(record.accountant)} accountant)."
)
show_guarantee(
    guarantee(table.facts.unit, epsilon, delta, accountant=record.accountant), key="release_guarantee"
)
low = fits and remaining_after < LOW_REMAINING * record.budget.epsilon
if low:
    st.warning(
        f"This release would leave only ε = {remaining_after:.4g} of the budget "
        f"ε = {record.budget.epsilon:g} (less than {LOW_REMAINING:.0%}): after it, almost nothing more can "
        "be released from this table. A smaller ε keeps budget for later questions.",
        icon=":material/warning:",
    )
if not fits:
    st.error(
        "This release does not fit the remaining budget: lower ε or release less.", icon=":material/block:"
    )
if not owner:  # an analyst requests; an owner approves or declines (ui/requests.py)
    if fits:
        request_form(table, record, query, mechanism, epsilon=epsilon, delta=delta, confidence=confidence,
                     steps=steps)  # fmt: skip
    request_list(table, record)
    st.stop()
if not fits:
    pass
elif st.session_state.get(_CONFIRMING) != request:
    label = "Release again… (spends budget again)" if repeat else "Release… (spends budget)"
    if st.button(label, type="primary", key="release_button"):
        st.session_state[_CONFIRMING] = request
        st.rerun()
else:
    with st.container(border=True):
        again = (
            "**This repeats the release you just made** (same query, mechanism, ε, δ and confidence): it "
            f"costs {cost} again and draws new noise, and the two results together reveal more than "
            "either.  \n"
            if repeat
            else ""
        )
        st.markdown(
            f"{again}**Confirm the release.** Cost: {cost}. "
            f"Total spent after: ε = {spent_after:.4g} of {record.budget.epsilon:g} ({md(record.accountant)} "
            f"accountant, δ = {record.budget.delta:g}); remaining {remaining_after:.4g}"
            f"{' (almost nothing)' if low else ''}.  \n"
            "**This cannot be undone:** the budget is spent even if you discard the result."
        )
        go, cancel = st.columns(2)
        if cancel.button("Cancel", key="release_cancel"):
            del st.session_state[_CONFIRMING]
            st.rerun()
        if go.button("Release again now" if repeat else "Release now", type="primary", key="release_confirm"):
            del st.session_state[_CONFIRMING]
            # A release whose commit may have been lost (a connection dropped) is sent again as it was: the
            # same drawn values under the same request id, which the ledger records at most once.
            pending = st.session_state.get(_PENDING)
            try:
                if pending is None or pending[0] != request:
                    result = draw_release(table, query, mechanism, epsilon=epsilon, delta=delta or None,
                                          confidence=confidence, postprocess=steps)  # fmt: skip
                    pending = st.session_state[_PENDING] = (request, result, f"dpdash-app:{uuid.uuid4()}")
                _, result, request_id = pending
                record_release(table, record, result, request_id)  # committed, with its values
            except DPDashError as error:
                if not isinstance(error, LedgerError):  # refused for good: a new try draws anew
                    st.session_state.pop(_PENDING, None)
                st.error(f"Not released: {md(error)}", icon=":material/block:")
            else:
                st.session_state.pop(_PENDING, None)
                st.session_state[_LAST] = result
                st.session_state[_LAST_REQUEST] = request
                st.session_state[_LAST_SOURCE] = (table.name, table.coercions, table.lossy, table.connection)
                st.rerun()

last: Release | None = st.session_state.get(_LAST)
if last is not None and last.dataset_fingerprint == table.fingerprint:
    with st.container(border=True):
        st.markdown(
            f"#### :material/verified: Released · {md(last.query_name)} · {md(last.mechanism)} · "
            f"ε = {last.epsilon:g}"
        )
        accuracy, words = last.accuracy, guarantee(Facts.from_dict(last.query.get("facts", {})), last.epsilon,
                                                   last.delta)  # fmt: skip
        means = accuracy_words(accuracy.confidence, accuracy.method, len(last.values), accuracy.scope,
                               accuracy.joint_half_width)  # fmt: skip
        show_guarantee(
            Guarantee(
                f"{means} {words.plain}",
                f"± ({accuracy.method}): {accuracy.definition}. {words.technical}"
                + (" By randomized response: also ε-local DP for each person." if "local DP" in last.guarantee
                   else ""),
            ),
            key="release_last_guarantee",
        )
        released_table(last, key="release_result")
        offer_published_keys(last, table)
        name, coercions, lossy, connection = st.session_state.get(
            _LAST_SOURCE, (table.name, table.coercions, table.lossy, table.connection)
        )
        downloads = st.columns(2 if connection else 3)
        downloads[0].download_button(
            "CSV of the released values",
            release_csv(last),
            "release.csv",
            "text/csv",
            key="release_download_csv", on_click="ignore",
        )
        downloads[1].download_button(
            "JSON release record",
            last.to_json(),
            "release.json",
            "application/json",
            key="release_download_json", on_click="ignore",
        )
        if connection is None:
            downloads[2].download_button(
                "Python script (dpdash)",
                release_script(last, coercions=coercions, lossy=lossy, table_name=name),
                "reproduce_release.py",
                "text/x-python",
                key="release_download_script", on_click="ignore",
            )
            st.caption(
                "The script releases again, with new noise, only by spending from this ledger: run "
                "`python reproduce_release.py <the table's file>` (`--ledger PATH` for another ledger file); "
                "`--preview` simulates and spends nothing."
            )
        else:
            st.caption(
                "The reproduction script reads a file; this table is connected where it lives. From Python, "
                "`dpdash.engines.SourceSpec(...).open()` gives the same source (the same fingerprint), and "
                "`release(...)` then `Ledger().spend_release(...)` repeat the release (README, Large tables)."
            )
