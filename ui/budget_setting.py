"""The Data page's third step: the table's privacy budget, set once by an owner with its unit of privacy
locked, or the one already set (and, for a table that looks like a budgeted one, whether it continues that
budget or is a different population)."""

from __future__ import annotations

import streamlit as st

from dpdash.accounting import ACCOUNTANT_NAMES, Budget
from dpdash.datasets import PublicFacts
from dpdash.errors import DPDashError
from dpdash.identity import short_identity
from dpdash.ledger.versions import RecordedUnit
from dpdash.wording import guarantee, protected_unit
from ui.guarded import owner_ledger
from ui.ledger_session import ledger, registered_or_stop
from ui.roles import acting_user
from ui.state import ActiveTable
from ui.table_history import carry_facts_over
from ui.text import md, show_guarantee

__all__ = ["BUDGET_TIERS", "budget_section"]

#: OpenDP DP Creator's budget tiers: (ε, δ), or None for a custom budget.
BUDGET_TIERS: dict[str, tuple[float, float] | None] = {
    "Would not harm if disclosed: ε = 1, δ = 1e-5": (1.0, 1e-5),
    "Could harm if disclosed: ε = 0.25, δ = 1e-6": (0.25, 1e-6),
    "Likely to harm if disclosed: ε = 0.05, δ = 1e-7": (0.05, 1e-7),
    "Custom": None,
}


