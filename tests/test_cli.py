"""The ``dpdash`` command without serving: the app it finds, the Streamlit options it passes, and
``dpdash reproduce`` running a script with this Python (tests/app/test_installed_wheel.py serves the
installed app for real)."""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

import pytest

from dpdash import cli

REPO = Path(__file__).resolve().parents[1]


def test_from_a_checkout_it_serves_the_checkouts_app() -> None:
    assert cli.app_path() == REPO / "app.py"


def test_every_setting_of_the_app_is_passed_and_the_file_watcher_is_off() -> None:
    options = cli.streamlit_options(REPO / "app.py")
    settings = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    for section, values in settings.items():
        for key, value in values.items():
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            assert f"--{section}.{key}={shown}" in options
    assert "--server.fileWatcherType=none" in options and "--server.runOnSave=false" in options
    assert options.index("--server.fileWatcherType=none") > len(options) - 3  # after the file's own


def test_run_sets_the_port_address_ledger_and_workspace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What ``dpdash run`` becomes (``python -m streamlit run``), caught before the process is replaced:
    relative paths made absolute, in the server's environment only."""
    seen: dict[str, object] = {}

    def fake_execve(path: str, argv: list[str], env: dict[str, str]) -> None:
        seen.update(path=path, argv=argv, env=env)

    monkeypatch.setattr(os, "execve", fake_execve)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DPDASH_LEDGER", raising=False)
    assert cli.main(["run", "--port", "8765", "--address", "127.0.0.1", "--ledger", "l.sqlite",
                     "--workspace", "ws"]) == 0  # fmt: skip
    argv, env = seen["argv"], seen["env"]
    assert isinstance(argv, list) and isinstance(env, dict) and seen["path"] == sys.executable
    assert argv[:5] == [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py")]
    assert "--server.port=8765" in argv and argv[-1] == "--server.address=127.0.0.1"
    assert env["DPDASH_LEDGER"] == str(tmp_path / "l.sqlite")
    assert env["DPDASH_WORKSPACE"] == str(tmp_path / "ws")
    assert "DPDASH_LEDGER" not in os.environ  # this process's environment is left alone
    cli.main(["run", "--ledger", "postgresql://me@db.example/dp"])
    assert seen["env"]["DPDASH_LEDGER"] == "postgresql://me@db.example/dp"  # type: ignore[index]  # a URL as given


def test_reproduce_runs_the_script_with_its_arguments_and_its_exit_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "reproduce_release.py"
    script.write_text(
        "import sys\nimport dpdash\nprint('args', sys.argv[1:])\n"
        "if __name__ == '__main__':\n    sys.exit(3 if '--preview' in sys.argv else 0)\n"
    )
    assert cli.main(["reproduce", str(script), "table.csv"]) == 0
    assert cli.main(["reproduce", str(script), "table.csv", "--preview"]) == 3
    assert capsys.readouterr().out.splitlines() == ["args ['table.csv']", "args ['table.csv', '--preview']"]
    assert cli.main(["reproduce", str(tmp_path / "missing.py"), "t.csv"]) == 2
    assert "there is no script" in capsys.readouterr().err
