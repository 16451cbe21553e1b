"""dpdash as a user installs it: the wheel built from this checkout, installed into a fresh virtual
environment outside the checkout, with and without extras; `dpdash run` serving the installed app from
another folder on its own port, ledger and workspace; a release made through it in Chromium, spent in that
ledger; and the downloaded script naming the installed Python.

Nothing is downloaded: the fresh environment takes its dependencies, pip among them, from this one's
site-packages (a .pth line, which adds the folder without running its own .pth files, so this checkout's
editable dpdash is not seen there), and pip resolves the extras against them with no index.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import pytest
from playwright.sync_api import expect

from dpdash.ledger import Ledger
from dpdash.ledger.releases import release_count
from tests.app.conftest import (
    OUTPUT_DIR,
    REPO_ROOT,
    find_free_port,
    stop_process,
    wait_for_health,
    wait_until_idle,
)

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.walk(38)]

EXTRAS = "postgres,spark,team"


#: What a user's shell would not have: this checkout on the path, the tests' ledger and workspace.
_NOT_THEIRS = ("PYTHONPATH", "DPDASH_LEDGER", "DPDASH_WORKSPACE")


def _user_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in _NOT_THEIRS}


def _run(*cmd: str | Path, cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=_user_env(), capture_output=True, text=True, timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """(the wheel, the fresh environment's Python, a folder outside the checkout)."""
    root = tmp_path_factory.mktemp("installed")
    dist = root / "dist"
    pip = (sys.executable, "-m", "pip")
    built = _run(*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", dist, REPO_ROOT, cwd=root)
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("dpdash-*.whl")
    venv = root / "venv"
    # Without its own pip (ensurepip took most of the fixture): pip comes, with every dependency, from
    # this environment's site-packages through the .pth line below, and installs into the new one.
    made = _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=root)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=root)
    (Path(purelib.stdout.strip()) / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    added = _run(python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", wheel, cwd=root)
    assert added.returncode == 0, added.stderr
    yield {"wheel": wheel, "python": python, "folder": root}


def test_the_wheel_holds_the_library_and_the_app(installed: dict[str, Path]) -> None:
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    for needed in ("dpdash/__init__.py", "dpdash/cli.py", "dpdash/py.typed", "dpdash_app/app.py",
                   "dpdash_app/pages/release.py", "dpdash_app/ui/shell.py", "dpdash_app/static/theme.css",
                   "dpdash_app/.streamlit/config.toml"):  # fmt: skip
        assert needed in names
    assert not [n for n in names if n.startswith(("tests/", "bench/", "ui/", "pages/")) or "__pycache__" in n]
    where = _run(installed["python"], "-c", "import dpdash, dpdash.cli; print(dpdash.__file__); "
                 "print(dpdash.cli.app_path())", cwd=installed["folder"])  # fmt: skip
    library, app = where.stdout.split()
    venv = installed["python"].parents[1]
    assert Path(library).is_relative_to(venv) and Path(app).is_relative_to(venv), where.stdout
    assert Path(app).parts[-2:] == ("dpdash_app", "app.py")


def test_extras_resolve_and_the_core_runs_without_them(installed: dict[str, Path]) -> None:
    """pip resolves ``dpdash[postgres,spark,team]`` with no index (the pins of requirements.txt meet the
    ranges), and without psycopg, pyspark, Authlib and httpx the library still releases into a file ledger."""
    wanted = f"dpdash[{EXTRAS}] @ {installed['wheel'].as_uri()}"
    report = _run(installed["python"], "-m", "pip", "install", "--dry-run", "--no-index", "--quiet",
                  "--report", "-", wanted, cwd=installed["folder"])  # fmt: skip
    assert report.returncode == 0, report.stderr
    to_install = [item["metadata"]["name"] for item in json.loads(report.stdout)["install"]]
    assert to_install in ([], ["dpdash"]), to_install  # every dependency of every extra is already there
    core = (
        "import sys\n"
        "for name in ('psycopg', 'pyspark', 'authlib', 'httpx'): sys.modules[name] = None  # not installed\n"
        "import pandas as pd\n"
        "from dpdash.ledger import Budget, Ledger, fingerprint\n"
        "from dpdash.queries import Count\n"
        "from dpdash.release import release\n"
        "df = pd.DataFrame({'a': range(100)})\n"
        "with Ledger('ledger.sqlite') as ledger:\n"
        "    ds = ledger.add_dataset(name='t', fingerprint=fingerprint(df), budget=Budget(1.0))\n"
        "    ledger.spend_release(ds, release(Count(), 'Geometric', df, epsilon=0.5))\n"
        "    print(ledger.status(ds).spent.epsilon)\n"
    )
    ran = _run(installed["python"], "-c", core, cwd=installed["folder"])
    assert ran.returncode == 0 and ran.stdout.strip() == "0.5", ran.stderr


def _run_notebook(notebook: Path, python: Path, folder: Path) -> str:
    """Run every cell as "Run all" does, in a kernel of the installed environment's Python (its kernel
    spec installed into ``folder``; nothing downloaded); the printed text."""
    import nbformat
    from nbclient import NotebookClient

    prefix = folder / "kernel"
    made = _run(python, "-m", "ipykernel", "install", "--prefix", prefix, "--name", "dpdash-installed",
                cwd=folder)  # fmt: skip
    assert made.returncode == 0, made.stderr
    os.environ["JUPYTER_PATH"] = str(prefix / "share" / "jupyter")
    book = nbformat.reads(notebook.read_text(), as_version=4)
    NotebookClient(book, timeout=180, kernel_name="dpdash-installed",
                   resources={"metadata": {"path": str(folder)}}).execute()  # fmt: skip
    return "".join(o.get("text", "") for c in book.cells if c.cell_type == "code" for o in c.outputs)


def test_dpdash_run_serves_the_installed_app_and_spends_its_ledger(
    installed: dict[str, Path], page: Page, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Served by `dpdash run` from another folder: an uploaded table released, spent in the ledger given;
    then the downloaded script run by the command its first line names, and the notebook run top to
    bottom in the installed Python, as a person would (no PYTHONPATH, no DPDASH_LEDGER)."""
    for name in _NOT_THEIRS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_PATH", "")
    folder = installed["folder"] / "elsewhere"
    folder.mkdir()
    ledger, workspace = folder / "team-ledger.sqlite", folder / "workspace"
    table = folder / "people.csv"
    pd.DataFrame({"age": [20 + i % 50 for i in range(300)], "city": ["Oslo", "Bergen"] * 150}).to_csv(
        table, index=False
    )
    port = find_free_port()
    command = installed["python"].with_name("dpdash")
    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    log_path = OUTPUT_DIR / f"dpdash-run-{port}.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [str(command), "run", "--port", str(port), "--address", "127.0.0.1", "--ledger", ledger.name,
             "--workspace", workspace.name],
            cwd=folder, env={**_user_env(), "PYTHONUNBUFFERED": "1"}, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(server, url, log_path)
        page.set_viewport_size({"width": 1400, "height": 2400})
        page.goto(f"{url}/data")
        expect(page.get_by_text("1. Load a table")).to_be_visible(timeout=60_000)
        page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(table))
        # The sidebar names the active table once the upload's rerun has loaded it (the uploader's own file
        # chip shows the name before that, and a click then set the example's budget and released from it).
        expect(page.get_by_test_id("stSidebar")).to_contain_text("Data: people.csv", timeout=60_000)
        wait_until_idle(page)
        page.get_by_role("button", name="Set this budget (it cannot be changed later)").click()
        page.get_by_role("button", name="Confirm: set this budget").click()
        expect(page.get_by_text("A budget cannot be changed once set")).to_be_visible(timeout=60_000)
        page.goto(f"{url}/release")
        expect(page.get_by_text("Simulated preview · spends no budget")).to_be_visible(timeout=60_000)
        wait_until_idle(page)
        page.get_by_role("button", name="Release… (spends budget)").click()
        page.get_by_role("button", name="Release now").click()
        expect(page.get_by_text("Released ·").first).to_be_visible(timeout=60_000)
        expect(page.get_by_test_id("stSidebar")).to_contain_text("1 release;", timeout=60_000)
        with page.expect_download() as download:
            page.get_by_role("button", name="Python script (dpdash)").click()
        script = folder / "reproduce_release.py"
        script.write_bytes(Path(download.value.path()).read_bytes())
        with page.expect_download() as download:
            page.get_by_role("button", name="Jupyter notebook").click()
        notebook = folder / "reproduce_release.ipynb"
        notebook.write_bytes(Path(download.value.path()).read_bytes())
    finally:
        stop_process(server)
    run = script.read_text().splitlines()[0].removeprefix("# Run it with: ")
    assert run == f"{installed['python']} reproduce_release.py people.csv"
    again = _run(*shlex.split(run), cwd=folder)
    assert again.returncode == 0 and "Released:" in again.stdout, again.stderr
    previewed = _run_notebook(notebook, installed["python"], folder)
    assert "SIMULATED PREVIEW" in previewed and "nothing was spent" in previewed.lower(), previewed
    assert ledger.is_file()  # relative to where `dpdash run` was started
    with Ledger(ledger) as opened:
        (dataset,) = opened.datasets()
        assert release_count(opened.entries(dataset.fingerprint)) == 2  # the app's and the script's
    log = log_path.read_text(errors="replace")
    assert "Traceback" not in log and "Inotify" not in log, log[-2000:]
