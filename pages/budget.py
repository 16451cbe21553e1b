"""Budget: what has been spent from the active table's budget, under every accountant."""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py (docs/contributing.md, Layout)

from collections.abc import Mapping
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from dpdash.access import Action
from dpdash.errors import LedgerError
from dpdash.facts import Facts
from dpdash.ledger import Dataset, Entry, Ledger
from dpdash.ledger.actions import describe
from dpdash.ledger.releases import group_releases
from dpdash.report import released_values, stakeholder_report, synthetic_records
from dpdash.wording import guarantee
from dpdash.workspace import Workspace
from ui.access import guard_page
from ui.budget_charts import accountant_role, budget_gauge, cumulative_budget_figure, cumulative_table
from ui.chart_view import show_chart
from ui.guarded import owner_ledger
from ui.ledger_session import ledger, ledger_session, registered_or_stop
from ui.ledger_transfer import import_section, signing_keys_section
from ui.numbers import left_text, plural
from ui.report_download import report_downloads, synthetic_kept
from ui.roles import acting_user
from ui.state import active_table, allowed, workspace
from ui.text import md, show_guarantee


def _report(
    handle: Ledger, kept: Workspace, identity: str, record: Dataset, entries: list[Entry],
    totals: Mapping[str, Any], unit: Facts,
) -> str:  # fmt: skip
    """The stakeholder report, with the values each release stored in the ledger and the synthetic tables
    (and their data cards) this app kept."""
    records = handle.published(record)
    synthetic = synthetic_records(records)
    tables, cards = synthetic_kept(kept, identity, synthetic)
    return stakeholder_report(record, entries, totals, facts=unit, released=released_values(records),
                              synthetic=synthetic, synthetic_tables=tables,
                              synthetic_cards=cards)  # fmt: skip


st.title("Budget")
guard_page(__file__)
table = active_table()
# Everyone with a role reads this page; the owner also exports, imports and trusts keys (each checked again
# where it acts: ui.state.owner_ledger).
owner = allowed(table, Action.BUDGET)
record = registered_or_stop(table)
handle = ledger()
where = f"ledger file: `{handle.path}`" if handle.path is not None else f"ledger: `{handle.location}`"
st.caption(f"Table: **{md(table.name)}**" + (f" · {where}" if owner else " · read-only"))
if record is None:
    st.info("No budget is set for this table yet: set one on the **Data** page.", icon=":material/info:")
    st.stop()

keeper, budget = record.accountant, record.budget
status = ledger().status(record)
entries = ledger().entries(record)
delta_text = f", δ = {budget.delta:g}" if budget.delta else ""
st.markdown(
    f"Budget ε = {budget.epsilon:g}{delta_text}, kept by the **{md(keeper)}** accountant: every total "
    f"below is the ε at δ = {budget.delta:g} for the releases so far."
)
whole = "all releases from this table together (its whole budget)"
show_guarantee(guarantee(table.facts.unit, budget.epsilon, budget.delta, scope=whole, accountant=keeper),
               key="budget_guarantee")  # fmt: skip
gauge, facts = st.columns([2, 3])
with gauge:
    show_chart(
        budget_gauge(status.spent.epsilon, budget.epsilon, keeper), key="budget_gauge",
        summary=f"ε spent under {keeper}, the accountant in force: {status.spent.epsilon:.6g} of the budget "
        f"ε = {budget.epsilon:g} (δ = {budget.delta:g}); {status.remaining_epsilon:.6g} remains.",
    )  # fmt: skip
with facts:
    st.metric("remaining ε", left_text(status.remaining_epsilon),
              help=f"budget − spent, under {md(keeper)}: exactly {status.remaining_epsilon!r}")  # fmt: skip
    # A release of several pieces (a mean: sum and count) is several entries, one release (release_count).
    releases = group_releases(entries)
    st.metric("releases", status.releases,
              help=f"in {plural(status.entries, 'ledger entry', 'ledger entries')}: a release of several "
              "noisy pieces (a mean: a sum and a count) is one entry per piece")  # fmt: skip
    if status.exhausted:
        st.error("The budget is spent: no more releases from this table.", icon=":material/block:")

