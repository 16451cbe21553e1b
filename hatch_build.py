"""Puts the app beside the library in a built wheel: ``dpdash_app/`` holds app.py, pages/, ui/, static/ and
the Streamlit settings, so that ``dpdash run`` serves the same app as the checkout. An editable install
(``make venv``) copies nothing: it serves the checkout itself."""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: Checkout path -> path inside the wheel.
APP_FILES = {
    "app.py": "dpdash_app/app.py",
    "pages": "dpdash_app/pages",
    "ui": "dpdash_app/ui",
    "static": "dpdash_app/static",
    ".streamlit/config.toml": "dpdash_app/.streamlit/config.toml",
}


class AppFiles(BuildHookInterface):
    """Adds ``APP_FILES`` to a standard (not editable) wheel."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "standard":
            build_data["force_include"].update(APP_FILES)
