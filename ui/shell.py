"""Every page runs inside app.py's shell, also when a bookmark is the first request of a fresh server.

Why this exists: until ``st.navigation`` has run once in the server process, Streamlit 1.67 treats a
folder named ``pages/`` beside the main script as a v1 multipage app (``PagesManager.uses_pages_directory``;
``script_runner._mpa_v1``). On a freshly started server, the first request for ``/budget`` then runs
``pages/budget.py`` on its own: no sidebar, no dpdash navigation, Streamlit's file list instead. Each page
module starts with :func:`run_through_app`, which notices that case and runs ``app.py`` instead; its
``st.navigation`` routes the same URL to the same page, inside the shell.
"""

from __future__ import annotations

import gc
import importlib
import pkgutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

APP = Path(__file__).resolve().parents[1] / "app.py"
PAGES = APP.parent / "pages"

# Set by app.py while it runs the page that st.navigation chose; per script thread (each browser session
# runs its script in its own thread), so one session's run never vouches for another's.
_INSIDE_SHELL: ContextVar[bool] = ContextVar("dpdash_inside_shell", default=False)


_LOADING = threading.Lock()
_loaded = False


def load_modules() -> None:
    """Import every ``ui`` module (and with them the ``dpdash`` modules they use) completely, once per
    process, one script thread at a time, before any script imports one of them.

    Why: each browser session runs its script in a thread of its own. On a fresh server, two first runs
    importing dpdash's and ui's modules at once could each hold one module's import lock while waiting
    for the other's (``dpdash`` is in ``sys.modules`` before it is initialised, so another thread goes on
    to its submodules); Python breaks such a cycle by handing one thread a module half-initialised
    ("cannot import name 'visible_pages' from 'ui.access'", "partially initialized module
    'dpdash.facts'"). Here the first run imports them all while the others wait on a plain lock, holding
    no import lock (a script is run with exec, not imported); afterwards every import is a finished
    module in ``sys.modules``. app.py and every page call this first (``run_through_app``).

    The objects these imports made (≈ 170 000: modules, classes, functions, Plotly's validators) live as
    long as the process, so they are then frozen out of the garbage collector's reach (``gc.freeze``).
    Streamlit runs a full collection after every script run (``runner.postScriptGC``), which otherwise
    walks them all each time: about 0.1–0.15 s of CPU per click on this project's 2-core machine. What is
    made afterwards (every later run's objects) is collected as before.
    """
    global _loaded
    if _loaded:
        return
    with _LOADING:
        if _loaded:
            return
        import ui

        for module in pkgutil.iter_modules(ui.__path__):
            importlib.import_module(f"ui.{module.name}")
        gc.collect()  # what the imports left as garbage is freed, not frozen
        gc.freeze()
        _loaded = True


@contextmanager
def inside_shell() -> Iterator[None]:
    """Mark the page run inside app.py's shell (app.py wraps ``page.run()`` in it)."""
    token = _INSIDE_SHELL.set(True)
    try:
        yield
    finally:
        _INSIDE_SHELL.reset(token)


def run_through_app() -> None:
    """Run app.py's shell in place of this page when Streamlit ran the page outside it; else do nothing.

    The page is outside the shell when the main script (app.py, or an entry point that runs it) did not
    run it: that is Streamlit's v1 discovery of ``pages/`` on a fresh server. Then the main script runs
    here (page config, navigation, sidebar; its navigation resolves the requested URL to this same page,
    which runs inside the shell) and this outer run stops. A page run as its own main script
    (``AppTest.from_file("pages/risk.py")``) is left alone.
    """
    load_modules()
    ctx = get_script_run_ctx()
    if ctx is None or _INSIDE_SHELL.get():
        return
    main = Path(ctx.main_script_path).resolve()
    if main.parent == PAGES:  # a page run as its own main script
        return
    code = compile(main.read_bytes(), str(main), "exec")
    exec(code, {"__name__": "__main__", "__file__": str(main)})  # the entry point, as Streamlit runs it
    st.stop()
