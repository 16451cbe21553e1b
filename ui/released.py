"""The releases this browser session made, kept with their values for the stakeholder report.

The ledger records what each release cost, not what it showed; a release's values live in its record
(``dpdash.release.Release``), which the Query & release page hands out. This keeps the session's records,
keyed by the uid of each ledger entry they were recorded as, so the Budget page's report can show them.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from dpdash.accounting import Entry
from dpdash.release import Release

__all__ = ["released_values", "remember_release"]

_KEY = "dpdash_released"


def remember_release(release: Release, entries: Sequence[Entry]) -> None:
    """Keep ``release`` under the uid of each ledger entry ``spend_release`` recorded it as."""
    kept: dict[str, Release] = st.session_state.setdefault(_KEY, {})
    kept.update({entry.uid: release for entry in entries})


def released_values() -> dict[str, Release]:
    """This session's release records by ledger entry uid (publishable: no true values are read)."""
    return dict(st.session_state.get(_KEY, {}))
