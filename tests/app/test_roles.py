"""AppTest (issue 16): sign-in switched on by configuration, and roles enforced on the server per table.

Each test runs app.py (or a page, or a script calling ui.state directly) as a signed-in person: AppTest
seeds ``st.user`` as Streamlit's signed identity cookie would, and ``[auth]`` in its secrets switches
sign-in on. The table is written into the workspace by the test (an upload's bytes, its facts, its budget
in the ledger), with values that appear nowhere else, so a true value on screen can be searched for.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpdash.accounting import Budget
from dpdash.datasets import PublicFacts
from dpdash.errors import BudgetExceededError
from dpdash.facts import Facts
from dpdash.ledger import Ledger, fingerprint
from dpdash.loading import load_table
from dpdash.queries import Count, Sum
from dpdash.release import Release
from dpdash.rounding import published_figures
from dpdash.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
AUTH = {
    "redirect_uri": "http://127.0.0.1:9/oauth2callback",
    "cookie_secret": "a-test-secret-never-used-to-sign",
    "client_id": "dpdash-tests",
    "client_secret": "not-a-secret",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}
ROLES = """
[users]
"ann@example.org" = "owner"
"bob@example.org" = "analyst"
"vic@example.org" = "viewer"

[groups]
"dp-analysts" = "analyst"
"""
ROWS = 1237
UNIT = Facts(rows_per_person=1)


def survey() -> pd.DataFrame:
    """A table whose true answers and rows are easy to search for: 1 237 rows, marked notes."""
    rng = np.random.default_rng(16)
    return pd.DataFrame({
        "person": np.arange(ROWS),
        "age": rng.integers(18, 91, ROWS),
        "note": [f"secret-row-{i:04d}" for i in range(ROWS)],
    })  # fmt: skip


def seed_survey(ledger_path: Path, workspace_path: Path) -> dict[str, object]:
    """The survey as the workspace's active table (age declared 0–100, one row per person) with a budget
    of ε = 1 in the ledger; its identity, its rows and the true count and sum of age."""
    raw = survey().to_csv(index=False).encode()
    data = load_table(raw, "survey.csv").data
    identity = fingerprint(data)
    ws = Workspace(workspace_path)
    ws.store_upload(identity, filename="survey.csv", name="survey", data=raw)
    ws.update(identity, facts=PublicFacts(bounds={"age": (0, 100)}, unit=UNIT))
    ws.set_active(identity)
    budget = Budget(epsilon=1.0, delta=1e-5)
    Ledger(ledger_path).add_dataset(name="survey", fingerprint=identity, budget=budget, unit=UNIT,
                                    columns=list(data.columns), rows=len(data))  # fmt: skip
    truths = {
        "count": Count(facts=UNIT).evaluate(data).values[0],
        "sum": Sum(column="age", bounds=(0, 100), facts=UNIT).evaluate(data).values[0],
    }
    return {"identity": identity, "data": data, "truths": truths}


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """A workspace whose active table is the survey, its budget set; the roles file on."""
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "workspace"))
    roles = tmp_path / "roles.toml"
    roles.write_text(ROLES, encoding="utf-8")
    monkeypatch.setenv("DPDASH_ROLES", str(roles))
    return {**seed_survey(tmp_path / "ledger.sqlite", tmp_path / "workspace"), "roles": roles}


def as_person(email: str | None, *, script: str = APP, groups: tuple[str, ...] = ()) -> AppTest:
    """A run of ``script`` signed in as ``email`` (``None``: not signed in)."""
    at = AppTest.from_file(script, default_timeout=120)
    at.secrets["auth"] = AUTH
    if email is None:
        at.user = {"is_logged_in": False}
    else:
        at.user = {
            "is_logged_in": True, "sub": email.split("@")[0], "email": email, "email_verified": True,
            "groups": list(groups),
        }
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def everything_shown(at: AppTest) -> str:
    """Every element the run sent, as its protobuf text (markdown, metrics, tables, chart specs)."""
    found: list[str] = []

    def walk(node: object) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            found.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(found)


def true_value_texts(value: float) -> list[str]:
    """How a number could be written on the page."""
    number = float(value)
    texts = {f"{number:.6g}", f"{number:.4g}", f"{number:,.0f}", f"{number:g}", repr(number)}
    if number.is_integer():
        texts |= {str(int(number)), f"{int(number):,}", f"{int(number):,}".replace(",", " ")}
    return sorted(texts)


# ---- sign-in ------------------------------------------------------------------------------------------
def test_a_visitor_who_has_not_signed_in_never_reads_the_roles_files_faults(
    served: dict[str, object], caplog: pytest.LogCaptureFixture
) -> None:
    """A roles file with an entry at fault: a visitor before sign-in reads that dpdash cannot be used yet,
    not the file's path or the entry (issue 25, item 12); the server's log has both."""
    Path(str(served["roles"])).write_text('[users]\n"mallory@example.org" = "admin"\n', encoding="utf-8")
    at = as_person(None)
    shown = everything_shown(at).replace("\\", "")
    assert "will find why in its log" in shown
    assert str(served["roles"]) not in shown and "mallory" not in shown and "admin" not in shown
    assert str(served["roles"]) in caplog.text and "admin" in caplog.text


def test_a_visitor_who_has_not_signed_in_sees_only_the_sign_in_page(served: dict[str, object]) -> None:
    at = as_person(None)
    assert [t.value for t in at.title] == ["dpdash"]
    assert [b.label for b in at.button] == ["Sign in"]
    shown = everything_shown(at)
    assert "survey" not in shown and "Budget" not in shown and "secret-row" not in shown
    assert not at.sidebar.markdown


@pytest.mark.parametrize("what", ["no roles file", "roles file without sign-in", "unreadable roles file"])
def test_a_half_done_configuration_stops_every_page(
    what: str,
    served: dict[str, object],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    if what == "no roles file":
        monkeypatch.delenv("DPDASH_ROLES")
        at = as_person("ann@example.org")
        expected = "no roles file says who may do what"
    elif what == "roles file without sign-in":
        # Nobody is signed in: whoever reached the server reads a generic message, and the detail (the
        # roles file's path) is in the server's log (issue 25, item 12).
        at = AppTest.from_file(APP, default_timeout=120)
        at.run()
        expected = "will find why in its log"
        assert str(served["roles"]) not in everything_shown(at).replace("\\", "")
        assert "but sign-in is off" in caplog.text and str(served["roles"]) in caplog.text
    else:
        Path(str(served["roles"])).write_text('[users]\n"ann@example.org" = "admin"\n', encoding="utf-8")
        at = as_person("ann@example.org")
        expected = "the role must be one of"
    assert not at.exception
    assert [t.value for t in at.title] == ["dpdash"]
    assert expected in at.error[0].value.replace("\\", "")
    assert "secret-row" not in everything_shown(at)


def test_without_sign_in_the_local_owner_has_every_page(served: dict[str, object], monkeypatch) -> None:
    monkeypatch.delenv("DPDASH_ROLES")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    for page in ("data", "datasets", "explorer", "release", "budget", "planner", "risk", "audit"):
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception and not at.error, (page, [e.value for e in at.error])
    assert "Signed in" not in everything_shown(at)


# ---- navigation and each page's own check -------------------------------------------------------------
OPENS = {
    "owner": {"data", "datasets", "explorer", "release", "synthetic", "budget", "planner", "risk", "audit"},
    "analyst": {"datasets", "explorer", "release", "synthetic", "budget", "planner", "risk", "audit"},
    "viewer": {"datasets", "budget", "risk"},
}
PERSON = {"owner": "ann@example.org", "analyst": "bob@example.org", "viewer": "vic@example.org"}


@pytest.mark.parametrize("role", list(OPENS))
def test_the_navigation_lists_only_the_pages_a_role_opens(role: str, served: dict[str, object]) -> None:
    at = as_person(PERSON[role])
    for page in OPENS["owner"]:
        if page in OPENS[role]:
            at.switch_page(f"pages/{page}.py").run()
            assert not at.exception and not at.error, (page, [e.value for e in at.error])
        else:
            with pytest.raises(ValueError, match="Could not find a navigation page"):
                at.switch_page(f"pages/{page}.py")


@pytest.mark.parametrize(("role", "page"), [("analyst", "data"), ("viewer", "release"), ("viewer", "planner"),
                                            ("viewer", "audit"), ("viewer", "data")])  # fmt: skip
def test_each_page_checks_the_role_itself(role: str, page: str, served: dict[str, object]) -> None:
    # The page run on its own, as a URL Streamlit routed without the navigation would be.
    at = as_person(PERSON[role], script=str(ROOT / "pages" / f"{page}.py"))
    assert "This page is not for your role" in at.error[0].value
    assert not at.get("file_uploader") and not at.button and not at.get("arrow_data_frame")
    assert "secret-row" not in everything_shown(at)


# ---- an analyst's view: accuracy, never a true value ------------------------------------------------
@pytest.mark.parametrize("kind", ["Count", "Sum", "Mean", "Median / quantile"])
def test_an_analysts_preview_shows_accuracy_and_no_true_value(kind: str, served: dict[str, object]) -> None:
    at = as_person("bob@example.org")
    at.switch_page("pages/release.py").run()
    at.selectbox(key="release_kind").select(kind).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = everything_shown(at)
    assert "Simulated preview · spends no budget" in shown
    for name, truth in served["truths"].items():  # type: ignore[union-attr]
        for text in true_value_texts(truth):
            assert text not in shown, (kind, name, text)
    data = served["data"]
    assert float(data["age"].mean()).__format__(".4g") not in shown
    assert "secret-row" not in shown and "owner only" not in shown
    if kind in ("Count", "Sum"):
        assert at.metric[0].label.startswith("± each value")
    assert [b.label for b in at.button if "Release" in b.label] == []
    assert [b.label for b in at.button] == ["Request this release", "Sign out"]


@pytest.mark.parametrize(("kind", "truth"), [("Count", "count"), ("Sum", "sum")])
def test_the_owners_preview_shows_the_true_value_the_analysts_search_looks_for(
    kind: str, truth: str, served: dict[str, object]
) -> None:
    # The control: the same search finds the truth on the owner's page, so its absence above means something.
    at = as_person("ann@example.org")
    at.switch_page("pages/release.py").run()
    at.selectbox(key="release_kind").select(kind).run()
    shown = everything_shown(at)
    assert any(text in shown for text in true_value_texts(served["truths"][truth])), kind  # type: ignore[index]
    assert "true value (owner only)" in shown


@pytest.mark.parametrize("email", ["bob@example.org", "ann@example.org"])
def test_keys_that_are_not_public_are_the_owners_to_see(email: str, served: dict[str, object]) -> None:
    """Counts per key of the notes (every note is its own key): an analyst sees the threshold and the ±,
    and no key; the owner, as the control, sees the keys found with their chances."""
    at = as_person(email)
    at.switch_page("pages/release.py").run()
    at.selectbox(key="release_kind").select("Counts per key (keys not public)").run()
    at.selectbox(key="release_counts_per_key_keys_not_public_column").select("note").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = everything_shown(at)
    assert "Threshold **τ = " in shown
    if email.startswith("bob"):
        assert "secret-row" not in shown and "owner only" not in shown and "1,237" not in shown
        assert [b.label for b in at.button] == ["Request this release", "Sign out"]
    else:
        assert "secret-row-0001" in shown and "keys found" in shown


@pytest.mark.parametrize("email", ["bob@example.org", "vic@example.org", "ann@example.org"])
def test_the_budget_log_keeps_row_counts_and_locations_for_the_owner(
    email: str, served: dict[str, object], tmp_path: Path
) -> None:
    """The log of who did what says "loaded survey.csv (1237 rows)" and where a source was connected;
    both are the owner's alone (issue 25, item 1). The owner, as the control, reads both."""
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        identity = str(served["identity"])
        ledger.record_action("load", user="ann@example.org", dataset=identity,
                             details={"name": "survey.csv", "rows": ROWS})  # fmt: skip
        source = "postgresql://dbuser@db.internal/hr"
        ledger.record_action("connect", user="ann@example.org", dataset=identity,
                             details={"name": "survey", "source": source})  # fmt: skip
    at = as_person(email)
    at.switch_page("pages/budget.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    shown = everything_shown(at).replace("\\", "")  # Markdown's escapes
    assert "loaded survey.csv" in shown and "connected survey" in shown
    if email.startswith("ann"):
        assert f"({ROWS:g} rows)" in shown and "db.internal" in shown
    else:
        assert not any(text in shown for text in true_value_texts(ROWS)), email
        assert "db.internal" not in shown and "dbuser" not in shown, email


def test_an_analysts_sidebar_and_pages_hide_the_row_count(served: dict[str, object]) -> None:
    at = as_person("bob@example.org")
    for page in ("home", "datasets", "release", "budget", "planner", "audit"):
        at.switch_page(f"pages/{page}.py").run()
        shown = everything_shown(at)
        for text in true_value_texts(ROWS):
            assert text not in shown, (page, text)
    owner = as_person("ann@example.org")
    assert f"{ROWS:,} rows" in everything_shown(owner)  # the owner's sidebar shows it: the search can find it


def test_an_analyst_requests_and_an_owner_approves_through_the_release_path(
    served: dict[str, object],
) -> None:
    bob = as_person("bob@example.org")
    bob.switch_page("pages/release.py").run()
    bob.text_input(key="release_request_note").input("for the annual report")  # sent with the form
    bob.button(key="FormSubmitter:release_request_form-Request this release").click().run()
    assert not bob.exception
    assert "Requested:" in bob.success[0].value
    ledger = Ledger()
    (record,) = ledger.datasets()
    (request,) = ledger.release_requests(record)  # kept in the ledger, not in the workspace
    assert request.status == "pending" and request.requested_by == "bob@example.org"
    assert request.request["note"] == "for the annual report"
    assert not (Path(os.environ["DPDASH_WORKSPACE"]) / "requests").exists()
    assert ledger.status(record).entries == 0  # a request spends nothing

    ann = as_person("ann@example.org")
    ann.switch_page("pages/release.py").run()
    assert any("Release requests waiting for you (1)" in s.value for s in ann.subheader)
    # The owner decides with the true answer in front of them, on demand (the analyst never had it).
    assert not any("True answer now (owner only)" in c.value for c in ann.caption)
    ann.toggle(key=f"request_truth_{request.uid}").set_value(True).run()
    assert any("True answer now (owner only)" in c.value and str(ROWS) in c.value for c in ann.caption)
    ann.button(key=f"request_approve_{request.uid}").click().run()
    ann.button(key=f"request_approve_confirm_{request.uid}").click().run()
    assert not ann.exception and not ann.error, [e.value for e in ann.error]
    assert ledger.status(record).entries == 1
    (first,) = ledger.entries(record)
    assert first.session is not None
    (decided,) = ledger.release_requests(record)
    assert decided.status == "released" and decided.decided_by == "ann@example.org"
    (released_by,) = [a for a in ledger.actions(record) if a.action == "release"]
    assert released_by.details["request_id"] == request.uid
    assert released_by.details["first_entry"] == first.uid
    assert [a.action for a in ledger.actions(record)][-3:] == ["request", "approve", "release"]
    assert any("Request approved and released" in m.value for m in ann.markdown)

    bob.run()
    shown = everything_shown(bob)
    assert "Approved and released by ann" in shown.replace("\\", "").replace("\u2060", "")
    (released,) = ledger.published(record).values()
    shown = published_figures(Release.from_dict(released))  # the published record, rounded to its ±
    assert bob.dataframe[-1].value["released"].tolist() == list(shown.texts)


def test_a_flood_of_requests_is_read_a_page_at_a_time_and_true_answers_on_demand(
    served: dict[str, object],
) -> None:
    """25 waiting requests (issue 25, item 7): the owner's page lists 10 at a time and computes no true
    answer until asked for one; the 21st request of one analyst is refused with a message."""
    from dpdash.ledger.release_requests import MAX_WAITING

    ledger = Ledger()
    (record,) = ledger.datasets()
    planned = {"query": Count(facts=UNIT).to_dict(), "mechanism": "geometric", "epsilon": 0.01}
    for _ in range(MAX_WAITING):
        ledger.request_release(record, planned, user="bob@example.org")
    for _ in range(5):
        ledger.request_release(record, planned, user="carol@example.org")
    bob = as_person("bob@example.org")
    bob.switch_page("pages/release.py").run()
    bob.button(key="FormSubmitter:release_request_form-Request this release").click().run()
    assert not bob.exception and f"already has {MAX_WAITING} release requests waiting" in bob.error[0].value
    assert len(ledger.release_requests(record)) == MAX_WAITING + 5

    ann = as_person("ann@example.org")
    ann.switch_page("pages/release.py").run()

    def shown_uids() -> list[str]:
        text = everything_shown(ann)
        return [r.uid for r in ledger.release_requests(record) if f"request_waiting_{r.uid}" in text]

    assert any("Release requests waiting for you (25)" in s.value for s in ann.subheader)
    first = shown_uids()
    assert len(first) == 10
    assert not any("True answer now" in c.value for c in ann.caption)
    ann.selectbox(key="requests_waiting_page").select(20).run()
    last = shown_uids()
    assert len(last) == 5 and not set(last) & set(first)
    ann.toggle(key=f"request_truth_{last[0]}").set_value(True).run()
    assert [c.value for c in ann.caption if "True answer now" in c.value] == [
        f"True answer now (owner only): count = {ROWS}."
    ]


def test_an_owner_declines_with_a_reason_the_analyst_reads(served: dict[str, object]) -> None:
    bob = as_person("carol@example.org", groups=("dp-analysts",))
    bob.switch_page("pages/release.py").run()
    bob.button(key="FormSubmitter:release_request_form-Request this release").click().run()
    (request,) = Ledger().release_requests(Ledger().datasets()[0])
    ann = as_person("ann@example.org")
    ann.switch_page("pages/release.py").run()
    ann.text_input(key=f"request_reason_{request.uid}").input("ε too large for a count").run()
    ann.button(key=f"request_decline_{request.uid}").click().run()
    assert not ann.exception and not ann.error
    bob.run()
    assert "Declined by ann" in everything_shown(bob).replace("\\", "").replace("\u2060", "")
    assert "ε too large for a count" in everything_shown(bob)
    assert Ledger().status(Ledger().datasets()[0]).entries == 0
    (declined,) = Ledger().release_requests(Ledger().datasets()[0])
    assert (declined.status, declined.decided_by, declined.reason) == (
        "declined", "ann@example.org", "ε too large for a count"
    )


def test_an_approved_request_whose_release_failed_stays_with_the_owner_to_release(
    served: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    bob = as_person("bob@example.org")
    bob.switch_page("pages/release.py").run()
    bob.button(key="FormSubmitter:release_request_form-Request this release").click().run()
    ledger = Ledger()
    (record,) = ledger.datasets()
    (request,) = ledger.release_requests(record)
    tries: list[str | None] = []
    real = Ledger.spend_release

    def refuse_once(self, dataset, release, **kwargs):  # type: ignore[no-untyped-def]
        tries.append(kwargs.get("request_id"))
        if len(tries) == 1:  # the budget was spent elsewhere meanwhile (another app server)
            raise BudgetExceededError("refused: over the budget")
        return real(self, dataset, release, **kwargs)

    monkeypatch.setattr(Ledger, "spend_release", refuse_once)
    ann = as_person("ann@example.org")
    ann.switch_page("pages/release.py").run()
    ann.button(key=f"request_approve_{request.uid}").click().run()
    ann.button(key=f"request_approve_confirm_{request.uid}").click().run()
    assert not ann.exception and any("Not released" in e.value for e in ann.error)
    (approved,) = ledger.release_requests(record)
    assert approved.status == "approved" and ledger.status(record).entries == 0
    bob.run()
    assert "not released yet" in everything_shown(bob)

    ann.run()  # the approval stands: the owner still sees the request, and releases it (no second decision)
    assert any("Release requests waiting for you (1)" in s.value for s in ann.subheader)
    assert "not released yet" in everything_shown(ann)
    ann.button(key=f"request_approve_{request.uid}").click().run()
    ann.button(key=f"request_approve_confirm_{request.uid}").click().run()
    assert not ann.exception and not ann.error, [e.value for e in ann.error]
    assert tries == [request.uid, request.uid]
    (released,) = ledger.release_requests(record)
    assert released.status == "released" and ledger.status(record).entries == 1
    assert [a.action for a in ledger.actions(record)][-3:] == ["request", "approve", "release"]
    ann.run()
    assert not any("waiting for you" in s.value for s in ann.subheader)
    bob.run()
    (published,) = ledger.published(record).values()
    shown = published_figures(Release.from_dict(published))  # the published record, rounded to its ±
    assert bob.dataframe[-1].value["released"].tolist() == list(shown.texts)

# ---- the code that spends or shows a true value checks the role itself ------------------------------
def _call_everything(table_name: str) -> None:
    """Run as a page: call every guarded operation of ui.state and write down which were refused."""
    import pandas as pd
    import streamlit as st

    from dpdash.engines import SourceSpec
    from dpdash.errors import AccessDenied
    from dpdash.queries import Count
    from ui import guarded, ledger_session, state

    table = state.active_table()
    assert table.name == table_name
    record = ledger_session.registered(table)
    frame = pd.DataFrame({"x": [1, 2, 3]})
    calls = {
        "evaluate": lambda: guarded.evaluate(table, Count(facts=table.facts.unit)),
        "sample_rows": lambda: state.sample_rows(table),
        "table_rows": lambda: state.table_rows(table),
        "use_example": lambda: state.use_example("tips"),
        "use_table": lambda: state.use_table("x", "upload 'x.csv'", frame, table.facts, raw=b"x\n1\n2\n3\n"),
        "use_table_types": lambda: state.use_table(table.name, table.source, table.data, table.facts,
                                                   identity=table.identity),
        "use_connection": lambda: state.use_connection(SourceSpec(kind="files", path="/nonexistent"), None),
        "update_table": lambda: state.update_table(table, name="renamed"),
        "forget": lambda: state.forget(table),
        "owner_ledger": lambda: guarded.owner_ledger(table),
        "draw_release": lambda: guarded.draw_release(table, Count(facts=table.facts.unit), __import__(
            "dpdash").Laplace, epsilon=0.1, delta=None, confidence=0.95, postprocess=[]),
        "record_release": lambda: guarded.record_release(table, record, None, "replayed"),
    }
    refused = []
    for name, call in calls.items():
        try:
            call()
        except AccessDenied as error:
            refused.append(name)
            st.caption(f"{name}: {error}")
    st.session_state["refused"] = refused
    st.session_state["rows"] = state.row_count(table)


@pytest.mark.parametrize("email", ["bob@example.org", "vic@example.org"])
def test_every_spend_and_every_true_value_checks_the_role_where_it_is_made(
    email: str, served: dict[str, object]
) -> None:
    at = AppTest.from_function(_call_everything, args=("survey",), default_timeout=120)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": True, "sub": email.split("@")[0], "email": email, "email_verified": True}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["refused"] == [
        "evaluate", "sample_rows", "table_rows", "use_example", "use_table", "use_table_types",
        "use_connection", "update_table", "forget", "owner_ledger", "draw_release", "record_release",
    ]  # fmt: skip
    assert at.session_state["rows"] is None
    assert any(f"{email} is a" in c.value and "may not" in c.value for c in at.caption)
    ledger = Ledger()
    (record,) = ledger.datasets()
    assert ledger.status(record).entries == 0 and record.name == "survey"
    ws = Workspace()
    assert [t.name for t in ws.tables()] == ["survey"] and ws.active_identity() == served["identity"]


def _owner_calls() -> None:
    import streamlit as st

    from dpdash import Laplace
    from dpdash.queries import Count
    from ui import guarded, state

    table = state.active_table()
    count = Count(facts=table.facts.unit)
    st.session_state["done"] = {
        "evaluate": float(guarded.evaluate(table, count).values[0]),
        "sample_rows": len(state.sample_rows(table)),
        "table_rows": len(state.table_rows(table)),
        "row_count": state.row_count(table),
        "draw_release": len(guarded.draw_release(table, count, Laplace, epsilon=0.1, delta=None,
                                               confidence=0.95, postprocess=[]).values),
        "update_table": state.update_table(table, name="survey").name,
    }


def test_the_owners_calls_go_through(served: dict[str, object]) -> None:
    at = AppTest.from_function(_owner_calls, default_timeout=120)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": True, "sub": "ann", "email": "ann@example.org", "email_verified": True}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    expected = {"evaluate": ROWS, "sample_rows": 200, "table_rows": ROWS, "row_count": ROWS,
                "draw_release": 1, "update_table": "survey"}  # fmt: skip
    assert at.session_state["done"] == expected


