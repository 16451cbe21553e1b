"""The simulated preview of a release (Query & release page): the ± of what will be published, its
definition, relative error, chances, a quantile dotplot and possible releases. Spends no budget.

Headline numbers are over the declared cells only; the "(other)" cell (values outside the declared
categories or bins) is shown apart, since its true count can be far from the real cells'.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dpdash import preview, published
from dpdash.accuracy import simultaneous_tail
from dpdash.errors import DPDashError
from dpdash.queries import OTHER, CompositeQuery, DataReport, Evaluation, Query
from dpdash.release import describe_postprocessing
from ui.chart_view import show_chart
from ui.numbers import percent, plural, thousands
from ui.possible_releases import possible_releases
from ui.preview_charts import dotplot_table, quantile_dotplot_figure
from ui.release_choice import ReleaseChoice
from ui.text import md

#: At most this many values are drawn in the dotplot and the animation (the table lists all).
SHOWN = 40


def _fmt(x: float) -> str:
    return "∞" if not np.isfinite(x) else f"{x:.4g}"


def _query_key(query: Query) -> str:
    return hashlib.sha256(repr(query.to_dict()).encode()).hexdigest()[:12]


def numeric_preview(
    choice: ReleaseChoice,
    pieces: list[Any],
    evaluation: Evaluation,
    *,
    labels: list[str],
    mechanism_label: str,
    key: str,
) -> None:
    """The preview of a numeric query (one noisy answer, or a mean/variance from noisy pieces), with
    its post-processing."""
    query, confidence, steps = choice.query, choice.confidence, choice.steps
    truth = np.asarray(evaluation.values, dtype=float).ravel()
    try:
        with st.spinner("Simulating possible releases…"):
            accuracy = preview.preview_accuracy(
                query, pieces, truth, true_pieces=evaluation.pieces, confidence=confidence, postprocess=steps
            )
    except DPDashError as error:
        st.warning(f"No preview for these settings: {md(error)}", icon=":material/warning:")
        return
    real = np.array([label != OTHER for label in labels])
    if not real.any():  # only an "(other)" cell: show it as it is
        real = np.ones(len(labels), bool)
    k_real = int(real.sum())
    each = accuracy.half_widths
    columns = st.columns(4)
    if np.allclose(each[real], each[real][0], rtol=1e-9, atol=0):
        columns[0].metric(f"± each value ({confidence:.0%})", _fmt(float(each[real][0])))
    else:
        columns[0].metric(f"± each value, largest ({confidence:.0%})", _fmt(float(each[real].max())))
    joint = accuracy.joint_half_width
    if k_real != truth.size:  # the joint ± over the declared cells only
        joint = _joint_over(accuracy, real)
    if k_real > 1:
        columns[1].metric(f"± all {k_real} at once", _fmt(joint))
    else:
        columns[1].metric("true value (owner only)", f"{float(truth[real][0]):.6g}")
    relative = accuracy.relative_errors()
    columns[2].metric(
        "relative error" + (" (median)" if k_real > 1 else ""), percent(float(np.median(relative[real])))
    )
    columns[3].metric(
        "chance some value < 0" if k_real > 1 else "chance the value < 0",
        f"{accuracy.chance_any_below(0.0, real):.1%}",
    )
    kind = {"exact": "exact", "simulated": "simulated preview"}.get(accuracy.method, accuracy.method)
    st.caption(
        f"**± definition ({md(kind)}).** {md(accuracy.definition)}. Relative error: ± / |true value|. "
        + (f"Headline numbers are over the {plural(k_real, 'declared cell')}; {OTHER} is shown apart below. "
           if k_real != truth.size else "")
        + f"Mechanism: {md(mechanism_label)}."
    )  # fmt: skip
    if steps:
        st.caption(
            "Post-processing included in the ± above: "
            + "; then ".join(md(describe_postprocessing(s)) for s in steps)
            + "."
        )
    if accuracy.method == "simulated":
        low, high = published.stated_range(query, pieces, evaluation.pieces or {"answer": truth},
                                           confidence=confidence, postprocess=steps)  # fmt: skip
        st.caption(
            "**What the release will state.** The same function at the released pieces instead of the true "
            "ones (the true values are not public, and a ± computed from them would publish them): in 90% of "
            f"releases the stated ± (largest) lies between {_fmt(float(low[real].max()))} and "
            f"{_fmt(float(high[real].max()))}."
        )
    if isinstance(query, CompositeQuery):
        parts = "; ".join(
            f"{md(p.name)}: {md(p.mechanism.name)} at ε = {p.mechanism.epsilon:.4g}, "
            f"±{p.mechanism.release_accuracy(confidence, p.query.dimension):.4g} (exact)"
            for p in pieces
        )
        st.caption(f"Released from noisy pieces ({md(query.combination)}): {parts}.")
    if not real.all():
        other = np.flatnonzero(~real)
        for i in other:
            st.caption(
                f"**{OTHER}** (values outside the declared categories or bins, shown apart): true count "
                f"{truth[i]:g} (owner only), ±{_fmt(float(each[i]))}, relative error "
                f"{percent(float(relative[i]))}, chance < 0: {accuracy.chance_below(0.0)[i]:.1%}."
            )

    order = np.flatnonzero(real)[:SHOWN]
    shown_labels = [labels[i] for i in order]
    offsets = accuracy.dots[order] - truth[order][:, None]
    how = (
        "exact quantiles of the noise"
        if accuracy.method == "exact"
        else f"from {accuracy.draws:,} seeded draws"
    )
    title = f"Possible releases (simulated: spends no budget) · dots: {how}"
    show_chart(
        quantile_dotplot_figure(offsets, np.zeros(order.size), shown_labels, half_width=each[order],
                                title=title),
        key=f"{key}_dotplot", table=dotplot_table(offsets, shown_labels, each[order]),
        summary=f"Each dot is one of {offsets.shape[1]} equally likely possible releases, as released value "
        "− true value (owner only); the band is the ± above.",
    )  # fmt: skip
    possible_releases(accuracy.possible_releases(30)[:, order], truth[order], shown_labels, key=key)
    threshold = st.number_input(
        "Threshold to check (e.g. a policy cut-off)",
        value=float(np.median(truth[real])),
        format="%g",
        key=f"{key}_threshold_{_query_key(query)}",
    )
    crossing = accuracy.chance_of_crossing(threshold)
    st.dataframe(
        pd.DataFrame(
            {
                "value": labels,
                "cell": np.where(real, "declared", "outside the declared list"),
                "true (owner only)": truth,
                f"± ({confidence:.0%})": each,
                "relative error": [percent(float(r)) for r in relative],
                "chance noise crosses the threshold": crossing,
            }
        ),
        hide_index=True,
        key=f"{key}_crossing",
        column_config={
            "chance noise crosses the threshold": st.column_config.NumberColumn(format="percent"),
        },
    )


def _joint_over(accuracy: preview.PreviewAccuracy, cells: np.ndarray) -> float:
    """± for all the given cells at once."""
    if accuracy.mechanism is not None:  # the noise of the release's plan for all its values
        plan = accuracy.mechanism.release_plan(accuracy.truth.size)
        return float(plan.half_width(simultaneous_tail(accuracy.confidence, int(cells.sum()))))
    assert accuracy.samples is not None
    errors = np.max(np.abs(accuracy.samples[:, cells] - accuracy.truth[cells]), axis=1)
    return float(np.quantile(errors, accuracy.confidence, method="inverted_cdf"))


def selection_preview(
    choice: ReleaseChoice,
    selectors: list[Any],
    evaluation: Evaluation,
    *,
    labels: list[str],
    mechanism_label: str,
    key: str,
) -> None:
    """A quantile's (or mode's) preview: exact chances of each public candidate; for numeric
    candidates the exact ± around the exact empirical quantile, with a dotplot."""
    query: Any = choice.query
    confidence = choice.confidence
    bias = evaluation.report.clipping_bias or ()
    try:  # the ± a release states: dpdash.published, the one place it is computed
        stated, all_chances = published.selection_accuracy(query, selectors, evaluation.utilities, confidence)
    except DPDashError as error:
        st.warning(md(error), icon=":material/warning:")
        return
    numeric = all(isinstance(c, int | float) for c in query.candidates)
    for i in range(len(selectors)):
        chances = all_chances[i]
        best = evaluation.values[i]
        a = float(stated.half_widths[i])
        if numeric:
            exact = float(best) - (float(bias[i]) if i < len(bias) and np.isfinite(bias[i]) else 0.0)
            relative = abs(a / float(best)) if best else float("inf")
            columns = st.columns(3)
            columns[0].metric(f"± ({confidence:.0%})", _fmt(a))
            columns[1].metric("relative error", percent(relative))
            columns[2].metric("best public candidate (owner only)", f"{float(best):.6g}")
            st.caption(
                f"**± definition ({md(stated.method)}).** {md(stated.definition)}. The release, its CSV, "
                f"JSON record and report state this same ±. The exact empirical {md(labels[i])} is "
                f"{exact:.6g} (owner only), {abs(float(best) - exact):.4g} from the best public candidate: "
                "the ± is measured from the candidate: a distance to the exact quantile would publish it. "
                "Relative error: ± / |best candidate|."
            )
            dots = preview.selection_dots(chances, query.candidates)[None, :] - float(best)
            title = "Possible releases (simulated: spends no budget) · dots: exact chances"
            figure = quantile_dotplot_figure(dots, np.zeros(1), [labels[i]], half_width=a, title=title)
            show_chart(figure, key=f"{key}_selection_dotplot_{i}", table=dotplot_table(dots, [labels[i]], a))
        else:
            st.metric(f"count gap ({confidence:.0%}, rows)", _fmt(a))
            st.caption(f"**± definition ({md(stated.method)}).** {md(stated.definition)}.")
        top = np.argsort(-chances)[:10]
        st.markdown(
            f"**{md(labels[i])}**: the best candidate is **{md(best)}** (owner only). The "
            f"{md(mechanism_label.lower())} picks a candidate with these chances (10 most likely shown)."
        )
        st.dataframe(
            pd.DataFrame({"candidate": np.asarray(query.candidates)[top], "chance": chances[top]}),
            hide_index=True, key=f"{key}_selection_{i}",
            column_config={"chance": st.column_config.NumberColumn(format="percent")},
        )  # fmt: skip


#: What happened to values outside the declared categories or bins, by ``DataReport.outside_policy``.
_OUTSIDE_FATE = {"other": f"counted in the extra “{OTHER}” cell", "drop": "left out of the answer"}


def outside_words(report: DataReport) -> str:
    """The values outside what the query declares, and what became of them, in words: ``"45 values
    outside the declared categories or bins (left out of the answer)"``. A quantile's candidates are a
    range, whose outside values keep their rank (``outside_policy`` None): nothing is named in brackets."""
    values = plural(report.outside, "value")
    if report.outside_policy is None:
        return f"{values} outside the declared range of candidates"
    fate = _OUTSIDE_FATE.get(report.outside_policy, report.outside_policy)
    return f"{values} outside the declared categories or bins ({fate})"


def report_caption(query: Query, evaluation: Evaluation, selecting: bool) -> None:
    """The NOT PRIVATE data report: rows, missing, clipping (a bias only when something was clipped)."""
    report = evaluation.report
    bias = ""
    moved = [b for b in (report.clipping_bias or ()) if b != 0 and np.isfinite(b)]
    if moved and selecting:
        shown_bias = ", ".join(f"{b:+.4g}" for b in report.clipping_bias[:5])
        bias = f" The best public candidate differs from the exact quantile by {shown_bias}."
    elif moved and (report.clipped_below or report.clipped_above):
        shown_bias = ", ".join(f"{b:+.4g}" for b in report.clipping_bias[:5])
        bias = f" Clipping moves the true answer by {shown_bias} (answer with the bounds − without them)."
    outside = f" {outside_words(report)}." if report.outside else ""
    st.caption(
        f"NOT PRIVATE (owner only): {plural(report.rows, 'row')}, {thousands(report.rows_used)} used; "
        f"{report.missing} missing (dropped and counted); clipped {report.clipped_below} below and "
        f"{report.clipped_above} above the declared bounds; "
        f"{plural(report.truncation.rows_truncated, 'row')} beyond the per-person limit dropped."
        f"{bias}{outside}"
    )
