"""Shared fixtures for app tests: a free port, a live Streamlit server, Debian's Chromium.

Browser tests use them like this::

    @pytest.mark.browser
    def test_something(page, streamlit_server):
        page.goto(streamlit_server.url)

The server is started once per test session on 127.0.0.1 only and always stopped
(terminate, then kill after a timeout). Chromium is Debian's ``/usr/bin/chromium``
(``make chromium``); no browser is ever downloaded.
"""

from __future__ import annotations

import ast
import functools
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page
    from streamlit.testing.v1 import AppTest

    from tests.servers import PostgresServer

REPO_ROOT = Path(__file__).resolve().parents[2]
OUTPUT_DIR = REPO_ROOT / "test-output"
SCREENSHOT_DIR = OUTPUT_DIR / "screenshots"

CHROMIUM = Path("/usr/bin/chromium")
# Headless, and no background connections: this machine's network is closed, and a
# privacy tool's tests should not phone anywhere either.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

SERVER_START_TIMEOUT_S = 60.0
# Playwright's expect() waits 5 s by default; a fresh server's first page (the 100 000-row example) on a
# busy 2-core machine can take longer, so browser tests wait up to this long for what they expect.
EXPECT_TIMEOUT_MS = 30_000
SERVER_STOP_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class StreamlitServer:
    """A running ``streamlit run app.py`` reachable at ``url``."""

    url: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path


#: How long a browser test waits for a script run to finish: a fresh server's first page loads the 100 000-row
#: example, and the browser tests run two at a time.
IDLE_TIMEOUT_MS = 60_000


def wait_until_idle(page: Page) -> None:
    """Wait for Streamlit's script run to finish: the app's script state "notRunning" (as the server last
    reported it), the 'running' status widget gone and no element still arriving. Click only after this
    once a widget change started a rerun, or the click may land on an element the rerun replaces."""
    from playwright.sync_api import expect

    idle = page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')
    expect(idle).to_be_visible(timeout=IDLE_TIMEOUT_MS)
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=IDLE_TIMEOUT_MS)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=IDLE_TIMEOUT_MS)


def find_free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


def wait_for_health(
    process: subprocess.Popen[bytes],
    url: str,
    log_path: Path,
    timeout_s: float = SERVER_START_TIMEOUT_S,
) -> None:
    """Poll Streamlit's health endpoint until it answers ``ok`` or ``timeout_s`` passes.

    Raises:
        RuntimeError: the server exited, or did not become healthy in time; the
            message carries the end of the server log.
    """
    health = f"{url}/_stcore/health"
    deadline = time.monotonic() + timeout_s
    last_error: object = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"streamlit exited with code {process.returncode} before {health} answered.\n"
                f"--- {log_path} ---\n{_tail(log_path)}"
            )
        try:
            with urllib.request.urlopen(health, timeout=2) as response:
                if response.status == 200 and response.read().strip() == b"ok":
                    return
                last_error = f"HTTP {response.status}"
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            last_error = exc
        time.sleep(0.2)
    raise RuntimeError(
        f"{health} did not answer 'ok' within {timeout_s:.0f} s (last: {last_error!r}).\n"
        f"--- {log_path} ---\n{_tail(log_path)}"
    )


def stop_process(
    process: subprocess.Popen[bytes], timeout_s: float = SERVER_STOP_TIMEOUT_S
) -> None:
    """Terminate ``process``; kill it if it has not exited after ``timeout_s``."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout_s)


def start_streamlit(
    port: int, script: str = "app.py", env: Mapping[str, str] | None = None
) -> StreamlitServer:
    """Start ``streamlit run script`` on 127.0.0.1:``port`` and wait until it is healthy.

    ``env`` adds to (or overrides) this process's environment for the server, e.g. its own
    ``DPDASH_LEDGER``; servers started side by side from threads each get their own.
    """
    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    log_path = OUTPUT_DIR / f"streamlit-{port}.log"
    cmd = [
        sys.executable, "-m", "streamlit", "run", script,
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            cmd,
            cwd=REPO_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(process, url, log_path)
    except BaseException:
        stop_process(process)
        raise
    return StreamlitServer(url=url, port=port, process=process, log_path=log_path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser files with the longest walks first (their ``walk(seconds)`` mark; the others keep their
    order after them), so that the parallel browser run (``--dist loadfile``) ends on short files instead
    of one worker walking a long one alone while the other waits."""

    def longest_first(item: pytest.Item) -> float:
        mark = item.get_closest_marker("walk")
        return -float(mark.args[0]) if mark else 0.0

    items.sort(key=longest_first)


@pytest.fixture(scope="session", autouse=True)
def components_scanned_once() -> None:
    """Streamlit looks through every installed package's metadata for custom components each time an
    AppTest starts (≈ 0.3 s of CPU for this environment's 127 packages); the installed packages do not
    change during a run, so each test process looks once and keeps what it found (no component: dpdash
    installs none)."""
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    if not hasattr(scan, "cache_info"):  # once per process
        manifest_scanner.scan_component_manifests = functools.cache(scan)


