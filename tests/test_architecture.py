"""The dependency direction from STYLE.md, checked on the source: pages → ui → dpdash.

- ``dpdash/`` never imports Streamlit, ``ui`` or ``pages`` (usable from a notebook or a script).
- ``ui/`` never imports ``pages``.
- A page never imports another page.
- ``dpdash/accounting/`` (the mathematics of privacy loss) never imports the ledger (``dpdash.ledger``) or
  a storage driver: the ledger uses accounting, never the reverse.
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


def imported_modules(path: Path) -> set[str]:
    """Every absolute module that ``path`` imports, at any depth (inside functions too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", python_files("dpdash/accounting"), ids=relative)
def test_accounting_never_imports_the_ledger_or_storage(path: Path) -> None:
    bad = {m for m in imported_modules(path) if m.split(".")[0] in {"sqlite3", "psycopg"}
           or m == "dpdash.ledger" or m.startswith("dpdash.ledger.")}  # fmt: skip
    assert not bad, f"{relative(path)} imports {sorted(bad)}: the ledger uses accounting, never the reverse"
