"""The ``dpdash`` command: ``dpdash run`` serves the app; ``dpdash reproduce`` runs a downloaded
release script.

    dpdash run [--port N] [--address HOST] [--ledger LOCATION] [--workspace DIR]
    dpdash reproduce reproduce_release.py TABLE_FILE [--ledger LOCATION] [--preview]
    dpdash reproduce reproduce_synthetic.py TABLE_FILE [--release] [--ledger LOCATION] [--output FILE]

``run`` serves the app beside this library: the checkout's ``app.py`` when dpdash runs from a checkout
(``make run``), else the copy a wheel installs as ``dpdash_app``. Streamlit's settings come from that app's
``.streamlit/config.toml``, given as command-line options so that they hold whatever the folder it is run
from (whose own ``.streamlit/secrets.toml`` still configures sign-in); the file watcher is off, as nothing
under a served app changes while it runs. ``--ledger`` and ``--workspace`` set ``DPDASH_LEDGER`` and
``DPDASH_WORKSPACE`` for the server.

``reproduce`` runs a script downloaded from the Query & release or Synthetic table page with this Python,
so that it finds the dpdash it was made by; its own arguments pass through unchanged.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import runpy
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

__all__ = ["app_path", "main", "streamlit_options"]

#: Streamlit options ``dpdash run`` always sets, over the app's settings file.
FIXED_OPTIONS = {"server.fileWatcherType": "none", "server.runOnSave": "false"}


def app_path() -> Path:
    """The app's entry script: the checkout's ``app.py`` beside ``dpdash/``, else the installed
    ``dpdash_app/app.py``."""
    checkout = Path(__file__).resolve().parents[1] / "app.py"
    if checkout.is_file() and (checkout.parent / "pages").is_dir():
        return checkout
    spec = importlib.util.find_spec("dpdash_app")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / "app.py").is_file():
            return Path(folder) / "app.py"
    raise SystemExit("dpdash: no app beside the library (no dpdash_app/app.py): reinstall dpdash")


def streamlit_options(app: Path) -> list[str]:
    """``--section.key=value`` for every setting in the app's ``.streamlit/config.toml``, then
    ``FIXED_OPTIONS``."""
    settings = app.parent / ".streamlit" / "config.toml"
    options: dict[str, object] = {}
    if settings.is_file():
        for section, values in tomllib.loads(settings.read_text(encoding="utf-8")).items():
            for key, value in values.items():
                options[f"{section}.{key}"] = value
    options.update(FIXED_OPTIONS)
    return [f"--{name}={_text(value)}" for name, value in options.items()]


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _run(args: argparse.Namespace) -> int:
    """Becomes ``python -m streamlit run APP --options`` (this process replaced: the library never imports
    Streamlit, and signals reach the server directly)."""
    app = app_path()
    env = dict(os.environ)
    if args.ledger:
        env["DPDASH_LEDGER"] = _absolute(args.ledger)
    if args.workspace:
        env["DPDASH_WORKSPACE"] = str(Path(args.workspace).expanduser().resolve())
    argv = [sys.executable, "-m", "streamlit", "run", str(app), *streamlit_options(app)]
    argv.append(f"--server.port={args.port}")
    if args.address:
        argv.append(f"--server.address={args.address}")
    sys.stdout.flush()
    os.execve(sys.executable, argv, env)
    return 0  # not reached: execve replaces this process


def _absolute(location: str) -> str:
    """A ledger location as the server should read it: a file path made absolute; a URL as given."""
    return location if "://" in location else str(Path(location).expanduser().resolve())


def _reproduce(args: argparse.Namespace) -> int:
    script = Path(args.script)
    if not script.is_file():
        print(f"dpdash reproduce: there is no script {script}", file=sys.stderr)
        return 2
    sys.argv = [str(script), *args.arguments]
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dpdash", description="Explore and spend privacy budgets.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="serve the app", description="Serve the dpdash app.")
    run.add_argument("--port", type=int, default=8501, help="the port to serve on (default 8501)")
    run.add_argument("--address", help="the address to listen on (default: the app's setting, localhost)")
    run.add_argument("--ledger", help="the budget ledger: a file or a postgresql:// URL ($DPDASH_LEDGER)")
    run.add_argument("--workspace", help="the folder that keeps loaded tables and facts ($DPDASH_WORKSPACE)")
    again = commands.add_parser(
        "reproduce",
        help="run a downloaded reproduce_release.py or reproduce_synthetic.py with this dpdash",
        description="Run a script downloaded from the Query & release or Synthetic table page; its "
        "arguments follow it.",
    )
    again.add_argument("script", help="the downloaded script (reproduce_release.py, reproduce_synthetic.py)")
    again.add_argument("arguments", nargs=argparse.REMAINDER, help="the script's arguments: TABLE_FILE ...")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The console entry point."""
    args = _parser().parse_args(argv)
    if args.command == "run":
        return _run(args)
    return _reproduce(args)


if __name__ == "__main__":
    sys.exit(main())
