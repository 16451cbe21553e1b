"""Audit: show, by experiment, that a release keeps its ε (or catch one that does not)."""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py (docs/contributing.md, Layout)

from functools import partial

import streamlit as st

from dpdash.access import Action
from dpdash.audit import mechanism_target, query_target
from dpdash.errors import DPDashError
from dpdash.queries import Count, Mean, Quantile, Sum
from dpdash.wording import guarantee
from ui.access import guard_page
from ui.audit import (
    BROKEN,
    MAX_TRIALS,
    MECHANISMS,
    current_audit,
    has_audit,
    mechanism_inputs,
    neighbour,
    shown_input,
    start_audit,
)
from ui.audit_view import render_audit
from ui.mechanism_menus import NOISE_MECHANISMS, SELECTION_MECHANISMS, needs_delta
from ui.numbers import thousands
from ui.state import active_table, allowed, table_rows
from ui.text import md, show_guarantee
from ui.widgets import delta_control, epsilon_control

QUERY_KINDS = ("Count of rows", "Sum of a column", "Mean of a column", "Median of a column")
MEDIAN_CANDIDATES = 21


st.title("Audit")
guard_page(__file__)
st.markdown(
    "Check a privacy claim by experiment: run the release many times on two neighbouring inputs and compare "
    "the two piles of outputs. If the release leaked more than its ε allows, some event would happen more "
    "than e^ε times as often on one input as on the other; the audit finds the most telling event and turns "
    "the counts into a **lower bound on ε** at a stated confidence."
)
st.caption(
    ":material/verified: Every trial is a real release: the release-grade sampler (exact arithmetic, "
    "operating-system randomness), the same code and calibration as a publication. Nothing is published and "
    "no budget is spent; the histograms show true answers, so they are for you, the data owner, only."
)

# A query's audit runs on the table's rows and shows true answers: the owner's alone.
whats = ("A mechanism", "A query on the loaded table") if allowed(active_table(), Action.SEE_TRUTH) else (
    "A mechanism",)  # fmt: skip
