"""The stakeholder report as a one-page PDF, printed by the Chromium already on the machine (Debian's
``/usr/bin/chromium``, or ``DPDASH_CHROMIUM``), headless and offline: the report's HTML has no script and
no external resource, and Chromium is started with its background connections off. Nothing is
downloaded; without Chromium, ``render_pdf`` raises ``RenderError`` with a message that says so.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path

from dpdash.errors import RenderError

__all__ = [
    "CHROMIUM", "CHROMIUM_ARGS", "PAPERS",
    "find_chromium", "missing_chromium_message", "page_count", "render_pdf",
]  # fmt: skip

#: Where Debian installs Chromium; ``DPDASH_CHROMIUM`` names another executable.
CHROMIUM = Path("/usr/bin/chromium")
#: Headless, and no connection to anywhere: a privacy tool's report is made on this machine only.
CHROMIUM_ARGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--no-pdf-header-footer",
)  # fmt: skip
#: Paper sizes the PDF can be printed on (the report fits either on one page).
PAPERS = ("A4", "Letter")

_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")


def find_chromium() -> Path | None:
    """The Chromium executable to print with (``DPDASH_CHROMIUM`` if set, else ``CHROMIUM``), or None."""
    path = Path(os.environ.get("DPDASH_CHROMIUM") or CHROMIUM)
    return path if path.is_file() and os.access(path, os.X_OK) else None


def missing_chromium_message() -> str:
    """What to say when there is no Chromium to print with."""
    where = os.environ.get("DPDASH_CHROMIUM") or str(CHROMIUM)
    return (
        f"No PDF: Chromium was not found at {where}, and the PDF is printed by Chromium on this server. "
        "Install Debian's chromium package (or set DPDASH_CHROMIUM to a Chromium executable); the HTML "
        "report prints to one page from any browser meanwhile."
    )


def page_count(pdf: bytes) -> int:
    """The number of pages of a PDF that lists its page objects uncompressed, as Chromium's does.

    >>> page_count(b"<</Type /Pages /Count 1>> <</Type /Page /Parent 2 0 R>>")
    1
    """
    return len(_PAGE.findall(pdf))


def _print_once(page: str, chromium: Path, folder: Path, timeout: float) -> bytes:
    source, target = folder / "report.html", folder / "report.pdf"
    source.write_text(page, encoding="utf-8")
    target.unlink(missing_ok=True)
    command = [str(chromium), *CHROMIUM_ARGS, f"--user-data-dir={folder / 'profile'}",
               f"--print-to-pdf={target}", source.as_uri()]  # fmt: skip
    # Its own process group, so that a Chromium that hangs is stopped with all of its helper processes.
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env={**os.environ, "HOME": str(folder)},
                               start_new_session=True)  # fmt: skip
    try:
        _, errors = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise RenderError(f"No PDF: Chromium did not print the report within {timeout:g} s.") from None
    if not target.is_file() or not target.read_bytes().startswith(b"%PDF"):
        said = errors.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        raise RenderError(f"No PDF: Chromium exited with code {process.returncode} ({said[0][:200]}).")
    return target.read_bytes()


def render_pdf(page: str, *, paper: str = "A4", chromium: Path | None = None, timeout: float = 60.0) -> bytes:
    """Print an HTML page (the stakeholder report) to a PDF of one page, with Chromium.

    The report sets its own print zoom from an estimate of its height (``report.print_zoom``); if the
    PDF still has more than one page, it is printed again smaller (by 0.85, then by 1/pages), at most
    twice, so a report with long names also fits.

    Raises:
        RenderError: no Chromium (``missing_chromium_message``), Chromium failed or took longer than
            ``timeout`` seconds, or ``paper`` is not one of ``PAPERS``.
    """
    if paper not in PAPERS:
        raise RenderError(f"paper must be one of {', '.join(PAPERS)}, got paper={paper!r}")
    executable = chromium or find_chromium()
    if executable is None or not executable.is_file():
        raise RenderError(missing_chromium_message())
    with tempfile.TemporaryDirectory(prefix="dpdash-pdf-") as folder:
        shrink, pdf = 1.0, b""
        for attempt in range(3):
            # html's zoom multiplies body's (the report's own estimate).
            extra = f"<style>@page{{size:{paper}}}@media print{{html{{zoom:{shrink:.3f}}}}}</style>"
            printed = page.replace("</head>", f"{extra}</head>", 1)
            pdf = _print_once(printed, executable, Path(folder), timeout)
            pages = page_count(pdf)
            if pages <= 1:
                break
            shrink *= 0.85 if attempt == 0 else 0.97 / pages
    return pdf
