"""The public API is explicit: ``__all__`` lists exactly the public names, each importable, and the
package ships ``py.typed``. Doctests in the core run as part of the suite."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import dpdash

PACKAGES = ["dpdash", "dpdash.mechanisms"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_matches_the_public_names(name: str) -> None:
    module = importlib.import_module(name)
    public = {n for n in vars(module) if not n.startswith("_")}
    submodules = {m.name for m in pkgutil.iter_modules(module.__path__)}
    imported_helpers = {"annotations"}
    assert set(module.__all__) == public - submodules - imported_helpers | (set(module.__all__) & submodules)
    for exported in module.__all__:
        assert hasattr(module, exported)


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
