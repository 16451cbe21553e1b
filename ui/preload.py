"""Warm the browser: load Streamlit's element code while the page is idle, not on the element's first use.

Streamlit loads the code of most elements the first time a page shows one. Its Plotly chunk is 4.7 MB:
evaluating it is one task of about 1 s on the browser's main thread (measured in Chromium on this
project's 2-core machine), paid on the first visit of a page with a chart; each widget's chunk is a few
more requests on the first page that shows one (issue 14). The script below imports the chunks of the
elements dpdash's pages use when the browser is idle (``requestIdleCallback``), from the same URLs
Streamlit's own lazy loader uses, so the browser evaluates each once and the later use finds it ready
(``window.dpdashPreloaded`` is ``"done"`` once every chunk and its own imports have loaded). It fetches
only the app's own static files; no request leaves the app's host.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

#: The lazily loaded chunks of the elements dpdash's pages show (found by walking every page in Chromium
#: and listing the scripts loaded after the first page; their own imports follow them). "Spinner" is shown
#: only by a run that lasts longer than its delay (the Planner's first fit, a slow machine), and the
#: markdown's "remark-emoji" plugin is loaded only by some texts, so a walk sees them only sometimes.
CHUNKS = ("PlotlyChart", "DataFrame", "Slider", "NumberInput", "TextInput", "Selectbox", "Radio", "Checkbox",
          "Button", "DownloadButton", "FileUploader", "Metric", "Multiselect", "rehype-raw",
          "StreamlitSyntaxHighlighter", "Spinner", "remark-emoji")  # fmt: skip

_SCRIPT = """<script>
(() => {
  if (window.dpdashPreloaded) return;
  window.dpdashPreloaded = true;
  const main = document.querySelector('script[type="module"][src*="static/js/index."]');
  if (!main) return;
  // window.dpdashPreloaded becomes "done" once every chunk and everything it imports is loaded.
  const load = () => Promise.allSettled(FILES.map((file) => import(new URL(file, main.src).href)))
    .then(() => { window.dpdashPreloaded = "done"; });
  if ("requestIdleCallback" in window) requestIdleCallback(load, {timeout: 5000});
  else setTimeout(load, 2000);
})();
</script>"""


@functools.cache
def chunk_files() -> tuple[str, ...]:
    """The file names of :data:`CHUNKS` in the installed Streamlit's build (hashed names, found once)."""
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    return tuple(sorted(path.name for stem in CHUNKS for path in folder.glob(f"{stem}.*.js")))


def preload_html() -> str:
    """The script element :func:`preload_element_code` shows ("" when no chunk is found)."""
    files = chunk_files()
    return _SCRIPT.replace("FILES", json.dumps(list(files))) if files else ""


def preload_element_code() -> None:
    """Ask the browser to load the element code when idle (once per browser tab)."""
    html = preload_html()
    if html:
        st.html(html, unsafe_allow_javascript=True)
