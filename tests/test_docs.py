"""Every example in README.md and docs/*.md is run or checked here, so the docs cannot drift from the code.

Python: each file's ```python blocks run top to bottom in one namespace, in a temporary folder with
``DPDASH_LEDGER`` and ``DPDASH_WORKSPACE`` pointing into it. A block whose fence names a server
(```python postgres, ```python spark) runs in its own test with the suite's fixture (tests/conftest.py):
the PostgreSQL block's example URL is replaced by the test server's, with the example table loaded into
it; the Spark block gets the test session as ``spark`` with the example table as the view ``events``.
A line ``expression  # → literal`` states an exact output: the value must equal the literal (a float
rounded to the decimals shown).

Shell: every command is a line starting with ``$ `` in a ```console block (the one convention; ```bash and
```sh blocks are refused). Each command is either run after the file's Python blocks, in the same folder
(``python reproduce_release.py …``, ``python reproduce_synthetic.py …``, ``dpdash reproduce …``,
``dpdash --help``), or, when it cannot run inside the suite, checked without running it: ``make``
targets and variables exist in the Makefile,
``dpdash run`` flags parse with dpdash.cli's own parser, ``pip install`` extras exist in pyproject.toml,
``streamlit run`` options are Streamlit settings, ``python -m …postgres_setup`` flags are in its
``--help``, and every environment variable set in front of a command is read by the code.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[ \t]*([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)
SERVERS = ("postgres", "spark")
ARROW = re.compile(r"#\s*→\s*(.+)$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence
    lang: str
    tags: frozenset[str]
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


@dataclass(frozen=True)
class Command:
    block: Block
    line: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.block.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return [
        Block(path, text.count("\n", 0, m.start()) + 1, m[1], frozenset(m[2].split()), m[3])
        for m in FENCE.finditer(text)
    ]


def commands(block: Block) -> list[Command]:
    """The ``$ `` lines of a console block, with ``\\`` continuations joined."""
    found: list[Command] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            start, text = i, lines[i][2:]
            while text.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text.rstrip()[:-1] + " " + lines[i].strip()
            found.append(Command(block, block.line + 1 + start, text))
        i += 1
    return found


ALL_BLOCKS = [b for path in DOCS for b in blocks(path)]
PYTHON_FILES = sorted({b.path for b in ALL_BLOCKS if b.lang == "python" and not b.tags & set(SERVERS)})
COMMANDS = [c for b in ALL_BLOCKS if b.lang == "console" for c in commands(b)]


# --- Python ------------------------------------------------------------------------------------------


def _expected(comment: str) -> Any:
    """The longest prefix of the text after ``→`` that is a Python literal."""
    for end in range(len(comment), 0, -1):
        try:
            return comment[:end].strip(), ast.literal_eval(comment[:end].strip())
        except (ValueError, SyntaxError):
            continue
    raise AssertionError(f"no literal after → in {comment!r}")


def _same(value: Any, literal: str, expected: Any) -> bool:
    if isinstance(expected, tuple | list):
        parts = [p.strip() for p in literal.strip("()[]").split(",") if p.strip()]
        return len(parts) == len(expected) == len(value) and all(
            _same(v, p, e) for v, p, e in zip(value, parts, expected, strict=True)
        )
    if isinstance(expected, float):
        decimals = len(literal.split(".")[1]) if "." in literal else 0
        return round(float(value), decimals) == expected
    if isinstance(expected, int) and not isinstance(expected, bool):
        return float(value) == expected
    return value == expected


def run_python(block: Block, namespace: dict[str, Any]) -> None:
    """Run ``block`` statement by statement, checking every ``# → literal`` it states."""
    source = block.text
    lines = source.splitlines()
    for statement in ast.parse(source, filename=block.where).body:
        code = compile(ast.Module([statement], type_ignores=[]), block.where, "exec")
        stated = ARROW.search(lines[statement.end_lineno - 1])
        if isinstance(statement, ast.Expr) and stated:
            literal, expected = _expected(stated[1])
            value = eval(compile(ast.Expression(statement.value), block.where, "eval"), namespace)
            where = f"{block.where} (+{statement.lineno})"
            stated_wrong = f"{where}: the docs say {literal}, the code gives {value!r}"
            assert _same(value, literal, expected), stated_wrong
        else:
            exec(code, namespace)


@pytest.fixture
def docs_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "workspace"))
    return tmp_path


SLOW_FILES = {"library.md", "large-tables.md"}  # the audits' trials; the reproduce script's runs


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p.name in SLOW_FILES else [])
        for p in PYTHON_FILES
    ],
)
def test_the_python_blocks_and_runnable_commands_of_a_file(path: Path, docs_folder: Path) -> None:
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for block in blocks(path):
        if block.lang == "python" and not block.tags & set(SERVERS):
            run_python(block, namespace)
    for command in COMMANDS:
        if command.block.path == path and classify(command)[0] == "run":
            classify(command)[1](command, docs_folder)


