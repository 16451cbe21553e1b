"""Budget: what has been spent from the active table's budget, under every accountant."""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py's shell (README, Layout)

import pandas as pd
import streamlit as st

from dpdash.accounting.releases import group_releases
from dpdash.errors import DPDashError
from dpdash.report import stakeholder_report
from ui.charts import budget_gauge, cumulative_budget_figure
from ui.state import active_table, ledger, ledger_session, registered
from ui.text import md

st.title("Budget")
table = active_table()
try:
    record = registered(table)
except DPDashError as error:
    st.error(f"The budget ledger cannot be read: {md(error)}", icon=":material/error:")
    st.stop()
st.caption(f"Table: **{md(table.name)}** · ledger file: `{ledger().path}`")
if record is None:
    st.info("No budget is set for this table yet: set one on the **Data** page.", icon=":material/info:")
    st.stop()

keeper, budget = record.accountant, record.budget
status = ledger().status(record)
entries = ledger().entries(record)
delta_text = f", δ = {budget.delta:g}" if budget.delta else ""
st.markdown(
    f"Budget ε = {budget.epsilon:g}{delta_text}, kept by the **{md(keeper)}** accountant: every total "
    f"below is the ε at δ = {budget.delta:g} for the releases so far (unit of privacy: "
    f"{md(table.facts.unit.describe())})."
)
gauge, facts = st.columns([2, 3])
with gauge:
    st.plotly_chart(budget_gauge(status.spent.epsilon, budget.epsilon, keeper), key="budget_gauge")
with facts:
    st.metric("remaining ε", f"{status.remaining_epsilon:.4g}", help=f"budget − spent, under {md(keeper)}")
    # A release of several pieces (a mean: sum and count) is several entries, one release.
    releases = group_releases(entries)
    st.metric("releases", len(releases), help=f"{len(entries)} ledger entries")
    if status.exhausted:
        st.error("The budget is spent: no more releases from this table.", icon=":material/block:")

st.subheader("Every accountant, side by side")
group = int(
    st.number_input("Protect groups of this many records (group privacy)", 1, 100, 1, key="budget_group")
)
base_totals = ledger().totals(record)  # once per rerun; groups derive from it
totals = {name: (t.for_group(group) if t is not None and group > 1 else t) for name, t in base_totals.items()}
st.dataframe(
    pd.DataFrame(
        [{"accountant": name, "total ε": None if total is None else total.epsilon,
          "δ": None if total is None else total.delta,
          "note": "cannot account for one of these releases" if total is None
          else (f"smallest here: {total.via}" if name == "tightest" else "")}
         for name, total in totals.items()]
    ),
    hide_index=True, key="budget_totals",
    column_config={"total ε": st.column_config.NumberColumn(format="%.4g"),
                   "δ": st.column_config.NumberColumn(format="%.2e")},
)  # fmt: skip
if group > 1:
    st.caption(f"For groups of {group} records: (gε, g·e^((g−1)ε)·δ) applied to each total.")
if entries:
    st.plotly_chart(cumulative_budget_figure(ledger().cumulative(record), budget.epsilon), key="budget_steps")

st.subheader("Releases")
shown = entries
if st.toggle("Only this browser session's releases", key="budget_this_session"):
    shown = [entry for entry in entries if entry.session == ledger_session().uid]
number = {entry.uid: i for i, group in enumerate(releases, start=1) for entry in group}
log = pd.DataFrame(
    [
        {
            "release": number[e.uid],
            "time (UTC)": e.created_at[:19].replace("T", " "),
            "query": e.query,
            "mechanism": e.mechanism,
            "ε": e.epsilon,
            "δ": e.delta,
        }
        for e in shown
    ]
)
st.dataframe(log, hide_index=True, key="budget_log")

st.subheader("Export and import")
left, right = st.columns(2)
left.download_button(
    "Export this table's ledger (JSON)",
    ledger().export_json(record),
    file_name="dpdash-ledger.json",
    mime="application/json",
    key="budget_export",
)
left.download_button(
    "Stakeholder report (one-page HTML)",
    stakeholder_report(record, entries, base_totals, unit_of_privacy=table.facts.unit.describe()),
    file_name="dpdash-privacy-report.html", mime="text/html", key="budget_report",
)  # fmt: skip
upload = right.file_uploader("Import a ledger export (JSON)", type=["json"], key="budget_import")
if upload is not None and st.session_state.get("budget_import_seen") != (upload.name, upload.size):
    st.session_state["budget_import_seen"] = (upload.name, upload.size)
    try:
        report = ledger().import_json(upload.getvalue(), dataset=record)
    except DPDashError as error:
        st.error(f"Not imported (the ledger is unchanged): {md(error)}", icon=":material/error:")
    else:
        over = " The table is now over its budget." if report.over_budget else ""
        st.success(f"Imported {report.added} release(s); {report.present} were already here.{over}")
        st.caption(md(report.origin))

with st.expander("Signing keys: what an export proves"):
    st.markdown(
        "Every export is signed with this ledger's key (Ed25519). An import checks the signature: an export "
        "changed after it was signed is refused. Into a table this ledger already has, any export can only "
        "**add** releases (never remove or lower one, never change the budget). A table this ledger does not "
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
            ledger().trust_key(new_key, label)
        except DPDashError as error:
            st.error(f"Not trusted: {md(error)}", icon=":material/error:")
        else:
            st.success("Trusted: exports signed by this key can bring new tables into this ledger.")
