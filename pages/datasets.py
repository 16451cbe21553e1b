"""Datasets: every budgeted dataset in the ledger, where its budget stands, and which one to work on."""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py (docs/contributing.md, Layout)

import pandas as pd
import streamlit as st

from dpdash.access import Role
from dpdash.errors import DPDashError
from dpdash.identity import short_identity
from dpdash.wording import protected_unit
from ui.access import guard_page
from ui.ledger_session import ledger
from ui.state import active_table, dataset_role, example_identities, open_example, restore, workspace
from ui.text import md

st.title("Datasets")
guard_page(__file__)
st.caption(
    "Every dataset with a budget in the ledger. A budget follows the people in a table, not its file: the "
    "same content (any format, column order or type choice) and the versions linked to it spend one budget."
)

try:
    records = ledger().datasets()
    rows, choices = [], {}
    stored = {t.identity: t for t in workspace().tables()}
    examples = example_identities()
    for record in records:
        role = dataset_role(record)
        if role is None:  # with sign-in, only the tables this person has a role on
            continue
        status = ledger().status(record)
        entries = ledger().entries(record)
        fingerprints = [record.fingerprint, *(v.fingerprint for v in ledger().versions(record))]
        kept = next((stored[f] for f in fingerprints if f in stored), None)
        example = next((examples[f] for f in fingerprints if f in examples), None)
        unit = ledger().unit(record)
        rows.append({
            "name": record.name,
            "identity": short_identity(record.fingerprint),  # the key its budget is kept under
            # the row count is a true answer: the owners'
            "rows": None if unit is None or unit.rows is None or role is not Role.OWNER else unit.rows,
            "protects": "(not recorded)" if unit is None else protected_unit(unit.unit),
            "budget ε": record.budget.epsilon,
            "δ": record.budget.delta,
            "spent ε": status.spent.epsilon,
            "accountant": record.accountant,
            "remaining ε": status.remaining_epsilon,
            "releases": status.releases,  # as every page counts them; a mean's is two ledger entries
            "last release (UTC)": entries[-1].created_at[:19].replace("T", " ") if entries else "",
            "versions": len(fingerprints) - 1,
            "table kept": "example" if example else "no" if kept is None else
                          "connection" if kept.connection is not None else "workspace",
        })  # fmt: skip
        if kept is not None or example is not None:
            choices[f"{record.name} · {short_identity(record.fingerprint)}"] = (kept, example)
except DPDashError as error:
    st.error(f"The ledger or the workspace cannot be read: {md(error)}", icon=":material/error:")
    st.stop()

if not rows:
    st.info(
        "No dataset has a budget yet: load a table and set one on the **Data** page.", icon=":material/info:"
    )
    st.stop()
st.dataframe(pd.DataFrame(rows), hide_index=True, key="datasets_table", width="stretch")
st.caption(
    "**identity**: the content identity each budget is kept under (the same rows in any order, format or "
    "column types have the same one), shortened as everywhere in dpdash; the Data page shows it whole. "
    "**protects**: who each budget protects, as locked with it (the Data page states the full guarantee). "
    "**spent ε**: the total of its releases as counted by that dataset's own accountant, at its budget's δ. "
    "**table kept**: whether the table can be opened from here (an upload kept in the workspace, a "
    "connection to where it lives, or a built-in example); another one has to be uploaded or connected "
    "again on the Data page, where its content finds its budget."
)
if choices:
    left, right = st.columns([3, 1])
    choice = left.selectbox("Work on", list(choices), key="datasets_choice")
    if right.button("Make active", key="datasets_activate", type="primary", width="stretch"):
        kept, example = choices[choice]
        try:
            table = open_example(example) if example is not None else restore(kept)
        except DPDashError as error:
            st.error(f"The table could not be opened: {md(error)}", icon=":material/error:")
        else:
            st.session_state["datasets_activated"] = table.name
            st.rerun()
if (name := st.session_state.pop("datasets_activated", None)) is not None:
    st.success(f"{md(name)} is the active table.", icon=":material/check:")
st.caption(f"Active table: {md(active_table().name)}.")
