"""Query & release: preview what a release could look like (free), then release it (spends budget).

An owner previews with the true values and releases; an analyst previews the accuracy without any true
value (ui/blind_preview.py) and requests the release, which an owner approves or declines (ui/requests.py).
"""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py (docs/contributing.md, Layout)


import streamlit as st

from dpdash.access import Action
from dpdash.errors import DPDashError
from dpdash.queries import KeyCounts, SelectionQuery
from dpdash.wording import guarantee
from ui.access import guard_page
from ui.blind_preview import analyst_numeric_preview, analyst_selection_preview
from ui.checklist import mark_previewed
from ui.guarded import evaluate
from ui.key_preview import key_counts_preview
from ui.ledger_session import budget_set_or_stop, registered_or_stop
from ui.mechanism_menus import KEY_MECHANISMS, NOISE_MECHANISMS, SELECTION_MECHANISMS, needs_delta
from ui.numbers import left_text, spent_text
from ui.previews import numeric_preview, report_caption, selection_preview
from ui.query_builder import postprocess_controls, query_controls
from ui.recent_releases import recent_releases
from ui.release_choice import ReleaseChoice
from ui.release_flow import release_controls, show_last_release, spend_figures
from ui.requests import owner_requests, request_form, request_list, spending
from ui.state import active_table, allowed, table_caption
from ui.text import md, show_guarantee
from ui.widgets import delta_control, epsilon_control, table_epsilon_default

#: A release that would leave less than this share of the budget ε warns before it is confirmed.
LOW_REMAINING = 0.05

st.title("Query & release")
guard_page(__file__)
table = active_table()
# The owner previews with the true values and releases; anyone else with this page (an analyst) previews
# without them and requests. Each path checks the role again where it computes or spends (ui/state.py).
owner = allowed(table, Action.RELEASE)
table_caption(table)
if owner:
    record = registered_or_stop(table)
    if record is not None:
        owner_requests(table, record)
recent_releases(table)  # every session's, with their values: a release whose tab closed is found here

left, right = st.columns([1, 1], gap="large")
with left:
    query = query_controls(table.facts, "release", columns=list(table.data.columns))
    selecting, keyed = isinstance(query, SelectionQuery), isinstance(query, KeyCounts)
    choices = SELECTION_MECHANISMS if selecting else KEY_MECHANISMS if keyed else NOISE_MECHANISMS
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
        delta = delta_control("release_delta") if needs_delta(mechanism) else 0.0
    steps = [] if query is None else postprocess_controls(query, "release")
if query is None or epsilon is None:
    st.stop()
choice = ReleaseChoice(query, mechanism, epsilon, delta, confidence, tuple(steps))

try:
    evaluation = evaluate(table, query) if owner else None  # the true answer: the owner's alone
    # ε is split equally over a selection's selections (basic composition), as release() does
    pieces, spent_by = spending(choice, table)
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
            analyst_selection_preview(choice, selectors, labels=labels, mechanism_label=mechanism_label)
        else:
            analyst_numeric_preview(choice, pieces, labels=labels, mechanism_label=mechanism_label,
                                    key="release")  # fmt: skip
    elif selecting:
        selection_preview(choice, selectors, evaluation, labels=labels, mechanism_label=mechanism_label,
                          key="release")  # fmt: skip
    else:
        numeric_preview(choice, pieces, evaluation, labels=labels, mechanism_label=mechanism_label,
                        key="release")  # fmt: skip
    if evaluation is not None:
        report_caption(query, evaluation, selecting)
    mark_previewed(table)

# ---- the release: spends budget ---------------------------------------------------------------------
st.subheader("Release" if owner else "Request a release")
record = budget_set_or_stop(registered_or_stop(table), owner, "releases can be requested")

spent_now, spent_after, fits, remaining_after = spend_figures(record, query, spent_by)
st.markdown(
    f"Spent so far ε = {spent_text(spent_now)} of {record.budget.epsilon:g}; this release would bring it to "
    f"**{spent_text(spent_after)}** ({md(record.accountant)} accountant).",
    help=f"Exact: spent so far ε = {spent_now!r}, after this release ε = {spent_after!r} (shown rounded "
    "up to 3 significant digits, so never less than what is spent).",
)
show_guarantee(
    guarantee(table.facts.unit, epsilon, delta, accountant=record.accountant), key="release_guarantee"
)
low = fits and remaining_after < LOW_REMAINING * record.budget.epsilon
if low:
    st.warning(
        f"This release would leave only ε = {left_text(remaining_after)} of the budget "
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
        request_form(table, record, choice)
    request_list(table, record)
    st.stop()
release_controls(
    table, record, choice, fits=fits, low=low, spent_after=spent_after, remaining_after=remaining_after
)
show_last_release(table, choice)
