"""Two app servers sharing one PostgreSQL ledger, with 20 processes releasing through them at once
(issue 16): never more than the budget, exactly as many releases as fit, and a clear refusal (no
traceback) for the others.

One browser session records what a person's release sends (the release page's runs, then "Release…" and
"Release now"); 20 processes then each open their own session on one of the two servers without a browser
(``ws_client``), replay those frames up to the last, and send the last one together.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Empty
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import Browser, WebSocket, expect

from dpdash.accounting import Budget
from dpdash.datasets import load_example
from dpdash.ledger import Ledger, fingerprint
from tests.app import ws_client
from tests.app.conftest import StreamlitServer, find_free_port, start_streamlit, stop_process, wait_until_idle

if TYPE_CHECKING:
    pass

pytestmark = pytest.mark.browser

PROCESSES = 20
BUDGET = 8.5  # ε, under basic composition: k releases of ε₁ (the release page's default) spend k·ε₁


@pytest.fixture
def two_servers(pg_ledger_url: str, tmp_path: Path) -> Iterator[list[StreamlitServer]]:
    """Two ``streamlit run app.py`` on the same PostgreSQL ledger, each with its own workspace."""
    envs = [{"DPDASH_LEDGER": pg_ledger_url, "DPDASH_WORKSPACE": str(tmp_path / f"ws-{i}")} for i in range(2)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(start_streamlit, find_free_port(), env=env) for env in envs]
    servers = [f.result() for f in futures if f.exception() is None]
    try:
        for future in futures:
            future.result()
        yield servers
    finally:
        for server in servers:
            stop_process(server.process)


def collect(queue: Any, children: list[Any], timeout_s: float = 300.0) -> Any:
    """The next report on ``queue``; fails at once if a child died without one."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            return queue.get(timeout=2)
        except Empty:
            dead = [c.exitcode for c in children if c.exitcode not in (None, 0)]
            assert not dead, f"a client process died (exit codes {dead}); see its traceback above"
    raise AssertionError(f"no report within {timeout_s:.0f} s")


def test_twenty_processes_release_through_two_servers_sharing_postgresql(
    browser: Browser, two_servers: list[StreamlitServer], pg_ledger_url: str
) -> None:
    identity = fingerprint(load_example("patients").data)  # the built-in example every session opens
    with Ledger(pg_ledger_url) as ledger:
        ledger.add_dataset(name="patients", fingerprint=identity, budget=Budget(BUDGET), accountant="basic")

    # A person's release on the first server, recorded.
    sent: list[bytes] = []

    def on_websocket(ws: WebSocket) -> None:
        ws.on("framesent", lambda payload: isinstance(payload, bytes) and sent.append(payload))

    context = browser.new_context(viewport={"width": 1400, "height": 2000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.on("websocket", on_websocket)
    page.goto(f"{two_servers[0].url}/release")
    expect(page.get_by_text("Simulated preview · spends no budget").first).to_be_visible(timeout=90_000)
    wait_until_idle(page)
    page.get_by_role("button", name="Release… (spends budget)").click()
    page.get_by_role("button", name="Release now").click()
    expect(page.get_by_text("Released ·").first).to_be_visible(timeout=90_000)
    wait_until_idle(page)
    context.close()
    with Ledger(pg_ledger_url) as ledger:
        (first,) = ledger.entries(identity)
    each = first.event.epsilon
    fit = math.floor(BUDGET / each + 1e-9)  # releases of ε₁ that fit, the recorded one included
    assert 2 <= fit <= PROCESSES - 2, f"ε₁ = {each} leaves too few or too many to race for"

    # 20 processes, 10 per server, each in a session of its own; the last frame ("Release now") together.
    mp = multiprocessing.get_context("forkserver")  # children start from a process that imported these
    mp.set_forkserver_preload(["tests.app.ws_client", "streamlit.proto.ForwardMsg_pb2", "websockets"])
    ready, results, start = mp.Queue(), mp.Queue(), mp.Event()
    children = [
        mp.Process(
            target=ws_client.release_through,
            args=(two_servers[i % 2].url, sent, ready, start, results),
        )
        for i in range(PROCESSES)
    ]
    for child in children:
        child.start()
    try:
        arrived = [collect(ready, children) for _ in children]
        start.set()
        outcomes = [collect(results, children) for _ in children]
    finally:
        for child in children:
            child.join(timeout=60)
            if child.is_alive():
                child.kill()
    assert {url for _, url in arrived} == {server.url for server in two_servers}
    assert all(child.exitcode == 0 for child in children)
    assert not [text for _, crashed, text in outcomes if crashed], "a session showed a traceback"
    released = [o for o in outcomes if o[0] == "released"]
    refused = [o for o in outcomes if o[0] == "not released"]
    with Ledger(pg_ledger_url) as ledger:
        entries = ledger.entries(identity)
        spent = ledger.spent(identity).epsilon
    assert len(entries) == fit and len(released) == fit - 1
    assert spent == pytest.approx(fit * each, rel=1e-12) and spent <= BUDGET
    assert len(refused) == PROCESSES - (fit - 1)
    for _, _, text in refused:  # each refused session says why, in words
        assert "budget" in text.lower(), text[-600:]
