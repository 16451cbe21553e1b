"""Which pages a role opens (app.py's navigation lists only those), and the check every page makes first.

Hiding a page is a convenience: each page checks the role again (``guard_page``), and the code that makes a
spend or shows a true value checks it once more (``ui.state``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from dpdash.access import PERMISSIONS, Action, Role
from dpdash.errors import AccessDenied
from ui.text import md

__all__ = ["PAGE_ACTIONS", "guard_page", "visible_pages"]

#: What a role must allow to open each page (by the page file's name).
PAGE_ACTIONS: dict[str, Action] = {
    "home": Action.OPEN,
    "data": Action.DECLARE,  # loading, facts and budgets: the owner's page
    "datasets": Action.OPEN,
    "explorer": Action.PREVIEW,
    "release": Action.PREVIEW,  # an analyst previews without true values and requests releases
    "synthetic": Action.PREVIEW,  # an analyst sees the cost and downloads what was released; no preview
    "budget": Action.OPEN,
    "planner": Action.PREVIEW,
    "risk": Action.OPEN,
    "audit": Action.PREVIEW,  # an analyst audits mechanisms; a query on the table's rows is the owner's
}


def _page_name(page: Any) -> str:
    """The file name of an ``st.Page`` made from ``pages/<name>.py``."""
    return Path(str(getattr(page, "_page", ""))).stem


def visible_pages(pages: Sequence[Any], role: Role | None) -> list[Any]:
    """The pages ``role`` may open, in their order (the default page first when it may)."""
    allowed = PERMISSIONS[role] if role is not None else frozenset()
    return [page for page in pages if PAGE_ACTIONS.get(_page_name(page), Action.RELEASE) in allowed]


def guard_page(file: str) -> None:
    """Stop the page with a message unless the current person's role on the active table opens it (a URL
    typed, a bookmark, a widget message replayed: the page checks, whatever the navigation showed)."""
    # Imported here, not at the top: app.py imports this module first, and a module that waits on
    # ui.state's import while holding its own lock is how two sessions' first runs on a fresh server could
    # deadlock on imports (Python then hands one of them this module half-initialized).
    from ui.roles import check, dataset_ref
    from ui.state import active_table

    action = PAGE_ACTIONS.get(Path(file).stem, Action.RELEASE)
    try:
        check(dataset_ref(active_table()), action)
    except AccessDenied as error:
        st.error(f"This page is not for your role: {md(error)}", icon=":material/lock:")
        st.stop()