@pytest.fixture
def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free when the test started."""
    return find_free_port()


@pytest.fixture(scope="session")
def streamlit_server() -> Iterator[StreamlitServer]:
    """One live ``streamlit run app.py`` for the whole session, always stopped afterwards."""
    server = start_streamlit(find_free_port())
    try:
        yield server
    finally:
        stop_process(server.process)


@dataclass(frozen=True, slots=True)
class NavPage:
    """One ``st.Page`` of app.py: its file, navigation title and URL path ("" for the default page)."""

    script: str
    title: str
    url_path: str


def app_pages() -> list[NavPage]:
    """The pages app.py gives ``st.navigation``, read from its source (so a new page is tested too)."""
    tree = ast.parse((REPO_ROOT / "app.py").read_text())
    pages = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "st.Page":
            script = ast.literal_eval(node.args[0])
            keywords = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            url_path = "" if keywords.get("default") else keywords.get("url_path", Path(script).stem)
            pages.append(NavPage(script, keywords["title"], url_path))
    return pages


@functools.cache
def example_identity() -> str:
    """The content fingerprint of the built-in example (100 000 rows, seeded: the same in every process),
    worked out once per test process (≈ 0.3 s each time)."""
    from dpdash.datasets import synthetic_patients
    from dpdash.ledger import fingerprint

    return fingerprint(synthetic_patients().data)


def own_files_env(folder: Path) -> dict[str, str]:
    """Environment for a server with its own ledger and workspace under ``folder``."""
    return {"DPDASH_LEDGER": str(folder / "ledger.sqlite"), "DPDASH_WORKSPACE": str(folder / "workspace")}


@pytest.fixture
def fresh_servers(tmp_path: Path) -> Iterator[Callable[[int], list[StreamlitServer]]]:
    """Start ``count`` new ``streamlit run app.py`` side by side, each with its own empty ledger and
    workspace (under ``tmp_path``); all are stopped after the test.

    Usage: ``servers = fresh_servers(9)``. Starting them in parallel keeps the wait near one start-up.
    """
    started: list[StreamlitServer] = []

    def start(count: int) -> list[StreamlitServer]:
        envs = [own_files_env(tmp_path / f"server-{len(started) + i}") for i in range(count)]
        with ThreadPoolExecutor(max_workers=count) as pool:
            futures = [pool.submit(start_streamlit, find_free_port(), env=env) for env in envs]
        # Every start has ended here; keep the healthy ones (stopped below), then raise the first error.
        started.extend(f.result() for f in futures if f.exception() is None)
        for future in futures:
            future.result()
        return started[-count:]

    try:
        yield start
    finally:
        for server in started:
            stop_process(server.process)


def budgeted_app(ledger: str | Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """An AppTest of app.py on ``ledger`` (a file or a PostgreSQL URL), its workspace under ``folder``,
    with the built-in example's budget set on the Data page as a person does it."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("DPDASH_LEDGER", str(ledger))
    monkeypatch.setenv("DPDASH_WORKSPACE", str(folder / "workspace"))
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=90)
    at.run()
    at.switch_page("pages/data.py").run()
    at.button(key="data_set_budget").click().run()
    at.button(key="data_set_budget_confirm").click().run()
    return at


#: The password of the role that owns a ``pg_ledger_url`` database (tests check that it never shows).
PG_LEDGER_PASSWORD = "k1ll-me-n0t"


@pytest.fixture
def pg_ledger_url(postgres: PostgresServer) -> Iterator[str]:
    """The URL (with its password) of a fresh PostgreSQL database for a ledger, owned by a role of its own;
    both dropped after the test. The test cluster runs with synchronous_commit off for speed; this database
    commits synchronously, as a real server does, so that a server killed at once keeps every acknowledged
    commit."""
    import uuid

    from psycopg import sql

    name = f"app_{uuid.uuid4().hex[:10]}"
    role, database = sql.Identifier(f"{name}_owner"), sql.Identifier(name)
    postgres.execute(
        sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(role, sql.Literal(PG_LEDGER_PASSWORD))
    )
    postgres.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(database, role))
    postgres.execute(sql.SQL("ALTER DATABASE {} SET synchronous_commit = on").format(database))
    try:
        yield postgres.url(f"{name}_owner", PG_LEDGER_PASSWORD, name)
    finally:
        postgres.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(database))
        postgres.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(role))


@pytest.fixture(scope="session")
def chromium_executable() -> Path:
    """Debian's Chromium; the test fails (never skips) without it, so CI has to prove it."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        pytest.fail(
            f"{CHROMIUM} is missing: run `make chromium` (installs Debian's chromium package). "
            "Browser tests never download a browser.",
            pytrace=False,
        )
    return CHROMIUM


@pytest.fixture(scope="session")
def browser(chromium_executable: Path) -> Iterator[Browser]:
    """A headless Debian Chromium driven by Playwright, shared by the session's tests."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(chromium_executable), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context and page per test (own cookies, own Streamlit session)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """``test-output/screenshots``, created on demand."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    return SCREENSHOT_DIR
