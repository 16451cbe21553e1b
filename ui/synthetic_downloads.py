"""The owner's downloads that draw a released synthetic table again through the ledger: a Python script and a
Jupyter notebook (``dpdash.synthetic_export``), as Query & release offers for a statistic."""

from __future__ import annotations

import sys

import streamlit as st

from dpdash.synthetic import SyntheticRelease
from dpdash.synthetic_export import SYNTHETIC_NOTEBOOK, SYNTHETIC_SCRIPT, synthetic_notebook, synthetic_script
from dpdash.table_origin import TableOrigin
from ui.ledger_session import ledger
from ui.state import ActiveTable
from ui.text import md

__all__ = ["SOURCE", "offer_reproduction", "source_of"]

#: The table's name, type changes and connection when the synthetic table was released (what the script
#: re-applies, even if the table is changed afterwards).
SOURCE = "synthetic_last_source"


def source_of(table: ActiveTable) -> tuple[object, ...]:
    """What ``offer_reproduction`` needs of the table, kept at the release."""
    return (table.name, table.coercions, table.lossy, table.connection)


def offer_reproduction(table: ActiveTable, released: SyntheticRelease) -> None:
    """The script and notebook downloads for ``released``, with the command that runs the script; for a
    connected table, what to do from Python instead (the script reads a file)."""
    name, coercions, lossy, connection = st.session_state.get(SOURCE, source_of(table))
    if connection is not None:
        st.caption(
            "The reproduction script reads a file; this table is connected where it lives. From Python, "
            "`dpdash.engines.SourceSpec(...).open()` gives the same source (the same fingerprint), and "
            "`dpdash.synthesize(...)` then `Ledger().spend_release(...)` draw it again (docs/library.md)."
        )
        return
    location = ledger().location
    origin = TableOrigin(coercions=coercions, lossy=lossy, table_name=name, ledger=location)
    script = synthetic_script(released, origin=origin, python=sys.executable)
    notebook = synthetic_notebook(released, origin=origin)
    left, right = st.columns(2)
    left.download_button("Python script (dpdash)", script, SYNTHETIC_SCRIPT, "text/x-python",
                         key="synthetic_download_script", on_click="ignore")  # fmt: skip
    right.download_button("Jupyter notebook", notebook, SYNTHETIC_NOTEBOOK, "application/x-ipynb+json",
                          key="synthetic_download_notebook", on_click="ignore")  # fmt: skip
    run = script.splitlines()[0].removeprefix("# Run it with: ")
    st.caption(
        "The script and the notebook draw the synthetic table again, with the same columns, bins, method, "
        "ε, δ and number of rows. As downloaded they only preview (a seeded draw that spends nothing); "
        f"they release, with new randomness, only by spending from this ledger ({md(location)}) and then "
        "write the CSV beside the table's file: the script with `--release` (`--ledger` for another "
        "ledger), the notebook with `RELEASE = True` in its first cell. Run the script where you saved it:"
    )
    st.code(f"{run}\n{run} --release", language="bash")
