"""The audit strength: ``--audit=fast`` (default) or ``--audit=strong`` (10× the trials)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def strong(request: pytest.FixtureRequest) -> bool:
    return request.config.getoption("--audit") == "strong"


@pytest.fixture(scope="session")
def trials(strong: bool) -> int:
    """Trials per side of one audit: 2·10⁵ by default, 2·10⁶ with ``--audit=strong``."""
    return 2_000_000 if strong else 200_000
