"""Planner: share what remains of the budget among planned releases, before spending any of it."""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py (docs/contributing.md, Layout)


import pandas as pd
import streamlit as st

from dpdash.accounting import PlannedQuery
from dpdash.errors import DPDashError
from dpdash.queries import (
    CompositeQuery,
    SelectionQuery,
)
from dpdash.report import plan_report
from ui.access import guard_page
from ui.ledger_session import ledger, registered_or_stop
from ui.numbers import left_text, spent_text
from ui.plan_rows import COLUMNS, DEFAULT_BINS, MECHANISMS, blank, combined_answers, default_plan, plan_row
from ui.query_builder import query_controls
from ui.state import active_table
from ui.text import md

st.title("Planner")
guard_page(__file__)
table = active_table()
record = registered_or_stop(table)
if record is None:
    st.info("Set this table's budget on the **Data** page to plan against it.", icon=":material/info:")
    st.stop()
status = ledger().status(record)
st.caption(
    f"Budget ε = {record.budget.epsilon:g} (δ = {record.budget.delta:g}), "
    f"{spent_text(status.spent.epsilon)} spent, {left_text(status.remaining_epsilon)} left under the "
    f"**{md(record.accountant)}** accountant. Planning spends nothing. Unlocked rows share what is left in "
    "proportion to their weights (one common factor, PSI's rule); a locked row keeps its ε, or the ε its "
    "±accuracy needs.",
    help=f"Exactly: {status.spent.epsilon!r} spent, {status.remaining_epsilon!r} left.",
)

if status.exhausted:
    st.error("Nothing remains of this table's budget: no release can be planned.", icon=":material/block:")
    st.stop()

confidence = st.select_slider("Confidence of the ±accuracy", (0.9, 0.95, 0.99), value=0.95,
                              format_func=lambda c: f"{c:.0%}", key="planner_confidence")  # fmt: skip
delta = st.select_slider("δ for Gaussian rows", (1e-5, 1e-6, 1e-7, 1e-8), value=1e-6,
                         format_func=lambda d: f"{d:.0e}", key="planner_delta")  # fmt: skip
# The plan belongs to the active table: its defaults come from this table's declared facts, and the
# editor's key names the table, so another table never inherits this one's plan.
plan_key = f"planner_plan_{table.identity}"
version_key = f"planner_version_{table.identity}"
base = st.session_state.get(plan_key)
if base is None:
    base = default_plan(table.facts)
version = st.session_state.get(version_key, 0)
combined_key = f"planner_combined_{table.identity}"
if base.empty:
    st.info(
        "Nothing is planned yet. Declare bounds and categories on the **Data** page for a starting plan from "
        "this table's columns, add a row below, or add one from a query.",
        icon=":material/info:",
    )
else:
    st.caption(
        f"Starting plan from **{md(table.name)}**'s declared columns (edit, add or delete rows); a numeric "
        f"histogram uses {DEFAULT_BINS} public bins over the declared bounds."
    )
rows = st.data_editor(
    base, num_rows="dynamic", hide_index=True, key=f"planner_rows_{table.identity}_{version}",
    width="stretch",
    column_config={
        "mechanism": st.column_config.SelectboxColumn(options=MECHANISMS, required=True),
        "sensitivity": st.column_config.NumberColumn(min_value=0.0, format="%g", required=True),
        "answers k": st.column_config.NumberColumn(min_value=1, step=1, required=True),
        "weight": st.column_config.NumberColumn(min_value=0.0, format="%g"),
        "lock ε": st.column_config.NumberColumn(min_value=0.0, format="%g"),
        "lock ±accuracy": st.column_config.NumberColumn(min_value=0.0, format="%g"),
    },
)  # fmt: skip

with st.expander("Add a planned release from a query on this table"):
    query = query_controls(table.facts, "planner")
    mechanism = st.selectbox("Mechanism", MECHANISMS, key="planner_add_mechanism")
    if query is not None and st.button("Add to the plan", key="planner_add"):
        if isinstance(query, SelectionQuery):
            st.warning("The planner plans noise mechanisms; plan a quantile's ε as a row by hand.",
                       icon=":material/info:")  # fmt: skip
        else:
            parts = ([(f"{query.name}: {p.name}", p.query, p.share) for p in query.pieces()]
                     if isinstance(query, CompositeQuery) else [(query.name, query, 1.0)])  # fmt: skip
            added = [plan_row(label, mechanism, piece, weight) for label, piece, weight in parts]
            if isinstance(query, CompositeQuery):  # its combined ± is simulated once the plan gives ε
                st.session_state.setdefault(combined_key, {})[query.name] = (query.to_dict(), mechanism)
            st.session_state[plan_key] = pd.concat(
                [rows, pd.DataFrame(added, columns=COLUMNS)], ignore_index=True
            )
            st.session_state[version_key] = version + 1
            st.rerun()

