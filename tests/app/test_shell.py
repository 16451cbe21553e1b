"""Every page runs inside app.py's shell, including Streamlit's v1 discovery of pages/ (ui/shell.py).

AppTest resets ``PagesManager.uses_pages_directory`` before every run, so each ``switch_page`` run below
goes through Streamlit's v1 ``pages/`` discovery, as a bookmark opened first on a fresh server does: the
page would run on its own, without the sidebar, unless its guard hands the run to app.py.
"""

import ast
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(path.stem for path in (ROOT / "pages").glob("*.py"))
SHELL_CAPTION = "dpdash · differential-privacy budget explorer"


def test_every_page_starts_with_the_guard() -> None:
    """The guard is each page's first statement, before anything that could draw or stop the page."""
    for name in PAGES:
        tree = ast.parse((ROOT / "pages" / f"{name}.py").read_text())
        body = [
            node for node in tree.body
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))  # the docstring
            and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        ]  # fmt: skip
        first, second = (ast.unparse(node) for node in body[:2])
        assert (first, second) == ("from ui.shell import run_through_app", "run_through_app()"), name


@pytest.mark.parametrize("name", ["budget", "datasets"])
def test_a_page_opened_by_url_runs_inside_the_shell(name: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "workspace"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    at.switch_page(f"pages/{name}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(SHELL_CAPTION in caption.value for caption in at.sidebar.caption)
    titles = [t.value for t in at.title]
    assert titles == [name.capitalize()], titles  # the page itself ran, once


#: The next two tests run in this order on one worker.
MAIN_MODULE_PAIR = pytest.mark.xdist_group("main-module")


@MAIN_MODULE_PAIR
def test_a_page_run_as_its_own_main_script_is_left_alone() -> None:
    """AppTest.from_file on a page file (as the page tests do) runs that page, not the shell; Streamlit
    leaves that page installed as the process's ``__main__``."""
    at = AppTest.from_file(str(ROOT / "pages" / "risk.py"), default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["What does ε mean?"]
    assert not any(SHELL_CAPTION in caption.value for caption in at.sidebar.caption)
    assert Path(sys.modules["__main__"].__file__).name == "risk.py"


@MAIN_MODULE_PAIR
def test_the_next_test_finds_the_processs_own_main_module_again() -> None:
    """After the AppTest above, the suite put the worker's ``__main__`` back (tests/conftest.py): a process
    a test starts by spawn or forkserver would otherwise run the page's script again before its work."""
    main_file = Path(getattr(sys.modules["__main__"], "__file__", None) or ".").resolve()
    assert main_file != ROOT / "app.py" and ROOT / "pages" not in main_file.parents, main_file


def test_the_modules_loaded_once_are_frozen_out_of_the_collector() -> None:
    """After ``load_modules`` the imports' objects are frozen (``gc.freeze``), so that Streamlit's full
    collection after every script run does not walk them each time (ui/shell.py)."""
    import gc

    from ui.shell import load_modules

    load_modules()
    assert gc.get_freeze_count() > 50_000  # ui, dpdash, Streamlit, pandas, Plotly: ≈ 170 000 objects
