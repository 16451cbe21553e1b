"""Data: load a table, declare its public facts, and set its privacy budget."""

from __future__ import annotations

from ui.shell import run_through_app

run_through_app()  # a bookmark opened first on a fresh server runs app.py (docs/contributing.md, Layout)

import pandas as pd
import streamlit as st

from dpdash.datasets import EXAMPLES, PublicFacts
from dpdash.errors import DPDashError
from dpdash.facts import Facts
from dpdash.identity import short_identity
from dpdash.ledger import fingerprint
from dpdash.loading import (
    COLUMN_KINDS,
    MAX_UPLOAD_MB,
    UPLOAD_EXTENSIONS,
    coerce_column,
    column_types,
    load_table,
)
from dpdash.wording import guarantee
from ui.access import guard_page
from ui.budget_setting import budget_section
from ui.connect import connect_section
from ui.facts_form import facts_form
from ui.forget_table import forget_section, forgotten_notice
from ui.ledger_session import recorded_unit
from ui.roles import acting_user
from ui.state import (
    aligned_table,
    may_load,
    sample_rows,
    stored,
    use_example,
    use_table,
    widget_suffix,
    workspace,
    workspace_notices,
)
from ui.table_history import (
    carried_notice,
    facts_saved,
    forget_same_rows,
    remember_same_rows,
    same_rows_notice,
)
from ui.text import md, show_guarantee

NO_ID = "(none: each row is a person)"


st.title("Data")
guard_page(__file__)  # the owner's page: every step below checks the role again where it acts (ui/state.py)
st.caption("Everything on this page is the data owner's view: the table itself is never released.")

# ---- load --------------------------------------------------------------------------------------------
st.subheader("1. Load a table")
loading = may_load()  # new tables are for owners of dpdash (the roles file's top level)
if not loading:
    st.caption("Loading or connecting another table is for owners of dpdash: the roles file gives you this "
               "table only.")  # fmt: skip
buttons = st.columns(len(EXAMPLES) + 1) if loading else []
for column, name in zip(buttons, EXAMPLES, strict=False):
    if column.button(f"Example: {name}", key=f"data_example_{name}", width="stretch"):
        use_example(name, user=acting_user())
        forget_same_rows()
        for stale in ("data_upload_warnings", "data_upload_error"):
            st.session_state.pop(stale, None)
        st.rerun()
upload = None if not loading else st.file_uploader(
    f"…or upload CSV, TSV, Parquet or Excel (.xlsx), up to {MAX_UPLOAD_MB} MB",
    type=[extension.lstrip(".") for extension in UPLOAD_EXTENSIONS],
    key="data_upload",
)  # fmt: skip
seen = None if upload is None else (upload.name, upload.size, getattr(upload, "file_id", ""))
if upload is not None and st.session_state.get("data_upload_seen") != seen:
    st.session_state["data_upload_seen"] = seen
    shown = md(upload.name)
    # Each step of a large file takes seconds: the page says which one is running.
    with st.status(f"Reading {shown}: parsing {upload.size / 1e6:.3g} MB…") as status:
        try:
            loaded = load_table(upload.getvalue(), upload.name)
        except DPDashError as error:  # said in an error box below the status, kept until the next upload
            status.update(label=f"Reading {shown}: stopped", state="error", expanded=False)
            st.session_state["data_upload_error"] = (upload.name, str(error))
        else:
            st.session_state.pop("data_upload_error", None)
            # The same content (any format, column order or earlier type choices) is the same people: it
            # keeps the name and the facts declared for it, and the ledger finds its budget by the same
            # identity.
            status.update(label=f"Reading {shown}: {len(loaded.data):,} rows; computing its fingerprint…")
            identity = fingerprint(loaded.data)
            try:
                before = workspace().table(identity)
            except DPDashError:
                before = None
            remember_same_rows(identity, before)  # said after the rerun: "Same rows as …"
            status.update(label=f"Reading {shown}: keeping it in the workspace…")
            use_table(
                before.name if before else loaded.filename, f"upload '{loaded.filename}'", loaded.data,
                before.facts if before else PublicFacts(unit=Facts()), identity=identity,
                raw=upload.getvalue(), filename=loaded.filename, user=acting_user(),
            )  # fmt: skip
            status.update(label=f"{shown} loaded", state="complete")
            st.session_state["data_upload_warnings"] = list(loaded.warnings)
            st.rerun()
if upload is not None and (failed := st.session_state.get("data_upload_error")) is not None:
    st.error(f"**{md(failed[0])} was not loaded.** {md(failed[1])}  \nNothing changed: the table before "
             "stays active. Fix the file as said, or save it as CSV, then upload it again.",
             icon=":material/error:")  # fmt: skip
if loading:
    connect_section()
for warning in st.session_state.get("data_upload_warnings", []):
    st.warning(md(warning), icon=":material/warning:")

try:
    table, aligned = aligned_table()
except DPDashError as error:
    st.error(f"The budget ledger cannot be read: {md(error)}", icon=":material/error:")
    st.stop()
for notice in workspace_notices():
    st.warning(f"Workspace: {md(notice)}", icon=":material/folder_off:")
if aligned:
    st.info(
        "The unit of privacy was set to the one recorded with this table's budget in the ledger.",
        icon=":material/lock:",
    )
key = widget_suffix(table)
st.markdown(f"**Active table:** {md(table.name)} ({md(table.source)}) · {table.rows:,} rows · identity "
            f"`{short_identity(table.identity)}`")  # fmt: skip
same_rows_notice(table)
st.caption("Its identity: the content identity its budget is kept under (the same rows in any order, format "
           "or column types have the same one), and what a roles file's `fingerprint = \"…\"` matches. Copy "
           "it whole (the button at its right):")  # fmt: skip
st.code(table.identity, language=None)
kept = stored(table)
if kept is not None and kept.example is None:
    forget_section(table, kept)  # asks to confirm before deleting anything
forgotten_notice()
kinds = column_types(table.data)
st.dataframe(sample_rows(table), height=240, key="data_preview")
if table.engine is not None:  # its column types are the engine's schema: no type changes here
    schema = ", ".join(f"{name}: {kind}" for name, kind in table.engine.schema().items())
    st.caption(f"The first 200 rows the engine returns, in no particular order (owner only). Column types "
               f"from the engine's schema: {md(schema)}.")  # fmt: skip
else:
    st.caption("First 200 rows (owner only).")
    with st.expander("Column types (as read; change them here)"):
        edited = st.data_editor(
            pd.DataFrame({"column": list(kinds), "type": list(kinds.values())}), hide_index=True,
            disabled=["column"], key=f"data_types_editor_{key}", width="stretch",
            column_config={"type": st.column_config.SelectboxColumn(options=list(COLUMN_KINDS),
                                                                    required=True)},
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
locked = recorded_unit(table)
saved = st.session_state.pop("data_facts_saved", False)
if saved:
    facts_saved()  # this version's facts are now its own
carried_notice(table)
facts_form(table, kinds, key=key, locked=locked, no_id=NO_ID)
if saved:
    st.success("Saved. Queries now use these facts.", icon=":material/check:")
show_guarantee(guarantee(table.facts.unit), lead="**Who is protected:** ", key="data_guarantee")

# ---- budget -------------------------------------------------------------------------------------------
budget_section(table, facts=facts, locked=locked, key=key, no_id=NO_ID)
