"""``dpdash.accounting`` exports exactly its public names, and never needs Streamlit."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import dpdash.accounting as accounting


def test_all_matches_the_public_names() -> None:
    public = {name for name in vars(accounting) if not name.startswith("_")}
    submodules = {m.name for m in pkgutil.iter_modules(accounting.__path__)}
    assert set(accounting.__all__) == public - submodules - {"annotations"}
    for name in accounting.__all__:
        assert hasattr(accounting, name)


def test_importing_accounting_loads_neither_streamlit_nor_dp_accounting() -> None:
    code = "import sys, dpdash.accounting; print('streamlit' in sys.modules, 'dp_accounting' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
