"""Real browser, issue 16: sign-in against a real OpenID Connect provider, and roles enforced on the server.

The test starts ``oidc-provider-mock`` (an OpenID Connect provider: discovery, authorization, token and
JWKS endpoints, signed ID tokens) on 127.0.0.1 with three people, writes a secrets file with Streamlit's
``[auth]`` section pointing at it and a roles file (``DPDASH_ROLES``), and starts dpdash with both; the
survey table (tests/app/test_roles.py) is the workspace's active table, its budget set. Each person signs
in through the provider's own pages in Chromium, in a browser context of their own. Both servers listen
on 127.0.0.1 only and are stopped by the test.

- The owner sees the rows and the true values; the analyst's every websocket message (and every file the
  server sends after the page itself) is searched for the true answers and the rows: none is there. The
  same search finds them in the owner's messages, so it can fail.
- The analyst requests a release (kept in the ledger), the owner approves it in the app (decided, then
  released under the request's uid), the analyst sees the released values.
- A viewer's session is sent the owner's own widget messages for a release, frame for frame: nothing is
  spent. The same frames sent into a second owner session do release (they are a working replay).
- Streamlit's XSRF protection is on (sign-in switches it on): an upload without the token is refused (checked
  in the analyst's session of the first test).
"""

from __future__ import annotations

import contextlib
import json
import re
import struct
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from playwright.sync_api import expect

from dpdash.ledger import Ledger
from tests.app.conftest import (
    IDLE_TIMEOUT_MS,
    OUTPUT_DIR,
    StreamlitServer,
    find_free_port,
    start_streamlit,
    stop_process,
)
from tests.app.test_browser_upload_flow import keyed, wait_until_idle
from tests.app.test_roles import ROWS, seed_survey

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page, WebSocket, WebSocketRoute

pytestmark = [pytest.mark.browser, pytest.mark.walk(75)]

PEOPLE = [
    {"sub": "ann", "email": "ann@example.org", "email_verified": True, "name": "Ann Owner",
     "groups": ["dp-owners"]},
    {"sub": "bob", "email": "bob@example.org", "email_verified": True, "name": "Bob Analyst",
     "groups": ["dp-analysts"]},
    {"sub": "vic", "email": "vic@example.org", "email_verified": True, "name": "Vic Viewer",
     "groups": ["board"]},
]
#: An email as the page writes it (a word joiner after the @, so it is not turned into a link).
EMAIL = "{}@\u2060?example\\.org"
ROLES = """
[groups]
"dp-owners" = "owner"
"dp-analysts" = "analyst"
"board" = "viewer"
"""


@dataclass
class Team:
    """dpdash served with sign-in, the provider it trusts, and the files both use."""

    server: StreamlitServer
    provider: str
    ledger: Path
    seeded: dict[str, Any]


def _wait_for(url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the OpenID Connect provider exited: {tail}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout_s:.0f} s")


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[str]:
    """oidc-provider-mock on 127.0.0.1 (a free port) with the three people as predefined users; stopped
    after the test."""
    port = find_free_port()
    command = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)]
    for person in PEOPLE:
        command += ["--user-claims", json.dumps(person)]
    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    log = OUTPUT_DIR / f"oidc-provider-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(f"{url}/.well-known/openid-configuration", process, log)
        yield url
    finally:
        stop_process(process)


@pytest.fixture
def team(tmp_path: Path, provider: str) -> Iterator[Team]:
    """dpdash with sign-in (a secrets file of its own, never the repository's) and the roles file."""
    port = find_free_port()
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        'cookie_secret = "dpdash-test-cookie-secret-not-for-production"\n'
        'client_id = "dpdash"\n'
        'client_secret = "dpdash-test-client-secret"\n'
        f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n',
        encoding="utf-8",
    )
    roles = tmp_path / "roles.toml"
    roles.write_text(ROLES, encoding="utf-8")
    ledger, workspace = tmp_path / "ledger.sqlite", tmp_path / "workspace"
    seeded = seed_survey(ledger, workspace)
    env = {"DPDASH_LEDGER": str(ledger), "DPDASH_WORKSPACE": str(workspace), "DPDASH_ROLES": str(roles),
           "STREAMLIT_SECRETS_FILES": str(secrets)}  # fmt: skip
    server = start_streamlit(port, env=env)
    try:
        yield Team(server, provider, ledger, seeded)
    finally:
        stop_process(server.process)


