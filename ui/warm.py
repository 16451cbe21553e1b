"""Work that every first visitor of a page would wait for, done once per server process in the background.

Measured on this project's 2-core machine (issue 14): the Mechanism explorer's first screen computes for
about 0.5 s (exact calibrations; cached for the whole server afterwards), and the first page that shows a
styled table imports pandas' Styler, which compiles its templates (about 0.2 s). :func:`warm_server`
starts one thread, once per process, that does both after the first page run, while the person reads
that page. Only public numbers are computed (no table, no ledger), so nothing private is touched.
"""

from __future__ import annotations

import importlib
import logging
import threading

_LOG = logging.getLogger(__name__)
_LOCK = threading.Lock()
_THREAD = "dpdash-warm"
_CONTEXT_LOGGER = "streamlit.runtime.scriptrunner_utils.script_run_context"
_started = False  # once per process: the caches it fills are the server's, shared by every session


def warm_server() -> bool:
    """Start the warming thread if this process has not started it yet; return whether it started now."""
    global _started
    with _LOCK:
        if _started:
            return False
        _started = True
    threading.Thread(target=_warm, name=_THREAD, daemon=True).start()
    return True


class _OwnContextWarnings(logging.Filter):
    """Drops Streamlit's "missing ScriptRunContext" warnings raised in the warming thread (it has no
    browser session by design: the cached functions' spinners have nobody to show to)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.threadName != _THREAD


def _warm() -> None:
    logging.getLogger(_CONTEXT_LOGGER).addFilter(_OwnContextWarnings())
    try:
        importlib.import_module("pandas.io.formats.style")  # compiles the Styler's jinja2 templates
        from ui import explorer_tables

        explorer_tables.warm()
    except Exception:  # an optimisation only: the first visit then computes as it would have
        _LOG.warning("warming the server's caches failed", exc_info=True)
