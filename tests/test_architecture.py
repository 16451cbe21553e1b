"""The dependency direction from STYLE.md, checked on the source: pages → ui → dpdash.

- ``dpdash/`` never imports Streamlit, ``ui`` or ``pages`` (usable from a notebook or a script).
- ``ui/`` never imports ``pages``.
- A page never imports another page.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def imported_top_levels(path: Path) -> set[str]:
    """Top-level names of every absolute module that ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def python_files(folder: str) -> list[Path]:
    return sorted((REPO_ROOT / folder).rglob("*.py"))


def relative(path: Path) -> str:
    return path.relative_to(REPO_ROOT).as_posix()


RULES = [
    ("dpdash", {"streamlit", "ui", "pages"}),
    ("ui", {"pages"}),
    ("pages", {"pages"}),
]


@pytest.mark.parametrize(
    ("path", "forbidden"),
    [
        pytest.param(path, forbidden, id=relative(path))
        for folder, forbidden in RULES
        for path in python_files(folder)
    ],
)
def test_dependencies_point_one_way(path: Path, forbidden: set[str]) -> None:
    bad = imported_top_levels(path) & forbidden
    assert not bad, f"{relative(path)} imports {sorted(bad)}: dependencies go pages → ui → dpdash"


def test_rules_see_the_app_files() -> None:
    # Guards against the parametrisation silently checking nothing.
    assert (REPO_ROOT / "pages" / "home.py") in python_files("pages")
