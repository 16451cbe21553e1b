"""Query & release: preview what a release could look like (free), then release it (spends budget)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpdash import preview
from dpdash.accounting import event_for, get_accountant
from dpdash.errors import DPDashError
from dpdash.export import release_csv, release_script
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
from dpdash.queries import SelectionQuery
from dpdash.release import Release, calibrate, release
from ui.charts import possible_release_animation, quantile_dotplot_figure
from ui.query_builder import query_controls
from ui.state import active_table, evaluate, ledger, ledger_session, registered
from ui.text import md
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
_LAST = "release_last"
_LAST_REQUEST = "release_last_request"  # the request the last release answered
_LAST_SOURCE = "release_last_source"  # the table's name, type changes and lossy flag at that release
_CONFIRMING = "release_confirming"
#: A release that would leave less than this share of the budget ε warns before it is confirmed.
LOW_REMAINING = 0.05

st.title("Query & release")
table = active_table()
st.caption(
    f"Table: **{md(table.name)}** · {len(table.data):,} rows · unit of privacy: "
    f"{md(table.facts.unit.describe())}"
)

left, right = st.columns([1, 1], gap="large")
with left:
    query = query_controls(table.facts, "release")
    selecting = isinstance(query, SelectionQuery)
    choices = SELECTION_MECHANISMS if selecting else MECHANISMS
    mechanism_label = st.selectbox(
        "Mechanism", list(choices), key=f"release_mechanism{'_selection' * selecting}"
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
    delta = delta_control("release_delta") if mechanism in (Gaussian, DiscreteGaussian) else 0.0
if query is None or epsilon is None:
    st.stop()

try:
    evaluation = evaluate(table, query)
    if selecting:  # ε is split equally over the selections (basic composition), as release() does
        share = epsilon / len(query.selections)
        selectors = [mechanism(epsilon=share, sensitivity=sensitivity, monotone=query.monotone)
                     for sensitivity in query.utility_sensitivities]  # fmt: skip
        spending = selectors
        pieces = []
    else:
        pieces = calibrate(query, mechanism, table.data, epsilon=epsilon, delta=delta)
        spending = [piece.mechanism for piece in pieces]
except DPDashError as error:
    st.error(md(error), icon=":material/error:")
    st.stop()

labels = [str(label) for label in (query.selections if selecting else query.labels)]
# ---- the preview: simulated, free --------------------------------------------------------------------
with st.container(border=True):
    st.markdown("#### :material/visibility: Simulated preview · spends no budget")
    st.caption(
        "Computed from the mechanism's exact noise distribution (dots, ±a, chances) and seeded numpy draws "
        "(the animation). True values are shown to you, the data owner, only. Nothing here may be published."
    )
    if selecting:
        for i, selector in enumerate(selectors):
            utilities = evaluation.utilities[i]
            try:  # at a tiny typed ε, report-noisy-max's exact chances are too long a sum to show
                chances = selector.probabilities(utilities)
            except DPDashError as error:
                st.warning(md(error), icon=":material/warning:")
                continue
            top = np.argsort(-chances)[:10]
            st.markdown(
                f"**{md(labels[i])}**: the true answer is **{evaluation.values[i]:g}** (owner only). The "
                f"{mechanism_label.lower()} picks a candidate with these exact chances (10 most likely "
                "shown); "
                f"with {confidence:.0%} probability the pick is within "
                f"{selector.utility_gap(confidence, len(utilities)):.4g} utility units of the best."
            )
            st.dataframe(
                pd.DataFrame({"candidate": np.asarray(query.candidates)[top], "chance": chances[top]}),
                hide_index=True, key=f"release_selection_{i}",
                column_config={"chance": st.column_config.NumberColumn(format="percent")},
            )  # fmt: skip
    elif len(pieces) == 1:
        mech = pieces[0].mechanism
        truth = np.asarray(evaluation.values, dtype=float).ravel()
        k = truth.size
        half_width = mech.release_accuracy(confidence, 1)
        columns = st.columns(4)
        columns[0].metric(f"±a, each value ({confidence:.0%})", f"{half_width:.4g}")
        columns[1].metric(f"±a, all {k} at once", f"{mech.release_accuracy(confidence, k):.4g}")
        relative = preview.relative_error(half_width, truth)
        columns[2].metric(
            "relative error (median)",
            "∞" if not np.isfinite(np.median(relative)) else f"{np.median(relative):.1%}",
        )
        columns[3].metric(
            "chance some value < 0", f"{1 - np.prod(1 - preview.chance_below(mech, truth, 0)):.1%}"
        )
        st.caption(
            f"{mechanism_label}: scale {mech.scale:.4g}, sensitivity "
            f"{mech.sensitivity:g} ({mech.sensitivity_norm}); ±a is the exact half-width of the noise "
            "release() adds (plus half a grid step for rounding, for real-valued answers)."
        )
        shown = slice(0, 40)
        # Dots as release − true value: answers of very different sizes share one readable axis.
        offsets = preview.quantile_dots(mech, truth[shown]) - truth[shown][:, None]
        st.plotly_chart(
            quantile_dotplot_figure(
                offsets, np.zeros(offsets.shape[0]), labels[shown], half_width=half_width
            ),
            key="release_dotplot",
        )
        draws = mech.simulate(truth[shown], 30, rng=20261122).astype(float)
        st.plotly_chart(
            possible_release_animation(draws, truth[shown], labels[shown]), key="release_animation"
        )
        threshold = st.number_input(
            "Threshold to check (e.g. a policy cut-off)",
            value=float(np.median(truth)),
            format="%g",
            key="release_threshold",
        )
        crossing = preview.chance_of_crossing(mech, truth, threshold)
        st.dataframe(
            pd.DataFrame(
                {
                    "value": labels,
                    "true (owner only)": truth,
                    "chance noise crosses the threshold": crossing,
                    "relative error": relative,
                }
            ),
            hide_index=True,
            key="release_crossing",
            column_config={
                "chance noise crosses the threshold": st.column_config.NumberColumn(format="percent"),
                "relative error": st.column_config.NumberColumn(format="percent"),
            },
        )
    else:
        st.markdown("This query is released in pieces, each with its own share of ε:")
        for piece in pieces:
            st.markdown(
                f"- **{md(piece.name)}**: {md(piece.mechanism.name)} at ε = {piece.mechanism.epsilon:g}, "
                f"±{piece.mechanism.release_accuracy(confidence, piece.query.dimension):.4g} "
                f"({confidence:.0%})"
            )
        st.caption("The combined value's interval is a closed-form bound computed at release.")
    report = evaluation.report
    bias = ""
    if report.clipping_bias is not None and any(b != 0 for b in report.clipping_bias):
        shown_bias = ", ".join(f"{b:+.4g}" for b in report.clipping_bias[:5])
        bias = f" Clipping moves the true answer by {shown_bias} (answer with the bounds − without them)."
    outside = (
        f" {report.outside} value(s) outside the declared categories ({report.outside_policy})."
        if (report.outside)
        else ""
    )
    st.caption(
        f"NOT PRIVATE (owner only): {report.rows:,} rows, {report.rows_used:,} used; "
        f"{report.missing} missing (dropped and counted); clipped {report.clipped_below} below and "
        f"{report.clipped_above} above the declared bounds; {report.truncation.rows_truncated} rows beyond "
        f"the per-person limit dropped.{bias}{outside}"
    )

# ---- the release: spends budget ---------------------------------------------------------------------
st.subheader("Release")
try:
    record = registered(table)
except DPDashError as error:
    st.error(f"The budget ledger cannot be read: {md(error)}", icon=":material/error:")
    st.stop()
if record is None:
    st.warning(
        "Set this table's privacy budget on the **Data** page before releasing.", icon=":material/lock:"
    )
    st.stop()

events = [event_for(spent, query=query.name) for spent in spending]
keeper = get_accountant(record.accountant)
history = ledger().events(record)
spent_now = keeper.epsilon(history, record.budget.delta)
spent_after = keeper.epsilon([*history, *events], record.budget.delta)
fits = spent_after <= record.budget.epsilon * (1 + 1e-12)
remaining_after = record.budget.epsilon - spent_after
remaining_after = 0.0 if remaining_after < 1e-9 * record.budget.epsilon else remaining_after


# The confirmation is tied to exactly this query, mechanism and budget: change any of them and it lapses.
request = (repr(query.to_dict()), mechanism.__name__, epsilon, delta, confidence, table.fingerprint)
# The same request as the release just made: a click would repeat it, at the same cost again.
repeat = st.session_state.get(_LAST_REQUEST) == request
cost = f"ε = {epsilon:g}{f', δ = {delta:g}' if delta else ''}"
st.markdown(
    f"Spent so far ε = {spent_now:.4g} of {record.budget.epsilon:g}; this release would bring it to "
    f"**{spent_after:.4g}** ({md(record.accountant)} accountant)."
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
            try:
                result = release(
                    query,
                    mechanism,
                    table.data,
                    epsilon=epsilon,
                    delta=delta or None,
                    confidence=confidence,
                    identity=table.identity,
                )
                ledger().spend_release(record, result, session=ledger_session())  # committed before shown
            except DPDashError as error:
                st.error(f"Not released: {md(error)}", icon=":material/block:")
            else:
                st.session_state[_LAST] = result
                st.session_state[_LAST_REQUEST] = request
                st.session_state[_LAST_SOURCE] = (table.name, table.coercions, table.lossy)
                st.rerun()

last: Release | None = st.session_state.get(_LAST)
if last is not None and last.dataset_fingerprint == table.fingerprint:
    with st.container(border=True):
        st.markdown(
            f"#### :material/verified: Released · {md(last.query_name)} · {md(last.mechanism)} · "
            f"ε = {last.epsilon:g}"
        )
        st.caption(f"{md(last.accuracy.definition)}. {md(last.guarantee)}")
        widths = list(last.accuracy.half_widths) + [None] * (
            len(last.values) - len(last.accuracy.half_widths)
        )
        st.dataframe(
            pd.DataFrame({"value": last.labels, "released": last.values, "±": widths}),
            hide_index=True,
            key="release_result",
        )
        name, coercions, lossy = st.session_state.get(
            _LAST_SOURCE, (table.name, table.coercions, table.lossy)
        )
        downloads = st.columns(3)
        downloads[0].download_button(
            "CSV of the released values",
            release_csv(last),
            "release.csv",
            "text/csv",
            key="release_download_csv",
        )
        downloads[1].download_button(
            "JSON release record",
            last.to_json(),
            "release.json",
            "application/json",
            key="release_download_json",
        )
        downloads[2].download_button(
            "Python script (dpdash)",
            release_script(last, coercions=coercions, lossy=lossy, table_name=name),
            "reproduce_release.py",
            "text/x-python",
            key="release_download_script",
        )
        st.caption(
            "The script releases again, with new noise, only by spending from this ledger: run "
            "`python reproduce_release.py <the table's file>` (`--ledger PATH` for another ledger file); "
            "`--preview` simulates and spends nothing."
        )
