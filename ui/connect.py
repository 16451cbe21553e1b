"""The Data page's Connect section: a table where it already lives (Parquet or CSV files, a DuckDB file,
PostgreSQL, Spark) becomes the active table without being loaded into memory; only aggregates leave its
engine. What is kept (``dpdash.engines.SourceSpec``, in the workspace) never holds a password."""

from __future__ import annotations

import streamlit as st

from dpdash.engines import SourceSpec
from dpdash.engines.spec import url_password
from dpdash.errors import DPDashError
from ui.roles import acting_user
from ui.state import use_connection
from ui.text import md

#: What the owner picks, with the spec's kind.
CHOICES = {
    "Parquet or CSV files (a file, a folder or a glob)": "files",
    "DuckDB database file": "duckdb",
    "PostgreSQL table": "postgres",
    "Spark table": "spark",
}
_ERROR = "data_connect_error"


def spec_from_form(
    kind: str, *, path: str = "", table: str = "", url: str = "", master: str = ""
) -> SourceSpec:
    """The password-free spec of what the form says (a password typed into the URL is taken out)."""
    if kind == "postgres":
        if not url.strip():
            raise DPDashError("give the PostgreSQL URL, e.g. postgresql://user@host:5432/database")
        return SourceSpec.postgres(url, table)
    return SourceSpec(kind=kind, path=path.strip(), table=table.strip(), master=master.strip())  # type: ignore[arg-type]


def connect_section() -> None:
    """The form; on success the connected table is active and the page reruns."""
    with st.expander("…or connect a table where it lives (large tables: nothing is loaded into memory)",
                     expanded=st.session_state.get(_ERROR) is not None):  # fmt: skip
        st.caption(
            "Queries run inside the table's own engine (an embedded DuckDB for files, or PostgreSQL, or "
            "Spark) and only totals come back. Paths are on this server's machine. A password is used to "
            "connect and kept nowhere: not in the workspace, the ledger, a release record or a log."
        )
        label = st.selectbox("Where the table lives", list(CHOICES), key="data_connect_kind")
        kind = CHOICES[label]
        with st.form("data_connect_form"):
            path = table = url = password = master = ""
            if kind == "files":
                path = st.text_input("Path, folder or glob", placeholder="/data/visits/*.parquet",
                                     key="data_connect_path")  # fmt: skip
            elif kind == "duckdb":
                path = st.text_input("DuckDB file", placeholder="/data/warehouse.duckdb",
                                     key="data_connect_duckdb_path")  # fmt: skip
                table = st.text_input("Table", key="data_connect_duckdb_table")
            elif kind == "postgres":
                url = st.text_input("Connection URL (without the password)",
                                    placeholder="postgresql://analyst@db.internal:5432/clinic",
                                    key="data_connect_url")  # fmt: skip
                password = st.text_input("Password (used to connect, never stored)", type="password",
                                         key="data_connect_password")  # fmt: skip
                table = st.text_input("Table (or schema.table)", key="data_connect_pg_table")
            else:
                master = st.text_input("Spark master", value="local[*]", key="data_connect_master")
                table = st.text_input("Table or view (or database.table)", key="data_connect_spark_table")
            submitted = st.form_submit_button("Connect")
        if submitted:
            st.session_state.pop(_ERROR, None)
            try:
                spec = spec_from_form(kind, path=path, table=table, url=url, master=master)
                secret = password or (url_password(url) if kind == "postgres" else None)
                with st.spinner(f"Connecting to {md(spec.describe())}: schema, row count, fingerprint…"):
                    source = spec.open(password=secret)
                    try:
                        use_connection(spec, source, user=acting_user())
                    except DPDashError:
                        source.close()
                        raise
            except DPDashError as error:
                st.session_state[_ERROR] = str(error)
            else:
                st.session_state.pop("data_upload_warnings", None)
                st.session_state.pop("data_connect_password", None)  # not kept longer than the connection
                st.rerun()
        error = st.session_state.get(_ERROR)
        if error is not None:
            st.error(f"Not connected: {md(error)}. The table before stays active; fix this and connect "
                     "again.", icon=":material/link_off:")  # fmt: skip