what = st.radio("What to audit", whats, horizontal=True, key="audit_what")
left, right = st.columns([1, 1], gap="large")
try:
    if what == "A mechanism":
        with left:
            label = st.selectbox("Mechanism", list(MECHANISMS), key="audit_mechanism")
            choice = MECHANISMS[label]
            if choice.kind == "local":
                size = int(st.number_input("Categories k", 2, 50, 2, key="audit_categories"))
            elif choice.integer:
                size = int(
                    st.number_input("Sensitivity Δ (an integer)", 1, 10_000, 1, key="audit_sensitivity_int")
                )
            else:
                size = float(
                    st.number_input("Sensitivity Δ", 0.001, 1e9, 1.0, format="%g", key="audit_sensitivity")
                )
        with right:
            epsilon = epsilon_control("audit_epsilon", label="Claimed ε to audit")
            delta = delta_control("audit_delta") if choice.needs_delta else 0.0
        if epsilon is None:
            st.stop()
        mechanism = choice.build(epsilon, delta, size)
        first, second, why = mechanism_inputs(mechanism, size)
        if label == BROKEN:
            st.warning("This mechanism is broken on purpose: it claims ε but adds the noise of 2ε. "
                       "The audit should catch it.", icon=":material/bug_report:")  # fmt: skip
        claim = f"ε = {epsilon:g}" + (f", δ = {delta:g}" if choice.needs_delta else "")
        st.markdown(
            f"**Inputs:** first = `{shown_input(first)}`, second = `{shown_input(second)}`: {why}. "
            f"**Claim:** {claim}."
        )
        settings = ("mechanism", label, epsilon, delta, size)
        make_target = partial(mechanism_target, mechanism, first, second, label=label)
    else:
        table = active_table()
        rows = table_rows(table)  # the owner's (AccessDenied otherwise)
        facts = table.facts
        if table.engine is not None:
            st.info(
                f"{md(table.name)} is connected where it lives ({md(table.source)}). A query's audit "
                "builds neighbouring tables and evaluates the query on each of them, which needs the rows in "
                "memory: upload a file or pick an example to audit a query on its table. Auditing a "
                "mechanism (the first choice above) works whatever table is active.",
                icon=":material/info:",
            )
            st.stop()
        with left:
            show_guarantee(guarantee(facts.unit), key="audit_guarantee",
                           lead=f"Table: **{md(table.name)}** · {thousands(table.rows)} rows. ")  # fmt: skip
            kind = st.selectbox("Query", QUERY_KINDS, key="audit_query")
            if kind != "Count of rows" and not facts.bounds:
                st.warning(
                    "Declare bounds for a numeric column on the Data page first.", icon=":material/info:"
                )
                st.stop()
            column = None if kind == "Count of rows" else st.selectbox("Column", sorted(facts.bounds),
                                                                       key="audit_column")  # fmt: skip
            choices = SELECTION_MECHANISMS if kind == "Median of a column" else NOISE_MECHANISMS
            median = kind == "Median of a column"
            label = st.selectbox("Mechanism", list(choices), key=f"audit_query_mechanism{'_median' * median}")
            cls = choices[label]
        with right:
            epsilon = epsilon_control("audit_query_epsilon", label="Claimed ε to audit")
            delta = delta_control("audit_query_delta") if needs_delta(cls) else 0.0
        if epsilon is None:
            st.stop()
        if kind == "Count of rows":
            query = Count(facts=facts.unit)
        elif kind == "Median of a column":
            query = Quantile.on_grid(column=column, bounds=facts.bounds[column], size=MEDIAN_CANDIDATES,
                                     quantiles=0.5, facts=facts.unit)  # fmt: skip
        else:
            query = (Sum if kind == "Sum of a column" else Mean)(column=column, bounds=facts.bounds[column],
                                                                 facts=facts.unit)  # fmt: skip
        with st.spinner("Looking for the neighbouring table that moves the answer most…"):
            other = neighbour(table, query, cls, epsilon, delta)
        claim = f"ε = {epsilon:g}" + (f", δ = {delta:g}" if delta else "")
        st.markdown(
            f"**Inputs:** the table and its worst-case neighbour, {md(other.description)} "
            f"(it moves the answer by {other.change:.3g} × the sensitivity). **Claim:** releasing the "
            f"{md(query.name)} with {label}, as dpdash calibrates it, keeps {claim} for this unit of privacy."
        )
        if kind == "Median of a column":
            st.caption(f"The median is chosen among {MEDIAN_CANDIDATES} public candidates evenly spaced over "
                       "the declared bounds.")  # fmt: skip
        settings = ("query", table.fingerprint, repr(query.to_dict()), label, epsilon, delta)
        make_target = partial(query_target, query, cls, rows, other.table, epsilon=epsilon, delta=delta)
except DPDashError as error:
    st.error(f"This cannot be audited: {md(error)}", icon=":material/error:")
    st.stop()

trials_col, confidence_col = st.columns(2)
trials = trials_col.select_slider("Trials per side", (10_000, 100_000, 1_000_000), value=100_000,
                                  format_func=thousands, key="audit_trials")  # fmt: skip
confidence = confidence_col.select_slider("Confidence", (0.9, 0.95, 0.99, 0.999), value=0.99,
                                          format_func=lambda c: f"{c:.1%}".replace(".0%", "%"),
                                          key="audit_confidence")  # fmt: skip
settings = (*settings, confidence)
state = current_audit(settings)

run_col, more_col = st.columns([1, 3])
run_clicked = run_col.button("Run audit", type="primary", key="audit_run", icon=":material/science:")
more_clicked = more_col.button(
    f"Add {thousands(trials)} more trials", key="audit_more", icon=":material/add:",
    disabled=state is None or state.trials >= MAX_TRIALS,
)  # fmt: skip
progress = st.empty()
results = st.empty()


render = partial(render_audit, progress=progress, results=results)

if run_clicked or more_clicked:
    try:
        if run_clicked or state is None:
            state = start_audit(settings, make_target(), confidence)
        state.draw(trials, render)
    except DPDashError as error:
        st.error(f"The audit stopped: {md(error)}", icon=":material/error:")
        st.stop()
    st.rerun()  # redraw the controls for the finished run ("Add more" is enabled once a run exists)
elif state is not None:
    render(state)
elif has_audit():
    st.info("The settings changed since the last audit: press **Run audit** to audit these.",
            icon=":material/info:")  # fmt: skip
