"""The owner's release on Query & release: the button, the confirmation that states the cost and what
remains, the draw and its record in the ledger (sent again as it was if the commit may have been lost), and
the release just made with its ± and downloads."""

from __future__ import annotations

import sys
import uuid
from typing import Any

import streamlit as st

from dpdash import export  # looked up at each call, as the page did (tests replace release_script)
from dpdash.accounting import event_for, get_accountant, running
from dpdash.accounting.events import PrivacyEvent
from dpdash.errors import DPDashError, LedgerError
from dpdash.facts import Facts
from dpdash.identity import short_identity
from dpdash.ledger import Dataset
from dpdash.notebook import NOTEBOOK_FILE, release_notebook
from dpdash.queries import Query
from dpdash.release import Release
from dpdash.rounding import published_figures
from dpdash.table_origin import TableOrigin
from dpdash.wording import Guarantee, accuracy_words, guarantee, mechanism_name
from ui.guarded import draw_release, record_release
from ui.key_preview import offer_published_keys
from ui.ledger_session import ledger
from ui.numbers import left_text, spent_text
from ui.release_choice import ReleaseChoice
from ui.requests import released_table
from ui.state import ActiveTable
from ui.text import md, show_guarantee

__all__ = ["event_figures", "release_controls", "show_last_release", "spend_figures"]

_LAST = "release_last"
_LAST_REQUEST = "release_last_request"  # the request the last release answered
_PENDING = "release_pending"  # (request, drawn release, request id) until the ledger has recorded it
_LAST_SOURCE = "release_last_source"  # the table's name, type changes and lossy flag at that release
_CONFIRMING = "release_confirming"


def spend_figures(record: Dataset, query: Query, spent_by: list[Any]) -> tuple[float, float, bool, float]:
    """(spent so far, spent after this release, whether it fits, what would remain) for a release whose
    calibrated mechanisms are ``spent_by``: the ledger's canonical total now, the total the release would
    bring it to (the kept running state, which the spend's check then finds warm) and whether it fits, as
    the ledger decides it (``running.fits``)."""
    return event_figures(record, [event_for(spent, query=query.name) for spent in spent_by])


def event_figures(record: Dataset, events: list[PrivacyEvent]) -> tuple[float, float, bool, float]:
    """``spend_figures`` for a release stated by its privacy ``events`` (a synthetic table's)."""
    keeper = get_accountant(record.accountant)
    history = ledger().events(record)
    spent_now = running.epsilon(keeper, history, (), record.budget.delta)
    spent_after = running.kept_epsilon(keeper, history, events, record.budget.delta)
    fits = running.fits(keeper, history, events, record.budget.delta, record.budget.epsilon)
    remaining_after = record.budget.epsilon - spent_after
    remaining_after = 0.0 if remaining_after < 1e-9 * record.budget.epsilon else remaining_after
    return spent_now, spent_after, fits, remaining_after


def release_controls(
    table: ActiveTable,
    record: Dataset,
    choice: ReleaseChoice,
    *,
    fits: bool,
    low: bool,
    spent_after: float,
    remaining_after: float,
) -> None:
    """The release button and its confirmation, tied to exactly this release of this table (query,
    mechanism, budget: change any and it lapses); nothing when the release does not ``fit``."""
    request = choice.key(table.fingerprint)
    # The same request as the release just made: a click would repeat it, at the same cost again.
    repeat = st.session_state.get(_LAST_REQUEST) == request
    cost = choice.cost
    if not fits:
        return
    if st.session_state.get(_CONFIRMING) != request:
        label = "Release again… (spends budget again)" if repeat else "Release… (spends budget)"
        if st.button(label, type="primary", key="release_button"):
            st.session_state[_CONFIRMING] = request
            st.rerun()
        return
    with st.container(border=True):
        again = (
            "**This repeats the release you just made** (same query, mechanism, ε, δ and confidence): it "
            f"costs {cost} again and draws new noise, and the two results together reveal more than "
            "either.  \n"
            if repeat
            else ""
        )
        st.markdown(
            f"{again}**Confirm the release.** Cost: {cost}. "
            f"Total spent after: ε = {spent_text(spent_after)} of {record.budget.epsilon:g} "
            f"({md(record.accountant)} accountant, δ = {record.budget.delta:g}); "
            f"remaining {left_text(remaining_after)}"
            f"{' (almost nothing)' if low else ''}.  \n"
            "**This cannot be undone:** the budget is spent even if you discard the result."
        )
        go, cancel = st.columns(2)
        if cancel.button("Cancel", key="release_cancel"):
            del st.session_state[_CONFIRMING]
            st.rerun()
        if go.button("Release again now" if repeat else "Release now", type="primary", key="release_confirm"):
            del st.session_state[_CONFIRMING]
            # A release whose commit may have been lost (a connection dropped) is sent again as it was: the
            # same drawn values under the same request id, which the ledger records at most once.
            pending = st.session_state.get(_PENDING)
            try:
                if pending is None or pending[0] != request:
                    result = draw_release(table, choice.query, choice.mechanism, epsilon=choice.epsilon,
                                          delta=choice.delta or None, confidence=choice.confidence,
                                          postprocess=list(choice.steps))  # fmt: skip
                    pending = st.session_state[_PENDING] = (request, result, f"dpdash-app:{uuid.uuid4()}")
                _, result, request_id = pending
                record_release(table, record, result, request_id)  # committed, with its values
            except DPDashError as error:
                if not isinstance(error, LedgerError):  # refused for good: a new try draws anew
                    st.session_state.pop(_PENDING, None)
                st.error(f"Not released: {md(error)}", icon=":material/block:")
            else:
                st.session_state.pop(_PENDING, None)
                st.session_state[_LAST] = result
                st.session_state[_LAST_REQUEST] = request
                st.session_state[_LAST_SOURCE] = (table.name, table.coercions, table.lossy, table.connection)
                st.rerun()


