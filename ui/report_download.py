"""The stakeholder report's downloads: the one-page HTML, and the same page as a PDF printed by the
server's Chromium (``dpdash.report_pdf``). Both are made on the click, not on every rerun."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from dpdash.errors import DPDashError
from dpdash.report_pdf import find_chromium, missing_chromium_message, render_pdf
from dpdash.workspace import Workspace

__all__ = ["report_downloads", "synthetic_kept"]


def synthetic_kept(
    kept: Workspace, identity: str, synthetic: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, bytes], dict[str, dict[str, Any]]]:
    """The released CSV and the data card this app kept of each synthetic release (``synthetic_records``),
    by ledger entry uid, for the report's charts; a release whose table is not kept here is drawn in words.
    The card holds the preview's quality figures (NOT PRIVATE) only when the owner included them. Made on
    the click with the session's ``kept`` workspace (``ui.state.workspace``), read when the page ran."""
    tables: dict[str, bytes] = {}
    cards: dict[str, dict[str, Any]] = {}
    with contextlib.suppress(DPDashError):  # no workspace: the report lists the tables in words
        for uid, record in synthetic.items():
            fingerprint = str(record.get("table_fingerprint", ""))
            if (data := kept.synthetic_csv(identity, fingerprint)) is not None:
                tables[uid] = data
            if (card := kept.synthetic_card(identity, fingerprint)) is not None:
                cards[uid] = card
    return tables, cards


def _pdf(make_html: Callable[[], str]) -> bytes:
    return render_pdf(make_html())


def report_downloads(column: Any, make_html: Callable[[], str], *, key: str) -> None:
    """The HTML report's download and, beside it, "Download PDF"; without Chromium the PDF button is
    disabled and a caption says why and what to do (nothing fails on the click). A click reruns nothing:
    a rerun would replace the other button's file on the server while it may still be asked for."""
    column.download_button(
        "Stakeholder report (one-page HTML)", make_html, file_name="dpdash-privacy-report.html",
        mime="text/html", key=key, on_click="ignore",
    )  # fmt: skip
    if find_chromium() is None:
        column.button("Download PDF (no Chromium on this server)", disabled=True, key=f"{key}_pdf",
                      help=missing_chromium_message())  # fmt: skip
        column.caption(missing_chromium_message())
        return
    column.download_button(
        "Download PDF", partial(_pdf, make_html), file_name="dpdash-privacy-report.pdf",
        mime="application/pdf", key=f"{key}_pdf", on_click="ignore",
        help="The same report as a one-page PDF (A4), printed by this server's Chromium.",
    )  # fmt: skip
