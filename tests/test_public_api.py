"""The public API is explicit: ``__all__`` lists exactly the public names, each importable, and the
package ships ``py.typed``. Doctests in the core run as part of the suite."""

from __future__ import annotations

import doctest
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import dpdash

PACKAGES = [
    "dpdash", "dpdash.audit", "dpdash.ledger", "dpdash.mechanisms", "dpdash.queries", "dpdash.sampling",
    "dpdash.synthetic",
]  # fmt: skip


@pytest.mark.parametrize("name", PACKAGES)
def test_all_matches_the_public_names(name: str) -> None:
    """Every public name is in ``__all__`` and every name in ``__all__`` exists (submodules that are
    only imported as a side effect of importing their contents do not count as public names)."""
    module = importlib.import_module(name)
    public = {
        attribute
        for attribute, value in vars(module).items()
        if not attribute.startswith("_")
        and attribute != "annotations"
        and not (inspect.ismodule(value) and attribute not in module.__all__)
    }
    assert set(module.__all__) == public
    assert len(module.__all__) == len(set(module.__all__))


def test_py_typed_is_shipped() -> None:
    assert (Path(dpdash.__file__).parent / "py.typed").exists()


def test_core_imports_without_streamlit() -> None:
    code = "import sys, dpdash, dpdash.mechanisms; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _core_modules() -> list[str]:
    root = Path(dpdash.__file__).parent
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.mark.parametrize("name", _core_modules())
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