def show_last_release(table: ActiveTable, choice: ReleaseChoice) -> None:
    """The release just made from this table, with its ±, what it guarantees and its downloads, under
    the query it answered only: with another query chosen, one line says where it went."""
    last: Release | None = st.session_state.get(_LAST)
    if last is None or last.dataset_fingerprint != table.fingerprint:
        return
    released_query = st.session_state.get(_LAST_REQUEST, (None,))[0]
    if released_query != choice.key(table.fingerprint)[0]:
        st.caption(f"Your last release ({md(last.query_name)}) shows again when that query is chosen.")
        return
    with st.container(border=True):
        st.markdown(
            f"#### :material/verified: Released · {md(last.query_name)} · "
            f"{md(mechanism_name(last.mechanism))} · ε = {last.epsilon:g}"
        )
        accuracy, words = last.accuracy, guarantee(Facts.from_dict(last.query.get("facts", {})), last.epsilon,
                                                   last.delta)  # fmt: skip
        means = accuracy_words(accuracy.confidence, accuracy.method, len(last.values), accuracy.scope,
                               published_figures(last).joint_half_width)  # fmt: skip
        show_guarantee(
            Guarantee(
                f"{means} {words.plain}",
                f"± ({accuracy.method}): {accuracy.definition}. {words.technical}"
                + (" By randomized response: also ε-local DP for each person." if "local DP" in last.guarantee
                   else ""),
            ),
            key="release_last_guarantee",
        )
        released_table(last, key="release_result")
        offer_published_keys(last, table)
        name, coercions, lossy, connection = st.session_state.get(
            _LAST_SOURCE, (table.name, table.coercions, table.lossy, table.connection)
        )
        downloads = st.columns(2 if connection else 4)
        identity = f"`{short_identity(last.dataset_identity)}`" if last.dataset_identity else "not stated"
        st.caption(
            f"The JSON record names the table twice: `dataset_identity` ({identity}), the content identity "
            "its budget is kept under and the one dpdash shows everywhere; and `dataset_fingerprint`, the "
            "exact-table fingerprint of what this query ran on (row order and column types included: a "
            "shuffled copy has another one and the same budget)."
        )
        downloads[0].download_button(
            "CSV of the released values",
            export.release_csv(last),
            "release.csv",
            "text/csv",
            key="release_download_csv", on_click="ignore",
        )
        downloads[1].download_button(
            "JSON release record",
            last.to_json(),
            "release.json",
            "application/json",
            key="release_download_json", on_click="ignore",
        )
        if connection is None:
            origin = TableOrigin(coercions=coercions, lossy=lossy, table_name=name, ledger=ledger().location)
            script = export.release_script(last, origin=origin, python=sys.executable)
            downloads[2].download_button(
                "Python script (dpdash)", script, "reproduce_release.py", "text/x-python",
                key="release_download_script", on_click="ignore",
            )
            notebook = release_notebook(last, origin=origin)
            downloads[3].download_button(
                "Jupyter notebook", notebook, NOTEBOOK_FILE, "application/x-ipynb+json",
                key="release_download_notebook", on_click="ignore",
            )
            run = script.splitlines()[0].removeprefix("# Run it with: ")
            st.caption(
                f"The script and the notebook release again, with new noise, only by spending from this "
                f"ledger ({md(ledger().location)}). The notebook explains each step and, run from the top, "
                "only previews until you set `RELEASE = True` in its first cell. Run the script where you "
                "saved it (`--ledger` for another ledger; `--preview` simulates and spends nothing):"
            )
            st.code(run, language="bash")
        else:
            st.caption(
                "The reproduction script reads a file; this table is connected where it lives. From Python, "
                "`dpdash.engines.SourceSpec(...).open()` gives the same source (the same fingerprint), and "
                "`release(...)` then `Ledger().spend_release(...)` repeat the release (docs/large-tables.md)."
            )
