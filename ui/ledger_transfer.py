"""The owner's part of the Budget page that moves budgets between ledgers: importing an export into this
table, and the signing keys that say which exports a ledger takes (``dpdash.ledger.transfer``)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dpdash.errors import DPDashError
from dpdash.ledger import Dataset
from ui.guarded import owner_ledger
from ui.ledger_session import ledger
from ui.numbers import plural
from ui.roles import acting_user
from ui.state import ActiveTable
from ui.text import md

__all__ = ["import_section", "signing_keys_section"]


def import_section(column: Any, table: ActiveTable, record: Dataset) -> None:
    """The uploader of a ledger export, in ``column``: imported once per file into ``record`` (the owner's
    check where it acts), with what came in and what was left out."""
    upload = column.file_uploader("Import a ledger export (JSON)", type=["json"], key="budget_import")
    if upload is not None and st.session_state.get("budget_import_seen") != (upload.name, upload.size):
        st.session_state["budget_import_seen"] = (upload.name, upload.size)
        try:
            report = owner_ledger(table).import_json(upload.getvalue(), dataset=record, user=acting_user())
        except DPDashError as error:
            st.error(f"Not imported (the ledger is unchanged): {md(error)}", icon=":material/error:")
        else:
            over = " The table is now over its budget." if report.over_budget else ""
            here = "was" if report.present == 1 else "were"
            st.success(f"Imported {plural(report.added, 'release')}; {report.present} {here} "
                       f"already here.{over}")
            left_out = (
                f" The values of {plural(report.values_left, 'release')} were not taken (an "
                f"unverified export's "
                "could have been edited): the stakeholder report lists those by their cost."
                if report.values_left
                else ""
            )
            st.caption(md(report.origin + left_out))


def signing_keys_section(table: ActiveTable) -> None:
    """What an export proves, this ledger's public key, the keys it trusts and a form to trust another."""
    with st.expander("Signing keys: what an export proves"):
        st.markdown(
            "Every export is signed with this ledger's key (Ed25519). An import checks the "
            "signature: an export "
            "changed after it was signed is refused. Into a table this ledger already has, any "
            "export can only "
            "**add** releases (never remove or lower one, never change the budget). A table this "
            "ledger does not "
            "have can come in only with an export signed by this ledger or by a key you trust here."
        )
        st.markdown("This ledger's public key (give it to whoever imports your exports):")
        st.code(ledger().public_key or "none: the ledger is read-only", language=None)
        trusted = ledger().trusted_keys()
        if trusted:
            st.dataframe(
                pd.DataFrame({"trusted key": list(trusted), "label": list(trusted.values())}),
                hide_index=True, key="budget_trusted_keys",
            )  # fmt: skip
        new_key = st.text_input("Trust another ledger's key (ed25519:…)", key="budget_trust_key")
        label = st.text_input("Label for it (whose ledger it is)", key="budget_trust_label")
        if st.button("Trust this key", key="budget_trust_button", disabled=not new_key.strip()):
            try:
                owner_ledger(table).trust_key(new_key, label, user=acting_user())
            except DPDashError as error:
                st.error(f"Not trusted: {md(error)}", icon=":material/error:")
            else:
                st.success("Trusted: exports signed by this key can bring new tables into this ledger.")
