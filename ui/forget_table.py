"""The Data page's "Forget this table": what keeping a table in the workspace means, and forgetting it
after a second, explicit confirmation (deleting its workspace files cannot be undone)."""

from __future__ import annotations

import streamlit as st

from dpdash.workspace import StoredTable
from ui.active_table import ActiveTable
from ui.state import DEFAULT_EXAMPLE, forget, use_example, workspace
from ui.text import md

__all__ = ["forget_section", "forgotten_notice"]

#: The identity of the table whose forgetting waits for a confirmation (one at a time).
_CONFIRMING = "data_forget_confirming"
_FORGOTTEN = "data_forgotten"


def forget_section(table: ActiveTable, kept: StoredTable) -> None:
    """Say how ``table`` is kept, offer to forget it, and forget it only once confirmed."""
    left, right = st.columns([3, 1])
    left.caption(
        f"Kept in the workspace ({md(str(workspace().path))}) with its facts and type choices, so a reload "
        "or a restart opens it again. Forgetting it deletes those files; its budget history stays in the "
        "ledger."
        if kept.connection is None
        else f"Where it lives and its facts are kept in the workspace ({md(str(workspace().path))}), never a "
        "password, so a reload or a restart connects it again (PostgreSQL: give the password again; a "
        "source never takes one from this server's environment or files). Forgetting it deletes that "
        "record; its budget history stays in the ledger."
    )
    if right.button("Forget this table", key="data_forget", width="stretch"):
        st.session_state[_CONFIRMING] = table.identity
    if st.session_state.get(_CONFIRMING) == table.identity:
        st.warning(
            f"Forget **{md(table.name)}**? Its workspace files are deleted and it no longer opens on a "
            "reload; this cannot be undone (its budget history stays in the ledger). The example table "
            "opens instead.",
            icon=":material/delete:",
        )
        yes, no = st.columns(2)
        if yes.button("Yes, forget it", key="data_forget_confirm", type="primary", width="stretch"):
            st.session_state.pop(_CONFIRMING, None)
            forget(table)
            use_example(DEFAULT_EXAMPLE, persist=False)
            st.session_state[_FORGOTTEN] = table.name
            st.rerun()
        if no.button("Keep it", key="data_forget_cancel", width="stretch"):
            st.session_state.pop(_CONFIRMING, None)
            st.rerun()


def forgotten_notice() -> None:
    """After a table was forgotten (on the rerun that follows), say so once."""
    if (gone := st.session_state.pop(_FORGOTTEN, None)) is not None:
        st.success(f"{md(gone)} was deleted from the workspace; its budget history stays in the ledger.",
                   icon=":material/delete:")  # fmt: skip