def budget_section(
    table: ActiveTable, *, facts: PublicFacts, locked: RecordedUnit | None, key: str, no_id: str
) -> None:
    """The step, for ``table`` with its saved ``facts`` and the unit ``locked`` with its budget (if any);
    ``key``: the facts widgets' suffix, whose unsaved changes the confirmation warns of; ``no_id``: their
    "no id column" choice. Ends the page (``st.stop``) where the step ends it."""
    st.subheader("3. Set the privacy budget")
    record = registered_or_stop(table)
    shape = {"columns": [str(c) for c in table.data.columns], "rows": table.rows}
    if record is not None:
        delta = f", δ = {record.budget.delta:g}" if record.budget.delta else ""
        version = "" if record.fingerprint == table.identity else (
            f" (a version of **{md(record.name)}**, identity `{short_identity(record.fingerprint)}`)"
        )
        st.success(
            f"This table's total budget{version} is ε = {record.budget.epsilon:g}{delta}, kept by the "
            f"**{md(record.accountant)}** accountant (set {record.created_at[:19].replace('T', ' ')} UTC). "
            "A budget cannot be changed once set.",
            icon=":material/lock:",
        )
        if locked is None:
            st.warning(
                "This budget was set before dpdash recorded the unit of privacy with it, so releases are not "
                f"checked against one. Lock the current unit (**{md(protected_unit(table.facts.unit))}**) to "
                "make every later release use it.",
                icon=":material/lock_open:",
            )
            if st.button("Lock this unit of privacy", key="data_lock_unit"):
                owner_ledger(table).record_unit(record, table.facts.unit, **shape, user=acting_user())
                st.rerun()
        st.stop()

    alikes = ledger().looks_like(fingerprint=table.identity, name=table.name, columns=shape["columns"])
    if alikes:
        alike = alikes[0]
        other = alike.dataset
        st.warning(
            f"This table has no budget, but it looks like the budgeted dataset **{md(other.name)}** "
            f"({md(alike.why)}) with other rows: a new version of the same people? Its releases "
            f"must not start "
            "a fresh budget if they are. Choose one (it is recorded in the ledger for good):",
            icon=":material/difference:",
        )
        left, right = st.columns(2)
        with left:
            st.markdown(f"**The same people** (a corrected or extended file): releases spend "
                        f"{md(other.name)}'s budget (ε = {other.budget.epsilon:g}).")  # fmt: skip
            if st.button(f"Continue {other.name}'s budget", key="data_continue_budget", type="primary"):
                owner_ledger(table).link_version(
                    other, fingerprint=table.identity, name=table.name, reason="the owner continued "
                                                                               "its budget "
                    "on the Data page: a new version of the same people", **shape, user=acting_user(),
                )  # fmt: skip
                carry_facts_over(table, other)  # its bounds and categories, declared again where they fit
                st.rerun()
        with right:
            st.markdown("**A different population** (other people): it gets a budget of its own.")
            reason = st.text_input("Why is it a different population? (recorded in the ledger)",
                                   key="data_distinct_reason")  # fmt: skip
            if st.button("It is a different population", key="data_distinct"):
                if not reason.strip():
                    st.error("Say why it is a different population: the ledger records the reason.",
                             icon=":material/error:")  # fmt: skip
                else:
                    owner_ledger(table).declare_distinct(
                        table.identity, other, reason=reason, user=acting_user()
                    )
                    st.rerun()
        st.stop()

    tier = st.radio("Budget tier (OpenDP DP Creator's defaults)", list(BUDGET_TIERS), key="data_tier")
    preset = BUDGET_TIERS[tier]
    left, middle, right = st.columns(3)
    epsilon = left.number_input(
        "total ε", min_value=0.0, value=preset[0] if preset else 1.0, step=0.1, format="%g",
        key="data_budget_epsilon", disabled=preset is not None,
    )  # fmt: skip
    delta = middle.number_input(
        "total δ", min_value=0.0, max_value=0.5, value=preset[1] if preset else 1e-5, format="%.0e",
        key="data_budget_delta", disabled=preset is not None,
    )  # fmt: skip
    accountant = right.selectbox(
        "Accountant", ACCOUNTANT_NAMES, index=list(ACCOUNTANT_NAMES).index("tightest"),
        key="data_accountant", help="How releases add up. 'tightest' takes the smallest certified total.",
    )  # fmt: skip
    if st.button("Set this budget (it cannot be changed later)", type="primary", key="data_set_budget"):
        chosen = preset or (epsilon, delta)
        try:
            Budget(epsilon=chosen[0], delta=chosen[1])
        except DPDashError as error:
            st.error(f"The budget was not set: {md(error)}", icon=":material/error:")
        else:
            st.session_state["data_budget_pending"] = (table.identity, chosen[0], chosen[1], accountant)
    pending = st.session_state.get("data_budget_pending")
    if pending is not None and pending[0] == table.identity:
        _, pending_epsilon, pending_delta, pending_accountant = pending
        saved = {
            f"data_id_column_{key}": facts.unit.id_column or no_id,
            f"data_rows_per_person_{key}": facts.unit.rows_per_person,
            f"data_neighbours_{key}": facts.unit.neighbours.value,
        }
        unsaved = any(st.session_state.get(widget, value) != value for widget, value in saved.items())
        with st.container(border=True, key="data_budget_confirm_box"):
            st.markdown(
                f"**Set the budget of {md(table.name)} to ε = {pending_epsilon:g}, δ = "
                f"{pending_delta:g}** under "
                f"the **{md(pending_accountant)}** accountant, and lock its unit of privacy: "
                f"**{md(protected_unit(facts.unit))}**. Neither can be changed later; every release "
                f"from this "
                "table (and its versions) will spend this budget under this unit."
            )
            whole = "all releases from this table together (its whole budget)"
            show_guarantee(
                guarantee(
                    facts.unit, pending_epsilon, pending_delta, accountant=pending_accountant, scope=whole
                ),
                key="data_pending_guarantee",
            )
            if unsaved:
                st.warning("The unit-of-privacy controls above have changes that are not saved: the "
                           "saved unit "
                           "(stated here) is the one that will be locked. Cancel and save the facts "
                           "first to use "
                           "the new one.", icon=":material/warning:")  # fmt: skip
            yes, no = st.columns(2)
            if yes.button("Confirm: set this budget", type="primary", key="data_set_budget_confirm"):
                st.session_state.pop("data_budget_pending", None)
                try:
                    owner_ledger(table).add_dataset(
                        name=table.name, fingerprint=table.identity,
                        budget=Budget(epsilon=pending_epsilon, delta=pending_delta),
                        accountant=pending_accountant, unit=facts.unit, **shape, user=acting_user(),
                    )  # fmt: skip
                except DPDashError as error:
                    st.error(f"The budget was not set: {md(error)}", icon=":material/error:")
                else:
                    st.rerun()
            if no.button("Cancel", key="data_set_budget_cancel"):
                st.session_state.pop("data_budget_pending", None)
                st.rerun()