@dataclass
class Recorded:
    """What the server sent one browser session: websocket messages, and files fetched after the page."""

    frames: list[bytes] = field(default_factory=list)
    sent: list[bytes] = field(default_factory=list)
    files: list[bytes] = field(default_factory=list)

    def watch(self, page: Page) -> None:
        def on_websocket(ws: WebSocket) -> None:
            ws.on("framereceived", lambda payload: self.frames.append(_bytes(payload)))
            ws.on("framesent", lambda payload: self.sent.append(_bytes(payload)))

        def on_response(response: Any) -> None:
            # Media (downloads, images) and anything else the app serves apart from its own code.
            if "/media/" in response.url or "/_stcore/" in response.url:
                with contextlib.suppress(Exception):  # a redirect or an aborted request has no body
                    self.files.append(response.body())

        page.on("websocket", on_websocket)
        page.on("response", on_response)

    def everything(self) -> bytes:
        return b"\n".join([*self.frames, *self.files])


def _bytes(payload: str | bytes) -> bytes:
    return payload if isinstance(payload, bytes) else payload.encode("utf-8")


def sign_in(browser: Browser, team: Team, subject: str, recorded: Recorded | None = None) -> Page:
    """A new browser context signed in as ``subject`` through the provider's own pages."""
    context: BrowserContext = browser.new_context(viewport={"width": 1400, "height": 2000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    if recorded is not None:
        recorded.watch(page)
    page.goto(team.server.url)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{team.provider}/**")  # the provider's authorization page
    page.get_by_role("button", name=subject, exact=True).click()
    page.wait_for_url(f"{team.server.url}/**")
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Signed in as", timeout=60_000)
    wait_until_idle(page)
    return page


def go(page: Page, title: str, marker: str) -> None:
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click()
    expect(page.get_by_text(marker).first).to_be_visible(timeout=60_000)
    wait_until_idle(page)


def choose_query(page: Page, kind: str) -> None:
    keyed(page, "release_kind").click()
    page.get_by_role("option", name=kind, exact=True).click()
    wait_until_idle(page)
    expect(page.get_by_text("Simulated preview · spends no budget")).to_be_visible()


def truth_patterns(seeded: dict[str, Any]) -> dict[str, re.Pattern[bytes]]:
    """What would give a true value away: each true answer written as a number on its own (not inside a
    longer number or a hash) or as the 8 bytes of a float64 or int64 (Arrow tables, protobuf doubles),
    the mean of age, and the rows' marked notes."""
    data = seeded["data"]
    values = {**seeded["truths"], "mean": float(data["age"].mean())}
    patterns = {"rows": re.compile(rb"secret-row-\d{4}")}
    for name, value in values.items():
        number = float(value)
        texts = {f"{number:.6g}", f"{number:.4g}", repr(number), f"{number:.10g}"}
        if number.is_integer():
            whole = int(number)
            grouped = f"{whole:,}"
            texts |= {str(whole), grouped, grouped.replace(",", " "), grouped.replace(",", "\\,")}
        words = b"|".join(re.escape(t.encode()) for t in sorted(texts, key=len, reverse=True))
        binary = [re.escape(struct.pack("<d", number))]
        if number.is_integer():
            binary.append(re.escape(struct.pack("<q", int(number))))
        patterns[name] = re.compile(rb"(?<![\w.])(?:" + words + rb")(?:\.0+)?(?![\w.])|" + b"|".join(binary))
    return patterns


def leaks(blob: bytes, patterns: dict[str, re.Pattern[bytes]]) -> dict[str, list[bytes]]:
    found = {}
    for name, pattern in patterns.items():
        hits = [blob[max(0, m.start() - 40) : m.end() + 40] for m in pattern.finditer(blob)]
        if hits:
            found[name] = hits[:3]
    return found


def test_an_owner_and_an_analyst_sign_in_and_see_what_their_role_allows(
    browser: Browser, team: Team, screenshot_dir: Path
) -> None:
    patterns = truth_patterns(team.seeded)
    owner_seen, analyst_seen = Recorded(), Recorded()

    # The owner: the rows, and the true value in the preview.
    ann = sign_in(browser, team, "ann", owner_seen)
    sidebar = ann.get_by_test_id("stSidebar")
    expect(sidebar).to_contain_text(re.compile(EMAIL.format("ann")))
    expect(sidebar).to_contain_text(f"{ROWS:,} rows")
    go(ann, "Data", "1. Load a table")
    expect(ann.get_by_text("First 200 rows (owner only)")).to_be_visible()
    go(ann, "Query & release", "Simulated preview · spends no budget")
    true_metric = ann.get_by_test_id("stMetric").filter(has_text="true value (owner only)")
    expect(true_metric).to_contain_text(str(ROWS))

    # The analyst: every page they can open, every kind of preview, and a request.
    bob = sign_in(browser, team, "bob", analyst_seen)
    refuses_an_upload_without_its_xsrf_token(bob, team)
    nav = bob.get_by_test_id("stSidebarNav")
    analyst_pages = ["Home", "Datasets", "Mechanism explorer", "Query & release", "Synthetic table",
                     "Budget", "Planner", "What does ε mean?", "Audit"]  # fmt: skip
    expect(nav.get_by_role("link")).to_have_text(analyst_pages)
    expect(bob.get_by_text("You are an analyst on this table")).to_be_visible()
    go(bob, "Query & release", "Simulated preview · spends no budget")
    for kind in ("Sum", "Mean", "Median / quantile", "Histogram", "Count"):
        choose_query(bob, kind)
    expect(bob.get_by_text("true value (owner only)")).to_have_count(0)
    choose_query(bob, "Sum")
    bob.get_by_label("A note for the owner (optional: what it is for)").fill("annual report")
    bob.get_by_role("button", name="Request this release").click()
    expect(bob.get_by_text("Requested:")).to_be_visible()
    ledger = Ledger(team.ledger)
    (record,) = ledger.datasets()
    (asked,) = ledger.release_requests(record)  # in the ledger every app server shares
    assert (asked.status, asked.request["note"]) == ("pending", "annual report")
    assert re.fullmatch(EMAIL.format("bob").replace("\u2060?", ""), asked.requested_by)
    bob.screenshot(path=screenshot_dir / "sign-in-analyst-request.png", full_page=True)
    for title, marker in (("Budget", "Every accountant, side by side"), ("Datasets", "Work on"),
                          ("Planner", "Planning spends nothing"), ("Audit", "Check a privacy claim"),
                          ("Home", "You are an analyst")):  # fmt: skip
        go(bob, title, marker)
    bob.goto(f"{team.server.url}/data")  # a URL typed: not a page of this role
    expect(bob.get_by_role("dialog")).to_contain_text("Page not found")
    bob.keyboard.press("Escape")
    wait_until_idle(bob)
    expect(bob.get_by_text("1. Load a table")).to_have_count(0)
    expect(bob.get_by_text("You are an analyst on this table")).to_be_visible()  # Home instead

    # The owner approves it in the app: their ordinary release, recorded in the ledger.
    ann.reload()
    expect(ann.get_by_text("Release requests waiting for you (1)")).to_be_visible(timeout=60_000)
    ann.screenshot(path=screenshot_dir / "sign-in-owner-requests.png", full_page=True)
    ann.get_by_role("button", name="Approve and release… (spends budget)").click()
    ann.get_by_role("button", name="Approve: release now").click()
    expect(ann.get_by_text("Request approved and released")).to_be_visible(timeout=60_000)
    assert ledger.status(record).entries == 1
    (done,) = ledger.release_requests(record)
    assert done.uid == asked.uid and done.status == "released"
    assert [a.action for a in ledger.actions(record)][-3:] == ["request", "approve", "release"]

    # The analyst sees the released (noisy) values.
    go(bob, "Query & release", "Simulated preview · spends no budget")
    expect(bob.get_by_text(re.compile("Approved and released by " + EMAIL.format("ann")))).to_be_visible()
    wait_until_idle(bob)
    bob.screenshot(path=screenshot_dir / "sign-in-analyst-approved.png", full_page=True)

    assert analyst_seen.frames, "no websocket message was recorded"
    assert leaks(analyst_seen.everything(), patterns) == {}
    owners = leaks(owner_seen.everything(), patterns)
    assert {"rows", "count"} <= set(owners), owners  # the same search finds them where they are sent
    for page in (ann, bob):
        page.context.close()


def refuses_an_upload_without_its_xsrf_token(page: Page, team: Team) -> None:
    """Streamlit's XSRF protection is on (sign-in switches it on): the session has its token cookie, and
    an upload sent without the token is refused."""
    cookies = {c["name"] for c in page.context.cookies()}
    assert {"_streamlit_xsrf", "_streamlit_user"} <= cookies
    response = page.context.request.put(
        f"{team.server.url}/_stcore/upload_file/any-session/any-file",
        multipart={"file": {"name": "x.csv", "mimeType": "text/csv", "buffer": b"a\n1\n"}},
    )
    assert response.status == 403


@dataclass
class Route:
    """A page's Streamlit websocket passed through the test: its server side (the latest socket), to send
    frames on, and how many complete script runs the server has reported to the page so far."""

    server: WebSocketRoute | None = None
    runs: int = 0


def _replay(route: Route, page: Page, frames: list[bytes]) -> None:
    """Send ``frames`` to the server over this page's own websocket, one run at a time: each frame (a
    widget's rerun request) is followed by the server's report that a script run ended, then by the page
    being idle."""
    assert route.server is not None, "the page opened no websocket"
    for frame in frames:
        runs = route.runs
        route.server.send(frame)
        deadline = time.monotonic() + IDLE_TIMEOUT_MS / 1000
        while route.runs == runs:
            assert time.monotonic() < deadline, "the server reported no script run after a replayed frame"
            page.wait_for_timeout(50)  # lets Playwright deliver the server's messages
        wait_until_idle(page)


def _routed(page: Page) -> Route:
    """Pass the page's websocket through both ways, counting the server's "script finished" messages
    (a rerun cut short for the next one does not count)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    route = Route()
    cut_short = ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN

    def handler(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()  # the page's messages are forwarded to the server as before

        def to_page(message: str | bytes) -> None:
            ws.send(message)
            reported = ForwardMsg.FromString(_bytes(message))
            if reported.WhichOneof("type") == "script_finished" and reported.script_finished != cut_short:
                route.runs += 1

        server.on_message(to_page)
        route.server = server

    page.route_web_socket(re.compile(r".*/_stcore/stream.*"), handler)
    return route


def sign_in_routed(browser: Browser, team: Team, subject: str) -> tuple[Page, Route]:
    context = browser.new_context(viewport={"width": 1400, "height": 2000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    route = _routed(page)
    page.goto(team.server.url)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{team.provider}/**")
    page.get_by_role("button", name=subject, exact=True).click()
    page.wait_for_url(f"{team.server.url}/**")
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Signed in as", timeout=60_000)
    wait_until_idle(page)
    return page, route


def test_a_viewer_cannot_spend_even_by_replaying_the_owners_widget_messages(
    browser: Browser, team: Team
) -> None:
    ledger = Ledger(team.ledger)
    (record,) = ledger.datasets()
    owner_seen = Recorded()
    ann = sign_in(browser, team, "ann", owner_seen)
    go(ann, "Query & release", "Simulated preview · spends no budget")
    before = len(owner_seen.sent)
    ann.get_by_role("button", name="Release… (spends budget)").click()
    ann.get_by_role("button", name="Release now").click()
    expect(ann.get_by_text("Released ·").first).to_be_visible(timeout=60_000)
    wait_until_idle(ann)
    assert ledger.status(record).entries == 1
    clicks = owner_seen.sent[before:]
    assert clicks, "the owner's clicks sent nothing"

    # The control: the same frames in another owner session on the release page do release.
    ann2, route2 = sign_in_routed(browser, team, "ann")
    go(ann2, "Query & release", "Simulated preview · spends no budget")
    _replay(route2, ann2, clicks)
    assert ledger.status(record).entries == 2, "the replay does not work, so it proves nothing"

    # A viewer's session: the same frames, and the release page's URL typed.
    vic, route = sign_in_routed(browser, team, "vic")
    nav = vic.get_by_test_id("stSidebarNav")
    expect(nav.get_by_role("link")).to_have_text(["Home", "Datasets", "Budget", "What does ε mean?"])
    _replay(route, vic, clicks)
    vic.goto(f"{team.server.url}/release")  # a new session on a new websocket (the route follows it)
    expect(vic.get_by_role("dialog")).to_contain_text("Page not found")
    vic.keyboard.press("Escape")
    wait_until_idle(vic)
    _replay(route, vic, clicks)
    expect(vic.get_by_text("Released ·")).to_have_count(0)
    expect(vic.get_by_text("Simulated preview · spends no budget")).to_have_count(0)
    assert ledger.status(record).entries == 2  # nothing more was spent

    # An analyst's session has the release page; the owner's frames still spend nothing there.
    bob, analyst_route = sign_in_routed(browser, team, "bob")
    go(bob, "Query & release", "Simulated preview · spends no budget")
    _replay(analyst_route, bob, clicks)
    expect(bob.get_by_text("Released ·")).to_have_count(0)
    assert ledger.status(record).entries == 2
    for page in (ann, ann2, vic, bob):
        page.context.close()
