"""The owner's release of a synthetic table (the confirmation that states the cost and what remains, the
draw, its one ledger transaction) and the released table with its downloads (CSV, Parquet, data card, and
the script and notebook that draw it again, ``ui.synthetic_downloads``); the table's earlier
synthetic releases for everyone who may see its releases (owners and analysts)."""

from __future__ import annotations

import uuid

import streamlit as st

from dpdash.access import Action
from dpdash.errors import DPDashError, LedgerError
from dpdash.ledger import Dataset
from dpdash.synthetic import Quality, SyntheticRelease
from ui.guarded import record_release
from ui.numbers import left_text, spent_text
from ui.recent_releases import table_releases
from ui.state import ActiveTable, allowed, workspace
from ui.synthetic_card import card_dict, card_json, card_markdown
from ui.synthetic_downloads import SOURCE, offer_reproduction, source_of
from ui.synthetic_setup import SyntheticChoice, draw, kept_preview
from ui.text import md

__all__ = ["RELEASED_ROWS", "earlier_releases", "release_controls", "show_released"]

#: The released table's first rows shown on the page (all of them are in the downloads).
RELEASED_ROWS = 20
_CONFIRMING = "synthetic_confirming"
_PENDING = "synthetic_pending"  # (request, drawn table, request id) until the ledger has recorded it
_NOT_KEPT = "synthetic_not_kept"  # why the released CSV could not be kept in the workspace
_LAST = "synthetic_last"  # (released table, the preview's quality for the same choices or None)


def release_controls(
    table: ActiveTable,
    record: Dataset,
    choice: SyntheticChoice,
    *,
    spent_after: float,
    remaining_after: float,
) -> None:
    """The release button and its confirmation for exactly these choices (change one and it lapses)."""
    request = choice.key(table.fingerprint)
    if st.session_state.get(_CONFIRMING) != request:
        if st.button("Release… (spends budget)", type="primary", key="synthetic_release_button"):
            st.session_state[_CONFIRMING] = request
            st.rerun()
        return
    with st.container(border=True):
        st.markdown(
            f"**Confirm the release.** Cost: {choice.cost}. "
            f"Total spent after: ε = {spent_text(spent_after)} of {record.budget.epsilon:g} "
            f"({md(record.accountant)} accountant, δ = {record.budget.delta:g}); "
            f"remaining {left_text(remaining_after)}.  \n"
            "The synthetic table is drawn anew (not the preview) and published as it is.  \n"
            "**This cannot be undone:** the budget is spent even if you discard the result."
        )
        go, cancel = st.columns(2)
        if cancel.button("Cancel", key="synthetic_release_cancel"):
            del st.session_state[_CONFIRMING]
            st.rerun()
        if go.button("Release now", type="primary", key="synthetic_release_confirm"):
            del st.session_state[_CONFIRMING]
            pending = st.session_state.get(_PENDING)
            try:
                if pending is None or pending[0] != request:  # a lost commit is sent again as it was
                    with st.spinner("Measuring the marginals and drawing the synthetic table…"):
                        drawn = draw(table, choice)
                    pending = st.session_state[_PENDING] = (request, drawn, f"dpdash-app:{uuid.uuid4()}")
                _, drawn, request_id = pending
                record_release(table, record, drawn, request_id)  # all its events in one transaction
            except DPDashError as error:
                if not isinstance(error, LedgerError):
                    st.session_state.pop(_PENDING, None)
                st.error(f"Not released: {md(error)}", icon=":material/block:")
                return
            st.session_state.pop(_PENDING, None)
            previewed = kept_preview(table, choice)
            st.session_state[_LAST] = (drawn, None if previewed is None else previewed[1])
            st.session_state[SOURCE] = source_of(table)
            try:
                workspace().store_synthetic(table.identity, drawn.to_csv())
            except DPDashError as error:  # shown with the released table, after the rerun
                st.session_state[_NOT_KEPT] = f"Released, but not kept for analysts to download: {md(error)}"
            st.rerun()