def _server_blocks(server: str) -> list[Any]:
    return [pytest.param(b, id=b.where) for b in ALL_BLOCKS if b.lang == "python" and server in b.tags]


@pytest.mark.parametrize("block", _server_blocks("postgres"))
def test_a_postgres_block_runs_on_a_real_server(block: Block, postgres: Any, docs_folder: Path) -> None:
    from dpdash.datasets import load_example

    postgres.execute("DROP DATABASE IF EXISTS clinic")
    postgres.execute("CREATE DATABASE clinic")
    postgres.execute("DROP ROLE IF EXISTS analyst")
    postgres.execute("CREATE ROLE analyst LOGIN PASSWORD 's3cret'")  # the password the docs show
    postgres.load(load_example("patients").data.head(2_000), "visits", database="clinic")
    postgres.execute("GRANT SELECT ON visits TO analyst", database="clinic")
    # The docs' host and port are an example; the test server is at 127.0.0.1 on a free port.
    text = block.text.replace("db.internal:5432", f"127.0.0.1:{postgres.port}")
    run_python(Block(block.path, block.line, block.lang, block.tags, text), {"__name__": "__docs__"})


@pytest.mark.parametrize("block", _server_blocks("spark"))
def test_a_spark_block_runs_on_a_local_session(block: Block, spark: Any, docs_folder: Path) -> None:
    from dpdash.datasets import load_example
    from tests.spark_views import view

    view(spark, load_example("patients").data.head(2_000), "events")
    run_python(block, {"spark": spark})


# --- shell commands ----------------------------------------------------------------------------------


def _env_and_argv(command: Command) -> tuple[list[str], list[str]]:
    words = shlex.split(command.text, comments=True)
    env = []
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        env.append(words.pop(0).split("=", 1)[0])
    return env, words


def _read_by_code(name: str) -> bool:
    for folder in ("dpdash", "ui"):
        for file in (ROOT / folder).rglob("*.py"):
            if f'"{name}"' in file.read_text(encoding="utf-8"):
                return True
    return f'"{name}"' in (ROOT / "app.py").read_text(encoding="utf-8") or name.startswith("STREAMLIT_")


def _check_make(argv: list[str], command: Command) -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for word in argv[1:]:
        if "=" in word:
            variable = word.split("=", 1)[0]
            assert f"$({variable})" in makefile, f"{command.where}: the Makefile does not use {variable}"
        else:
            target = re.search(rf"^{re.escape(word)}:", makefile, re.M)
            assert target, f"{command.where}: no make target {word}"


def _check_dpdash_run(argv: list[str], command: Command) -> None:
    from dpdash.cli import _parser

    args = _parser().parse_args(argv[1:])  # exits (fails the test) on an unknown flag
    assert args.command == "run", command.where


def _check_pip(argv: list[str], command: Command) -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    targets = [w for w in argv[2:] if not w.startswith("-")]
    assert argv[1] == "install" and targets, command.where
    for target in targets:
        match = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", target)
        assert match, f"{command.where}: pip installs {target}, not this checkout"
        for extra in (match[1] or "").split(","):
            assert not extra or extra in extras, f"{command.where}: no extra [{extra}] in pyproject.toml"


def _check_streamlit_run(argv: list[str], command: Command) -> None:
    from streamlit import config

    assert argv[1:3] == ["run", "app.py"] and (ROOT / "app.py").is_file(), command.where
    options = config._config_options_template  # every setting Streamlit knows
    for word in argv[3:]:
        if word.startswith("--"):
            name = word[2:].split("=", 1)[0]
            assert name in options, f"{command.where}: Streamlit has no setting {name}"


def _check_postgres_setup(argv: list[str], command: Command) -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "dpdash.ledger.storage.postgres_setup", "--help"],
        capture_output=True, text=True, cwd=ROOT, check=True,
    ).stdout  # fmt: skip
    for word in argv[3:]:
        if word.startswith("--"):
            assert word.split("=", 1)[0] in shown, f"{command.where}: postgres_setup has no {word}"


def _makes_a_script(path: Path) -> bool:
    """Whether the file's Python blocks write the downloaded script that its commands then run."""
    return any(b.lang == "python" and '"reproduce_release.py"' in b.text for b in blocks(path))


def _check_dpdash_reproduce(argv: list[str], command: Command) -> None:
    from dpdash.cli import _parser

    args = _parser().parse_args(argv[1:])
    assert args.command == "reproduce" and args.script.endswith(".py"), command.where


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _run_script(command: Command, folder: Path) -> None:
    """Run a ``python …`` or ``dpdash …`` command in ``folder``, with this Python and this checkout."""
    _, argv = _env_and_argv(command)
    if argv[0] == "dpdash":
        argv = [sys.executable, "-m", "dpdash.cli", *argv[1:]]
    else:
        argv = [sys.executable, *argv[1:]]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=folder, env=_environment(), timeout=120)
    assert done.returncode == 0, f"{command.where}: `{command.text}` exited {done.returncode}:\n{done.stderr}"


