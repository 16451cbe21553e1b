"""Data: load a table, declare its public facts, and set its privacy budget."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from dpdash.accounting import ACCOUNTANT_NAMES, Budget
from dpdash.datasets import EXAMPLES, PublicFacts
from dpdash.errors import DPDashError
from dpdash.facts import Facts, Neighbours
from dpdash.loading import (
    COLUMN_KINDS,
    MAX_UPLOAD_MB,
    UPLOAD_EXTENSIONS,
    coerce_column,
    column_types,
    load_table,
)
from ui.sidebar import unit_of_privacy
from ui.state import active_table, ledger, registered, use_example, use_table
from ui.text import md

TIERS = {
    "Would not harm if disclosed: ε = 1, δ = 1e-5": (1.0, 1e-5),
    "Could harm if disclosed: ε = 0.25, δ = 1e-6": (0.25, 1e-6),
    "Likely to harm if disclosed: ε = 0.05, δ = 1e-7": (0.05, 1e-7),
    "Custom": None,
}


def _blank(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


st.title("Data")
st.caption("Everything on this page is the data owner's view: the table itself is never released.")

# ---- load --------------------------------------------------------------------------------------------
st.subheader("1. Load a table")
buttons = st.columns(len(EXAMPLES) + 1)
for column, name in zip(buttons, EXAMPLES, strict=False):
    if column.button(f"Example: {name}", key=f"data_example_{name}", width="stretch"):
        use_example(name)
        st.session_state.pop("data_upload_warnings", None)
        st.rerun()
upload = st.file_uploader(
    f"…or upload CSV, TSV, Parquet or Excel (.xlsx), up to {MAX_UPLOAD_MB} MB",
    type=[extension.lstrip(".") for extension in UPLOAD_EXTENSIONS],
    key="data_upload",
)
if upload is not None and st.session_state.get("data_upload_seen") != (upload.name, upload.size):
    st.session_state["data_upload_seen"] = (upload.name, upload.size)
    try:
        loaded = load_table(upload.getvalue(), upload.name)
    except DPDashError as error:
        st.error(f"{md(upload.name)} was not loaded: {md(error)}", icon=":material/error:")
    else:
        use_table(loaded.filename, f"upload '{loaded.filename}'", loaded.data, PublicFacts(unit=Facts()))
        st.session_state["data_upload_warnings"] = list(loaded.warnings)
        st.rerun()
for warning in st.session_state.get("data_upload_warnings", []):
    st.warning(md(warning), icon=":material/warning:")

table = active_table()
st.markdown(f"**Active table:** {md(table.name)} ({md(table.source)}) · {len(table.data):,} rows · "
            f"fingerprint `{table.fingerprint[:19]}…`")  # fmt: skip
kinds = column_types(table.data)
st.dataframe(table.data.head(200), height=240, key="data_preview")
st.caption("First 200 rows (owner only).")
with st.expander("Column types (as read; change them here)"):
    edited = st.data_editor(
        pd.DataFrame({"column": list(kinds), "type": list(kinds.values())}), hide_index=True,
        disabled=["column"], key="data_types_editor", width="stretch",
        column_config={"type": st.column_config.SelectboxColumn(options=list(COLUMN_KINDS), required=True)},
    )  # fmt: skip
    lossy_ok = st.checkbox("Turn values that do not convert into missing values", key="data_types_lossy")
    if st.button("Apply the types", key="data_types_apply"):
        data, changes = table.data, []
        try:
            for column, kind in zip(edited["column"], edited["type"], strict=True):
                if kinds[column] != kind:
                    data = coerce_column(data, column, kind, drop_invalid=lossy_ok)
                    changes.append((column, kind))
        except DPDashError as error:
            st.error(f"The types were not changed: {md(error)}", icon=":material/error:")
        else:
            use_table(
                table.name, table.source, data, table.facts, identity=table.identity,
                coercions=(*table.coercions, *changes), lossy=table.lossy or (lossy_ok and bool(changes)),
            )  # fmt: skip
            st.rerun()

# ---- public facts -------------------------------------------------------------------------------------
st.subheader("2. Declare the public facts")
st.info(
    "Bounds and category lists must come from what is publicly known about the data (a codebook, a form, "
    "domain knowledge), **not** from the table: reading the minimum, maximum or the categories present "
    "off the private data leaks information about the people in it.",
    icon=":material/policy:",
)
facts = table.facts
numeric = [c for c, k in kinds.items() if k in ("numeric", "integer")]
categorical = [c for c, k in kinds.items() if k in ("categorical", "boolean", "text")]
with st.form("data_facts"):
    bounds_rows = [
        {"column": c, "lower": facts.bounds[c].lower if c in facts.bounds else None,
         "upper": facts.bounds[c].upper if c in facts.bounds else None}
        for c in numeric if c != facts.id_column
    ]  # fmt: skip
    bounds_table = st.data_editor(
        pd.DataFrame(bounds_rows, columns=["column", "lower", "upper"]), hide_index=True,
        disabled=["column"], key="data_bounds_editor", width="stretch",
    )  # fmt: skip
    category_rows = [
        {"column": c, "categories": ", ".join(map(str, facts.categories.get(c, ())))}
        for c in categorical
        if c != facts.id_column
    ]
    categories_table = st.data_editor(
        pd.DataFrame(category_rows, columns=["column", "categories"]), hide_index=True,
        disabled=["column"], key="data_categories_editor", width="stretch",
    )  # fmt: skip
    left, middle, right = st.columns(3)
    id_options = ["(none: each row is a person)", *table.data.columns]
    current_id = facts.unit.id_column
    id_column = left.selectbox(
        "Person id column", id_options, index=id_options.index(current_id) if current_id in id_options else 0,
        key="data_id_column",
    )  # fmt: skip
    rows_per_person = middle.number_input(
        "Most rows per person (c)", min_value=1, max_value=10_000, value=facts.unit.rows_per_person,
        step=1, key="data_rows_per_person",
    )  # fmt: skip
    relation = right.radio(
        "Neighbouring tables", [n.value for n in Neighbours],
        index=[n.value for n in Neighbours].index(facts.unit.neighbours.value),
        format_func=lambda v: Neighbours(v).description, key="data_neighbours",
    )  # fmt: skip
    if st.form_submit_button("Save the public facts"):
        try:
            bounds = {
                row["column"]: (row["lower"], row["upper"])
                for row in bounds_table.to_dict("records")
                if not _blank(row["lower"]) and not _blank(row["upper"])
            }
            categories = {
                row["column"]: tuple(v.strip() for v in str(row["categories"]).split(",") if v.strip())
                for row in categories_table.to_dict("records")
                if str(row["categories"]).strip()
            }
            chosen_id = None if id_column == id_options[0] else id_column
            unit = Facts(neighbours=relation, rows_per_person=int(rows_per_person), id_column=chosen_id)
            new_facts = PublicFacts(bounds=bounds, categories=categories, unit=unit, notes=facts.notes)
        except DPDashError as error:
            st.error(f"The facts were not saved: {md(error)}", icon=":material/error:")
        else:
            use_table(
                table.name, table.source, table.data, new_facts, identity=table.identity,
                coercions=table.coercions, lossy=table.lossy,
            )  # fmt: skip
            st.session_state["data_facts_saved"] = True
            st.rerun()
if st.session_state.pop("data_facts_saved", False):
    st.success("Saved. Queries now use these facts.", icon=":material/check:")
st.caption(f"Unit of privacy: {md(unit_of_privacy(table.facts))}. {md(table.facts.unit.describe())}.")

# ---- budget -------------------------------------------------------------------------------------------
st.subheader("3. Set the privacy budget")
try:
    record = registered(table)
except DPDashError as error:
    st.error(f"The budget ledger cannot be read: {md(error)}", icon=":material/error:")
    st.stop()
if record is not None:
    delta = f", δ = {record.budget.delta:g}" if record.budget.delta else ""
    st.success(
        f"This table's total budget is ε = {record.budget.epsilon:g}{delta}, kept by the "
        f"**{md(record.accountant)}** accountant (set {record.created_at[:19].replace('T', ' ')} UTC). "
        "A budget cannot be changed once set.",
        icon=":material/lock:",
    )
else:
    tier = st.radio("Budget tier (OpenDP DP Creator's defaults)", list(TIERS), key="data_tier")
    preset = TIERS[tier]
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
            ledger().add_dataset(
                name=table.name, fingerprint=table.identity,
                budget=Budget(epsilon=chosen[0], delta=chosen[1]), accountant=accountant,
            )  # fmt: skip
        except DPDashError as error:
            st.error(f"The budget was not set: {md(error)}", icon=":material/error:")
        else:
            st.rerun()