def test_an_owner_of_one_table_only_declares_facts_but_cannot_load_new_tables(
    served: dict[str, object]
) -> None:
    roles = Path(str(served["roles"]))
    roles.write_text(ROLES + f'\n[[datasets]]\nfingerprint = "{served["identity"]}"\n'
                     'users = { "dora@example.org" = "owner" }\n', encoding="utf-8")  # fmt: skip
    at = as_person("dora@example.org", script=str(ROOT / "pages" / "data.py"))
    assert not at.error, [e.value for e in at.error]
    assert not at.get("file_uploader") and not [b for b in at.button if b.label.startswith("Example")]
    assert "Loading or connecting another table is for owners of dpdash" in everything_shown(at)
    assert "secret-row" in everything_shown(at)  # the owner of this table sees its rows


def test_the_identity_the_data_page_shows_is_the_one_a_fingerprint_rule_matches(
    served: dict[str, object]
) -> None:
    """Copied whole from the Data page into a rule, the identity gives that rule's person the table
    (issue 25, item 5: the page showed 19 characters of another fingerprint)."""
    shown = [code.value for code in as_person("ann@example.org", script=str(ROOT / "pages" / "data.py")).code]
    assert shown == [served["identity"]]
    roles = Path(str(served["roles"]))
    roles.write_text(ROLES + f'\n[[datasets]]\nfingerprint = "{shown[0]}"\n'
                     'users = { "dora@example.org" = "owner" }\n', encoding="utf-8")  # fmt: skip
    at = as_person("dora@example.org", script=str(ROOT / "pages" / "data.py"))
    assert not at.error, [e.value for e in at.error]
    assert "secret-row" in everything_shown(at)  # the rule took effect: dora owns this table


