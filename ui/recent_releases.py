"""The active table's recent releases on Query & release, read from the ledger: every browser session's
and every app server's, so a release whose tab closed before its values were shown (it is spent all the
same) is found again here, with the values its record in the ledger holds (``Ledger.releases``).

Releases are counted as everywhere else (``dpdash.ledger.releases``: a mean's sum and count are one
release). What is shown is what each release published (``Release.to_json``: noisy values, ±, cost), never
a true value, so it is the same for an owner and an analyst; a viewer does not open this page.
"""

from __future__ import annotations

import streamlit as st

from dpdash.access import Action
from dpdash.errors import DPDashError
from dpdash.ledger import Dataset, RecordedRelease
from dpdash.report import released_values
from dpdash.rounding import published_figures
from dpdash.wording import accuracy_words, mechanism_name
from ui.ledger_session import ledger, ledger_session_uid, registered
from ui.numbers import plural
from ui.requests import released_table
from ui.state import ActiveTable, allowed
from ui.text import md

__all__ = ["RECENT", "cost_text", "recent_releases", "table_releases"]

#: How many of the newest releases are listed, each with its values.
RECENT = 10


def cost_text(made: RecordedRelease) -> str:
    """What one release spent, labelled: its record's (ε, δ), or its entries' sum by basic composition."""
    if made.epsilon is None:
        return f"ε not stated (see its {plural(len(made.entries), 'ledger entry', 'ledger entries')})"
    cost = f"ε = {made.epsilon:.6g}" + (f", δ = {made.delta:.3g}" if made.delta else "")
    return f"{cost} (the sum of its {len(made.entries)} ledger entries)" if made.summed else cost


def _heading(made: RecordedRelease, mine: str | None) -> str:
    when = made.created_at[:19].replace("T", " ")
    who = "this session" if mine is not None and made.session == mine else "another session"
    return (
        f"**Release {made.number}: {md(made.query)}** · {md(mechanism_name(made.mechanism))} · {when} UTC · "
        f"{cost_text(made)} · {who}"
    )


def table_releases(record: Dataset | None, last: int | None = None) -> list[RecordedRelease]:
    """The budget's releases from the ledger (``Ledger.releases``; the newest ``last``), or none with a
    warning here when the ledger cannot be read."""
    if record is None:
        return []
    try:
        return ledger().releases(record, last=last)
    except DPDashError as error:
        st.warning(f"The table's releases cannot be read from the ledger: {md(error)}",
                   icon=":material/warning:")  # fmt: skip
        return []


def recent_releases(table: ActiveTable) -> None:
    """The newest ``RECENT`` releases of the table's budget (newest first) in an expander, each with its
    values and their ±; nothing before a budget is set; a ledger that cannot be read is a warning here."""
    if not allowed(table, Action.OPEN):
        return
    try:
        record = registered(table)
    except DPDashError as error:
        st.warning(f"The table's releases cannot be read from the ledger: {md(error)}",
                   icon=":material/warning:")  # fmt: skip
        return
    made = table_releases(record, last=RECENT)
    if not made:
        return
    total = made[-1].number
    values = released_values({m.uid: m.record for m in made if m.record is not None})
    rest = total - len(made)
    older = f" {plural(rest, 'older release')} {'is' if rest == 1 else 'are'} in the stakeholder report " \
        "(Budget page)." if rest else ""
    label = f"Releases from this table so far: {total}, with their values"
    with st.expander(label, icon=":material/history:", key="release_recent"):
        st.caption(
            "From the ledger, newest first: the releases of every session and app server, each with the "
            "values it published and their ± as its record in the ledger holds them (never a true value). "
            f"A release of several noisy pieces (a mean: a sum and a count) is one release.{older}"
        )
        mine = ledger_session_uid()
        for one in reversed(made):
            with st.container(border=True, key=f"recent_release_{one.number}"):
                st.markdown(_heading(one, mine))
                result = values.get(one.uid)
                if result is None and (one.record or {}).get("kind") == "synthetic":
                    st.caption("A synthetic table: its rows and data card are on the Synthetic table page.")
                    continue
                if result is None:
                    st.caption(
                        "Its values are not in the ledger (recorded without them: by a script, before "
                        "dpdash kept them, or imported from an export it could not verify): see that "
                        "release's own record."
                    )
                    continue
                released_table(result, key=f"recent_release_values_{one.number}")
                accuracy = result.accuracy
                joint = published_figures(result).joint_half_width  # the ± of all at once, as shown
                st.caption(accuracy_words(accuracy.confidence, accuracy.method, len(result.values),
                                          accuracy.scope, joint))  # fmt: skip