def show_released(table: ActiveTable) -> None:
    """The synthetic table just released from this table: its first rows and its downloads."""
    last: tuple[SyntheticRelease, Quality | None] | None = st.session_state.get(_LAST)
    if last is None or last[0].dataset_identity != table.identity:
        return
    released, figures = last
    with st.container(border=True):
        st.markdown(
            f"#### :material/verified: Released · {md(released.query_name)} · ε = {released.epsilon:g}, "
            f"δ = {released.delta:g} · {len(released.table):,} rows"
        )
        st.caption(md(released.guarantee))
        if problem := st.session_state.pop(_NOT_KEPT, None):
            st.warning(problem, icon=":material/warning:")
        st.dataframe(released.table.head(RELEASED_ROWS), hide_index=True, key="synthetic_released_rows")
        include = False
        if figures is not None:
            include = st.checkbox(
                "Include the preview's quality figures in the data card (and the stakeholder report)",
                key="synthetic_card_quality",
                help="They are computed on the true table (NOT PRIVATE, outside the guarantee) for the "
                "preview, another draw at the same budget; the card and the report label them so. Everyone "
                "who opens this table's Budget page (analysts and viewers too) can download the report.",
            )  # fmt: skip
        quality = figures if include else None
        _keep_card(table, released, quality)
        csv, parquet, card_md, card_js = st.columns(4)
        csv.download_button("CSV", released.to_csv(), "synthetic.csv", "text/csv",
                            key="synthetic_download_csv", on_click="ignore")  # fmt: skip
        parquet.download_button("Parquet", released.to_parquet(), "synthetic.parquet",
                                "application/vnd.apache.parquet", key="synthetic_download_parquet",
                                on_click="ignore")  # fmt: skip
        card_md.download_button("Data card (Markdown)", card_markdown(released, quality),
                                "synthetic-card.md", "text/markdown", key="synthetic_download_card_md",
                                on_click="ignore")  # fmt: skip
        card_js.download_button("Data card (JSON)", card_json(released, quality), "synthetic-card.json",
                                "application/json", key="synthetic_download_card_json",
                                on_click="ignore")  # fmt: skip
        offer_reproduction(table, released)


def _keep_card(table: ActiveTable, released: SyntheticRelease, quality: Quality | None) -> None:
    """Keep the data card as the owner chose it beside the released CSV: the stakeholder report draws the
    quality figures only from a kept card that holds them."""
    card = card_dict(released, quality)
    try:
        kept = workspace().synthetic_card(table.identity, card["table_sha256"])
        if kept is None or ("preview_quality" in kept) != (quality is not None):
            workspace().store_synthetic_card(table.identity, card)
    except DPDashError as error:
        st.warning(f"The data card could not be kept for the stakeholder report: {md(error)}",
                   icon=":material/warning:")  # fmt: skip


def earlier_releases(table: ActiveTable, record: Dataset | None) -> None:
    """The synthetic tables released from this table's budget (every session's), from the ledger's records,
    each with its CSV where this app kept it. For those who may see releases (owners, analysts)."""
    if record is None or not allowed(table, Action.OPEN):
        return
    made = [r for r in table_releases(record) if (r.record or {}).get("kind") == "synthetic"]
    if not made:
        return
    with st.expander(f"Synthetic tables released from this table: {len(made)}", icon=":material/history:",
                     key="synthetic_earlier"):  # fmt: skip
        for one in reversed(made):
            rec = one.record or {}
            marginals = ", ".join(" × ".join(m.get("marginal", [])) for m in rec.get("measurements", []))
            st.markdown(
                f"**Release {one.number}** · {md(str(rec.get('method', '')).upper())} · "
                f"ε = {rec.get('epsilon')}, δ = {rec.get('delta')} · {rec.get('rows')} rows · "
                f"{one.created_at[:19].replace('T', ' ')} UTC  \nMarginals measured: {md(marginals)}"
            )
            data = workspace().synthetic_csv(table.identity, str(rec.get("table_fingerprint", "")))
            if data is None:
                st.caption("Its CSV is not kept by this app (released elsewhere, or its table forgotten).")
            else:
                st.download_button(f"CSV of release {one.number}", data, f"synthetic-{one.number}.csv",
                                   "text/csv", key=f"synthetic_earlier_csv_{one.number}",
                                   on_click="ignore")  # fmt: skip
