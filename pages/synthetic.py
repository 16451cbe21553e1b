"""Synthetic table: a private table with the active table's columns, previewed for free by the owner, then
released once under the table's budget (MST on marginals measured where the table lives).

An owner previews (a seeded draw on the true table, NOT PRIVATE, spends nothing) and releases; an analyst
sees the columns, the cost, and the synthetic tables already released, which they may download.
"""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py (docs/contributing.md, Layout)


import streamlit as st

from dpdash.access import Action
from dpdash.errors import DPDashError
from dpdash.synthetic import DEFAULT_BINS, build_domain
from dpdash.wording import guarantee
from ui.access import guard_page
from ui.ledger_session import budget_set_or_stop, registered_or_stop
from ui.numbers import spent_text
from ui.release_flow import event_figures
from ui.state import active_table, allowed, table_caption
from ui.synthetic_preview import SIDE_BY_SIDE_ROWS, show_preview
from ui.synthetic_release import earlier_releases, release_controls, show_released
from ui.synthetic_setup import (
    METHODS,
    SyntheticChoice,
    kept_preview,
    method_caption,
    pair_options,
    planned_events,
    preview,
    real_rows,
)
from ui.synthetic_setup import synthesizable as synthesizable_columns
from ui.text import md, show_guarantee
from ui.widgets import delta_control, epsilon_control, table_epsilon_default

st.title("Synthetic table")
guard_page(__file__)
table = active_table()
owner = allowed(table, Action.RELEASE)
table_caption(table, ". A table with these columns whose one- and two-way distributions follow the real "
              "ones, safe to hand out: every row is drawn from noisy marginals.")
record = registered_or_stop(table)
earlier_releases(table, record)  # every session's, with their CSV where this app kept it

usable, refused = synthesizable_columns(table.facts, [str(c) for c in table.data.columns])
if refused:
    with st.expander(f"Columns that cannot be synthesized: {len(refused)}", key="synthetic_refused"):
        st.markdown("\n".join(f"- **{md(name)}**: {why}" for name, why in refused.items()))
if not usable:
    st.info("No column has declared categories or bounds: declare them on the **Data** page first.",
            icon=":material/info:")  # fmt: skip
    st.stop()

left, right = st.columns([1, 1], gap="large")
with left:
    columns = st.multiselect(
        "Columns of the synthetic table", usable, default=usable, key="synthetic_columns",
        help="From the declared public facts: categories, or bounds cut into bins.",
    )  # fmt: skip
    method_label = st.selectbox("Method", list(METHODS), key="synthetic_method",
                                help="MST keeps a tree of pairs it chooses; AIM spends its budget on the "
                                "pairs you choose below, measuring again the worst fitted.")  # fmt: skip
    options = pair_options(tuple(columns))
    workload = tuple(options[p] for p in st.multiselect(
        "Pairs of columns to keep (AIM's workload)", list(options), key="synthetic_workload",
        help="The two-way distributions the synthetic table should follow best.",
    )) if METHODS[method_label] == "aim" else ()  # fmt: skip
    bins = int(st.number_input("Bins per numeric column (over its declared bounds)", min_value=2,
                               max_value=64, value=DEFAULT_BINS, step=1, key="synthetic_bins"))  # fmt: skip
with right:
    epsilon = epsilon_control("synthetic_epsilon", default=table_epsilon_default(table))
    delta = delta_control("synthetic_delta", default=1e-6, label="δ (ρ-zCDP, stated as (ε, δ))")
if not columns:
    st.info("Choose at least one column.", icon=":material/info:")
    st.stop()
if epsilon is None:
    st.stop()
choice = SyntheticChoice(tuple(columns), METHODS[method_label], bins, epsilon, delta, workload)
if choice.method == "aim" and not workload:
    st.info("Choose at least one pair of columns for AIM to keep.", icon=":material/info:")
    st.stop()
try:
    domain = build_domain(table.facts, list(columns), bins=bins)
    events = planned_events(domain, epsilon, delta, choice.method, workload)
except DPDashError as error:
    st.error(md(error), icon=":material/error:")
    st.stop()
st.caption(method_caption(choice))

# ---- the preview: simulated, free, the owner's ---------------------------------------------------------
with st.container(border=True):
    st.markdown("#### :material/visibility: Simulated preview: not a release · spends no budget")
    if not owner:
        st.caption("The preview reads the true table: it is for the owners of this table.")
    elif kept_preview(table, choice) is None and not st.button("Preview", key="synthetic_preview_button"):
        st.caption("Draws a synthetic table at this budget from the true table, with a fixed seed, and "
                   "compares it with the real one. Nothing is spent or recorded.")  # fmt: skip
    else:
        try:
            with st.spinner("Measuring the marginals and drawing a preview…"):
                previewed, figures = preview(table, choice)
            show_preview(previewed, figures, real_rows(table, choice.columns, SIDE_BY_SIDE_ROWS))
        except DPDashError as error:
            st.error(f"No preview: {md(error)}", icon=":material/error:")

# ---- the release: spends budget ------------------------------------------------------------------------
st.subheader("Release" if owner else "What a release costs")
record = budget_set_or_stop(record, owner, "a synthetic table can be released")
try:
    spent_now, spent_after, fits, remaining_after = event_figures(record, events)
except DPDashError as error:
    st.error(f"This table's accountant cannot take a synthetic release: {md(error)}", icon=":material/block:")
    st.stop()
st.markdown(
    f"Spent so far ε = {spent_text(spent_now)} of {record.budget.epsilon:g}; this release would bring it to "
    f"**{spent_text(spent_after)}** ({md(record.accountant)} accountant).",
    help=f"Exact: spent so far ε = {spent_now!r}, after this release ε = {spent_after!r} (shown rounded "
    "up to 3 significant digits, so never less than what is spent).",
)
show_guarantee(guarantee(table.facts.unit, epsilon, delta, accountant=record.accountant),
               key="synthetic_guarantee")  # fmt: skip
if not fits:
    st.error(
        "This release does not fit the remaining budget: lower ε or release less.", icon=":material/block:"
    )
if not owner:
    st.caption("An owner of this table makes synthetic releases; the ones made are listed above.")
    st.stop()
if fits:
    release_controls(table, record, choice, spent_after=spent_after, remaining_after=remaining_after)
show_released(table)
