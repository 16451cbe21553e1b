"""Suite-wide setup: no test ever reads or writes the user's real budget ledger."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def pytest_configure(config: object) -> None:
    """Point DPDASH_LEDGER at a fresh temporary file before anything (including module- and
    session-scoped fixtures and the browser tests' server, which inherits the environment) opens it."""
    folder = Path(tempfile.mkdtemp(prefix="dpdash-tests-"))
    os.environ["DPDASH_LEDGER"] = str(folder / "ledger.sqlite")