@pytest.mark.parametrize("rule", ["real path", "file name"])
def test_no_spelling_of_a_closed_file_connects_it(
    rule: str, served: dict[str, object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule naming one file (by its path or its file name) makes bob, an owner elsewhere, an analyst on
    it: the file, a bracket glob, a star glob, its folder and a link to it are all refused to him; ann
    connects it (issue 25, item 4: the rule matched the typed spelling only)."""
    from tests.app.test_data_connect import FILES, connect

    folder = tmp_path / "visits"
    folder.mkdir()
    survey().to_parquet(folder / "visits.parquet", index=False)
    (tmp_path / "link.parquet").symlink_to(folder / "visits.parquet")
    named = os.path.realpath(folder / "visits.parquet") if rule == "real path" else "visits.parquet"
    roles = Path(str(served["roles"]))
    roles.write_text(ROLES.replace('"bob@example.org" = "analyst"', '"bob@example.org" = "owner"')
                     + f'\n[[datasets]]\nname = "{named}"\nusers = {{ "bob@example.org" = "analyst" }}\n',
                     encoding="utf-8")  # fmt: skip
    monkeypatch.chdir(tmp_path)
    for spelling in (f"{folder}/visits.parquet", f"{folder}/visits.parque[t]", f"{folder}/*.parquet",
                     str(folder), "visits/../visits/visits.parquet", "link.parquet"):  # fmt: skip
        at = as_person("bob@example.org", script=str(ROOT / "pages" / "data.py"))
        connect(at, FILES, path=spelling)
        errors = " ".join(e.value for e in at.error).replace("\\", "")
        assert "Not connected" in errors and "is an analyst on" in errors, (spelling, errors)
        assert "dpdash_dataset" not in at.session_state or at.session_state["dpdash_dataset"].engine is None
    assert [t.identity for t in Workspace(tmp_path / "workspace").tables()] == [served["identity"]]
    at = as_person("ann@example.org", script=str(ROOT / "pages" / "data.py"))
    connect(at, FILES, path=f"{folder}/*.parquet")
    assert not at.error and at.session_state["dpdash_dataset"].engine is not None


def test_a_file_closed_by_name_stays_closed_to_an_analyst_whatever_spelling_connected_it(
    served: dict[str, object], tmp_path: Path
) -> None:
    """ann connects a closed file through a glob; bob, an analyst at the top level, is not given it (the
    rule names the file by its path; the glob was the table's name) (issue 25, item 4)."""
    from tests.app.test_data_connect import FILES, connect

    folder = tmp_path / "visits"
    folder.mkdir()
    survey().to_parquet(folder / "visits.parquet", index=False)
    roles = Path(str(served["roles"]))
    rule = f'name = "{os.path.realpath(folder / "visits.parquet")}"\ndefault = "none"\n'
    roles.write_text(ROLES + f'\n[[datasets]]\n{rule}users = {{ "ann@example.org" = "owner" }}\n',
                     encoding="utf-8")  # fmt: skip
    at = as_person("ann@example.org", script=str(ROOT / "pages" / "data.py"))
    connect(at, FILES, path=f"{folder}/*.parque[t]")
    connected = at.session_state["dpdash_dataset"]
    assert not at.error and connected.engine is not None and connected.name == "*.parque[t]"
    assert Workspace(tmp_path / "workspace").active_identity() == connected.identity
    bob = as_person("bob@example.org")
    assert bob.session_state["dpdash_dataset"].identity == served["identity"]  # the survey, not the file
    assert "secret-row" not in everything_shown(bob)
    Ledger(tmp_path / "ledger.sqlite").add_dataset(name="clinic visits", fingerprint=connected.identity,
                                                   budget=Budget(epsilon=1.0))  # fmt: skip
    listed = everything_shown(as_person("bob@example.org", script=str(ROOT / "pages" / "datasets.py")))
    assert "survey" in listed and "clinic visits" not in listed  # its budget is not his to see either


def test_an_edited_roles_file_counts_from_the_next_run(served: dict[str, object]) -> None:
    at = as_person("bob@example.org")
    at.switch_page("pages/release.py").run()
    roles = Path(str(served["roles"]))
    roles.write_text(ROLES.replace('"bob@example.org" = "analyst"', '"bob@example.org" = "viewer"'),
                     encoding="utf-8")  # fmt: skip
    os.utime(roles, ns=(1, 1))  # another modification time, whatever the clock's resolution
    assert [t.value for t in at.title] == ["Query & release"] and at.get("form")
    at.run()
    # The release page is no longer bob's: the navigation falls back to Home, which says what a viewer can do.
    assert [t.value for t in at.title] == ["dpdash"] and not at.get("form")
    assert "You are a viewer on this table" in at.info[0].value


def test_a_person_with_no_role_on_any_table_is_told_so(served: dict[str, object]) -> None:
    at = as_person("eve@example.org")
    assert "cannot open a table for you" in at.error[0].value
    assert "eve" in at.error[0].value and "no role" in at.error[0].value
    shown = everything_shown(at)
    assert "secret-row" not in shown and "survey" not in shown.replace("survey\\'", "")
