"""Counts per key when the keys are not public (``dpdash.key_release``): the preview (the threshold, the ± of
each published count and, for the data owner only, every key found with its exact chance of being published
and one simulated release), and after a release the owner's offer to declare the published keys."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from dpdash.access import Action
from dpdash.key_release import key_accuracy, key_preview
from dpdash.mechanisms import KeyThreshold
from dpdash.queries import KeyCounts
from dpdash.release import Release
from ui.guarded import evaluate
from ui.roles import acting_user
from ui.state import ActiveTable, allowed, update_table
from ui.text import md

__all__ = ["key_counts_preview", "offer_published_keys"]


def _rule(mechanism: KeyThreshold, confidence: float) -> None:
    accuracy = key_accuracy(mechanism, 1, confidence)
    st.markdown(
        f"Threshold **τ = {mechanism.threshold}**: a key is published when its noisy count reaches τ. "
        f"Each published count is within **± {accuracy.half_widths[0]}** of its true count "
        f"({confidence:.0%} confidence, per value; geometric noise of scale {mechanism.scale:.4g} = k·m/ε)."
    )
    st.caption(
        f"± definition: {md(accuracy.definition)}. A key that only one person has is published with "
        f"probability at most δ/k = {mechanism.delta / mechanism.max_groups:.3g}: this is where δ goes. "
        "(ε, δ)-DP under add/remove neighbours."
    )


def key_counts_preview(
    query: KeyCounts, mechanism: KeyThreshold, table: ActiveTable, *, owner: bool, confidence: float
) -> None:
    """The key-count preview: the rule for everyone; the keys found, with their chances, for owners only
    (the evaluation runs through ``ui.state``'s role check)."""
    _rule(mechanism, confidence)
    if not owner:
        st.caption("Which keys exist, and their counts, are the owners' to see: no key is shown here.")
        return
    preview = key_preview(query, evaluate(table, query), epsilon=mechanism.epsilon, delta=mechanism.delta,
                          confidence=confidence)  # fmt: skip
    found = len(preview.table)
    st.markdown(
        f"**{found:,}** keys found; about **{preview.expected_published:.1f}** would be published "
        f"(the sum of their chances). NOT PRIVATE (owner only): the keys, true counts and chances below."
    )
    shown = preview.table.sort_values("true count", ascending=False, kind="stable")
    shown = shown.assign(**{"chance published": shown["chance published"].map(_chance)})
    st.dataframe(pd.DataFrame(shown), hide_index=True, key="release_key_preview")
    st.caption(
        "Simulated (fast numpy sampler, never published): one possible release, to show which keys pass."
    )


def _chance(p: float) -> str:
    if p >= 0.9995:
        return "≈ 100%" if p < 1 else "100%"
    if p < 1e-4:
        return f"{p:.1e}"
    return f"{p:.1%}"


def offer_published_keys(last: Release, table: ActiveTable) -> None:
    """After a key-count release of a text column, the owner may declare its published keys as that
    column's categories: they are public now (the release's output), so histograms and group-by sums and
    means over them can follow, each spending its own ε (sequential composition)."""
    if last.query.get("type") != KeyCounts.kind:
        return
    if not last.labels:
        st.info("No key reached the threshold, so no key was published: only that none passed. A larger ε "
                "or k·m chosen to fit the data lowers τ.", icon=":material/info:")  # fmt: skip
        return
    if not allowed(table, Action.DECLARE):
        return
    column = str(last.query["column"])
    if column not in table.data.columns or pd.api.types.is_numeric_dtype(table.data[column]):
        return  # numeric columns have public bins over their bounds instead
    if tuple(table.facts.categories.get(column, ())) == tuple(last.labels):
        st.caption(f"The published keys are the declared categories of {md(column)}.")
        return
    if st.button(f"Declare the {len(last.labels)} published keys as the categories of {column}",
                 key="release_keys_as_categories",
                 help="They are public now: a histogram or a group-by sum or mean over them can follow, each "
                      "spending its own ε."):  # fmt: skip
        facts = replace(table.facts, categories={**table.facts.categories, column: tuple(last.labels)})
        update_table(table, facts=facts, user=acting_user())
        st.rerun()
