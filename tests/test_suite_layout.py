"""``make test`` collects only tests/app for its browser runs (the Makefile): a browser or ``alone`` test
anywhere else would run in no stage, so none may be anywhere else."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
BROWSER_MARKS = {"browser", "alone"}


def browser_marks(path: Path) -> set[str]:
    """The ``pytest.mark.browser`` / ``pytest.mark.alone`` names used in ``path``'s source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in BROWSER_MARKS
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "mark"
    }


def test_every_browser_test_lives_in_tests_app() -> None:
    elsewhere = {
        str(path.relative_to(TESTS)): sorted(marks)
        for path in TESTS.rglob("*.py")
        if TESTS / "app" not in path.parents and (marks := browser_marks(path))
    }
    assert not elsewhere, f"browser tests outside tests/app, which make test would never run: {elsewhere}"
    assert browser_marks(TESTS / "app" / "test_browser_shell.py") == BROWSER_MARKS  # the scan sees marks