def classify(command: Command) -> tuple[str, Any]:
    """("run", runner) for a command the file's test runs; ("check", checker) for one checked unrun."""
    env, argv = _env_and_argv(command)
    for name in env:
        assert _read_by_code(name), f"{command.where}: no code reads {name}"
    head = argv[:2]
    if head[:1] == ["make"]:
        return "check", _check_make
    if head == ["dpdash", "run"]:
        return "check", _check_dpdash_run
    if head[:1] == ["pip"]:
        return "check", _check_pip
    if head[:1] == ["streamlit"] or head[:1] == [".venv/bin/streamlit"]:
        return "check", _check_streamlit_run
    if argv[:3] == ["python", "-m", "dpdash.ledger.storage.postgres_setup"]:
        return "check", _check_postgres_setup
    if head == ["dpdash", "reproduce"] and not _makes_a_script(command.block.path):
        return "check", _check_dpdash_reproduce  # no script in this file's folder to run it on
    scripts = (["python", "reproduce_release.py"], ["python", "reproduce_synthetic.py"])
    if head in scripts or head in (["dpdash", "reproduce"], ["dpdash", "--help"]):
        return "run", _run_script
    raise AssertionError(f"a command in {command.where} that no test runs: {command.text}")


def test_shell_commands_use_one_convention() -> None:
    """Shell commands are ``$ `` lines in ```console blocks: no ```bash or ```sh block, no console block
    without a command."""
    wrong = [b.where for b in ALL_BLOCKS if b.lang in ("bash", "sh", "shell", "zsh")]
    assert not wrong, f"shell blocks must be ```console with `$ ` lines: {wrong}"
    empty = [b.where for b in ALL_BLOCKS if b.lang == "console" and not commands(b)]
    assert not empty, f"console blocks with no `$ ` command: {empty}"


def test_every_block_is_a_kind_this_file_runs_or_reads() -> None:
    known = {"python", "console", "toml", ""}
    unknown = [(b.where, b.lang) for b in ALL_BLOCKS if b.lang not in known]
    assert not unknown, unknown


def test_every_python_block_is_run() -> None:
    """Untagged blocks run in their file's test; tagged ones name a server this file has a test for."""
    tagged = [b for b in ALL_BLOCKS if b.lang == "python" and b.tags]
    assert all(b.tags <= set(SERVERS) and len(b.tags) == 1 for b in tagged), [b.where for b in tagged]


@pytest.mark.parametrize("command", [pytest.param(c, id=c.where) for c in COMMANDS])
def test_every_shell_command_is_run_or_checked(command: Command) -> None:
    kind, handler = classify(command)
    if kind == "check":
        handler(_env_and_argv(command)[1], command)


def test_the_toml_examples_parse() -> None:
    for block in (b for b in ALL_BLOCKS if b.lang == "toml"):
        tomllib.loads(block.text)


def test_the_readme_starts_with_the_two_commands() -> None:
    first = blocks(ROOT / "README.md")[0]
    assert [c.text.split("#")[0].strip() for c in commands(first)] == ["make run", "make test"]
    assert first.line <= 5


def test_every_link_into_the_docs_finds_its_file_and_section() -> None:
    """Relative links in README.md and docs/ name a file that exists and, after #, one of its headings."""

    def anchors(path: Path) -> set[str]:
        text = FENCE.sub("", path.read_text(encoding="utf-8"))
        headings = re.findall(r"^#+ (.+)$", text, re.M)
        return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}

    for path in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", path.read_text(encoding="utf-8"))):
            if "://" in target or target.startswith("mailto:"):
                continue
            file, _, anchor = target.partition("#")
            linked = (path.parent / file).resolve() if file else path
            assert linked.exists(), f"{path.name}: a link to {target}, which does not exist"
            if anchor and linked.suffix == ".md":
                assert anchor in anchors(linked), f"{path.name}: a link to {target}: no such heading"


def test_the_code_points_to_the_docs_not_to_old_readme_sections() -> None:
    """UI text and comments name a file of docs/ and one of its headings, e.g. (docs/team.md, 'Roles'); none
    points into the README, which now holds only the front page."""
    headings = {
        path.name: {h.strip() for h in re.findall(r"^#+ (.+)$", FENCE.sub("", path.read_text("utf-8")), re.M)}
        for path in DOCS
    }
    files = [*(ROOT / "ui").rglob("*.py"), *(ROOT / "pages").glob("*.py"), *(ROOT / "dpdash").rglob("*.py")]
    for file in [*files, ROOT / "app.py", ROOT / "requirements.txt"]:
        text = file.read_text(encoding="utf-8")
        assert not re.search(r"README,", text), f"{file.relative_to(ROOT)} points into a README section"
        named = re.findall(r"docs/([\w-]+\.md), [\"']([^\"']+)[\"']", text)
        named += re.findall(r"docs/([\w-]+\.md), (Layout)\)", text)
        for name, section in named:
            assert section in headings[name], f"{file.relative_to(ROOT)}: docs/{name} has no {section!r}"