try:
    planned = []
    for row in rows.to_dict("records"):
        if blank(row.get("mechanism")) or blank(row.get("sensitivity")):
            continue
        gaussian = row["mechanism"] in ("gaussian", "discrete_gaussian")
        planned.append(
            PlannedQuery(
                mechanism=row["mechanism"], sensitivity=float(row["sensitivity"]),
                weight=1.0 if blank(row.get("weight")) else float(row["weight"]),
                delta=delta if gaussian else None,
                epsilon=None if blank(row.get("lock ε")) else float(row["lock ε"]),
                accuracy=None if blank(row.get("lock ±accuracy")) else float(row["lock ±accuracy"]),
                confidence=confidence, k=int(row.get("answers k") or 1), query=str(row.get("query") or ""),
            )
        )  # fmt: skip
    if not planned:
        st.info("Add a planned release to the table.", icon=":material/info:")
        st.stop()
    with st.spinner("Fitting the plan to the budget…"):
        plan = ledger().plan(record, planned)
except DPDashError as error:
    st.error(f"The plan cannot be computed: {md(error)}", icon=":material/error:")
    st.stop()

result = pd.DataFrame(
    [
        {"query": r.query.query, "mechanism": r.query.mechanism, "locked": "yes" if r.locked else "",
         "ε": r.epsilon, f"±accuracy ({confidence:.0%}, all k answers)": r.half_width}
        for r in plan.releases
    ]
)  # fmt: skip
if plan.fits:
    st.success(
        f"The plan fits: total ε = {spent_text(plan.total)} of {record.budget.epsilon:g} "
        f"({md(plan.accountant)}), {left_text(plan.remaining_after)} would remain.",
        icon=":material/check:",
    )
    st.dataframe(result, hide_index=True, key="planner_result")
else:
    st.error(
        f"The plan does not fit: it is over the budget by ε = {plan.over_by:.4g} ({md(plan.accountant)} "
        "accountant). Unlock rows, loosen their accuracy, or drop a release.",
        icon=":material/block:",
    )
    st.dataframe(
        result.style.apply(lambda _: ["color: #b42318"] * len(result.columns), axis=1),
        hide_index=True, key="planner_result",
    )  # fmt: skip

combined = combined_answers(table, plan, st.session_state.get(combined_key, {}), confidence, delta)
if combined is not None:
    st.markdown("**± of the answers released from several pieces** (a mean: noisy sum / noisy count)")
    st.dataframe(combined, hide_index=True, key="planner_combined")
    st.caption(
        "Simulated preview at the planned ε: seeded numpy draws through the release's calibration and "
        "combination (the same helper as the Query & release preview); each row states its draws and Monte "
        "Carlo error. Shown when the pieces keep the query's split of ε (weights as added, unlocked)."
    )

st.download_button(
    "Stakeholder report of this plan (HTML)",
    plan_report(record, plan, facts=table.facts.unit),
    file_name="dpdash-release-plan.html",
    mime="text/html",
    key="planner_report", on_click="ignore",
)

st.subheader("What if?")
choice = st.selectbox("A release like", [r.query.query or r.query.mechanism for r in plan.releases],
                      key="planner_whatif_row")  # fmt: skip
chosen = next(r for r in plan.releases if (r.query.query or r.query.mechanism) == choice)
event = chosen.event
if event is None:
    st.caption("This row has no ε in the plan, so there is nothing to repeat.")
else:
    more = int(st.number_input("k more releases like it", 1, 10_000, 5, key="planner_whatif_k"))
    outlook = ledger().what_if(record, event, [more])[0]
    whatif = [
        {"accountant": name, "total ε after": total, "within budget": outlook.within_budget[name]}
        for name, total in outlook.totals.items()
    ]
    st.dataframe(pd.DataFrame(whatif), hide_index=True, key="planner_whatif")
    st.metric(
        f"Releases like it that still fit ({md(record.accountant)})", ledger().max_releases(record, event),
        help="At this row's ε and accuracy, counting what has already been spent.",
    )  # fmt: skip