st.subheader("Every accountant, side by side")
group = int(
    st.number_input("Protect groups of this many records (group privacy)", 1, 100, 1, key="budget_group")
)
base_totals = ledger().totals(record)  # once per rerun; groups derive from it
totals = {name: (t.for_group(group) if t is not None and group > 1 else t) for name, t in base_totals.items()}
kept = totals.get(keeper)
st.markdown(
    f"Only the **{md(keeper)}** accountant's total is budget spent: every release is checked against it. "
    "The others add up the same releases by other rules; each of their totals is also a valid guarantee, "
    "and a larger one is a looser bound on the same releases, not more budget spent."
)
st.dataframe(
    pd.DataFrame(
        [{"accountant": name, "total ε": None if total is None else total.epsilon,
          "δ": None if total is None else total.delta,
          "what it means": accountant_role(name, None if total is None else total.epsilon, keeper,
                                           None if kept is None else kept.epsilon),
          "note": "" if total is None else (f"smallest here: {total.via}" if name == "tightest" else "")}
         for name, total in totals.items()]
    ),
    hide_index=True, key="budget_totals",
    column_config={"total ε": st.column_config.NumberColumn(format="%.4g"),
                   "δ": st.column_config.NumberColumn(format="%.2e")},
)  # fmt: skip
if group > 1:
    st.caption(f"For groups of {group} records: (gε, g·e^((g−1)ε)·δ) applied to each total.")
if entries:
    steps = ledger().cumulative(record)
    counted = "releases" if len(releases) == len(entries) else "ledger entries (a mean: several)"
    show_chart(
        cumulative_budget_figure(steps, budget.epsilon, accountant=keeper, delta=budget.delta,
                                 counted=counted),
        key="budget_steps", table=cumulative_table(steps, keeper, counted),
        summary=f"Total ε at δ = {budget.delta:g} after the first n {counted}, under every accountant; "
        f"{keeper} is in force (its total is budget spent, against the budget ε = {budget.epsilon:g}); "
        "the others are other valid bounds on the same releases.",
    )  # fmt: skip

st.subheader("Ledger entries")
st.caption("One row per ledger entry; **release** numbers the releases they belong to (a mean is one release "
           "of two entries: its sum and its count).")  # fmt: skip
shown = entries
if owner and st.toggle("Only this browser session's entries", key="budget_this_session"):
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

st.subheader("Who did what")
actions = ledger().actions(record)[::-1]  # newest first; the table's versions included
more = "" if len(actions) <= 50 else ", the newest 50 shown"
st.caption(f"Who set, spent, imported, exported or loaded this table, newest first: "
           f"{plural(len(actions), 'action')} in the ledger{more} (exports carry them all).")  # fmt: skip
st.markdown("\n".join(
    f"- {md(a.created_at[:19].replace('T', ' '))} UTC · **{md(a.user or 'not named')}** · {md(a.action)}: "
    f"{md(describe(a, owner=owner))}" for a in actions[:50]
))  # fmt: skip

st.subheader("Export and import" if owner else "Report")
left, right = st.columns(2)
if owner:
    try:
        owner_ledger(table).check_signing()  # the export is made on the click: say now why it could not be
    except LedgerError as problem:
        left.warning(f"No export: {md(problem)}", icon=":material/key_off:")
    else:
        left.download_button(
            "Export this table's ledger (JSON)",
            # made (and recorded) on the click
            partial(owner_ledger(table).export_json, record, user=acting_user()),
            file_name="dpdash-ledger.json",
            mime="application/json",
            key="budget_export",
        )
# Made on the click, not on every rerun: it reads and parses every release's stored values.
report_downloads(left, partial(_report, ledger(), workspace(), table.identity, record, entries, base_totals,
                               table.facts.unit), key="budget_report")  # fmt: skip
if not owner:
    st.stop()  # the rest changes the ledger: the owner's
import_section(right, table, record)
signing_keys_section(table)
