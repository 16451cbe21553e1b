"""Who did what (issue 16), on every storage: the same tests against an SQLite file and a PostgreSQL database.

Every write records its action, by its ``user``, in its own transaction: exactly when the change is
recorded (and a spend the budget refused as "refused", nothing spent). The log is append-only for any
client of the database, an export carries it under its signature and a trusted import takes it, an older
export without it still imports, and hostile labels and details are refused or kept as plain text.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from dpdash.accounting import BudgetExceededError, LaplaceEvent
from dpdash.errors import DPDashError, ParameterError, ParameterTypeError
from dpdash.facts import Facts
from dpdash.ledger import Action, Ledger, LedgerError
from dpdash.ledger import ledger as ledger_module
from dpdash.ledger import spending as spending_module
from dpdash.ledger.actions import ACTIONS, MAX_DETAILS, MAX_USER, describe
from dpdash.ledger.signing import new_private_key, public_key, sign
from dpdash.queries import Count
from tests.accounting import workers
from tests.accounting.conftest import LEDGER_PASSWORD, make_location
from tests.accounting.test_ledger_contract import (
    FP,
    count_release,
    race,
    raw,
    register,
)

ANA = "ana@example.org"
SCHEMA_5 = ("request_decisions", "release_requests", "actions")
BO = "bo (analyst)"
EVENT = LaplaceEvent(epsilon=0.1, sensitivity=1.0, query="count")




def what(ledger: Ledger, dataset: Any = None) -> list[tuple[str, str | None]]:
    return [(a.action, a.user) for a in ledger.actions(dataset)]


# ---- every write, and only a write that happened -------------------------------------------------------
def test_every_write_records_its_action_by_its_user(ledger: Ledger) -> None:
    ds = register(ledger, user=ANA)
    register(ledger, user=BO)  # already registered: nothing written, no action
    with pytest.raises(ParameterError, match="fixed"):
        register(ledger, epsilon=2.0, user=BO)
    ledger.record_unit(ds, Facts(), user=ANA)
    ledger.record_unit(ds, Facts(), user=BO)  # the same unit again: nothing written
    ledger.link_version(ds, fingerprint="sha256:v2", name="v2", reason="same people", user=ANA)
    ledger.link_version(ds, fingerprint="sha256:v2", name="v2", reason="same people", user=BO)
    ledger.declare_distinct("sha256:other", ds, reason="other people", user=ANA)
    entry = ledger.spend(ds, EVENT, user=BO)
    pieces = ledger.spend_many(ds, [EVENT, EVENT], user=BO, request_id="r1")
    assert ledger.spend_many(ds, [EVENT, EVENT], user=ANA, request_id="r1") == pieces  # sent again
    made = ledger.spend_release(ds, count_release(0.2), user=BO)
    ledger.spend(ds, EVENT)  # no user given: recorded, by no one named
    assert what(ledger, ds) == [
        ("budget", ANA), ("unit", ANA), ("version", ANA), ("distinct", ANA),
        ("release", BO), ("release", BO), ("release", BO), ("release", None),
    ]  # fmt: skip
    log = ledger.actions(ds)
    assert all(isinstance(a, Action) and a.dataset == FP for a in log)
    assert [a.created_at for a in log] == sorted(a.created_at for a in log)
    budget, _, version, distinct, one, two, release, _ = log
    assert budget.details == {"name": "contract", "epsilon": 1.0, "delta": 1e-6, "accountant": "basic",
                              "unit": None}  # fmt: skip
    assert version.details["table"] == "sha256:v2" and distinct.details["table"] == "sha256:other"
    assert one.details == {"query": "count", "mechanism": "Laplace", "entries": 1, "epsilon": 0.1,
                           "delta": 0.0, "first_entry": entry.uid}  # fmt: skip
    assert (two.details["entries"], two.details["first_entry"], two.details["request_id"]) == (
        2,
        pieces[0].uid,
        "r1",
    )
    assert two.details["epsilon"] == pytest.approx(0.2)
    assert release.details["first_entry"] == made[0].uid and release.details["epsilon"] == 0.2
    assert len(ledger.entries(ds)) == 5  # the actions are the writes: nothing else was recorded


def test_a_refused_spend_records_a_refusal_and_spends_nothing(ledger: Ledger) -> None:
    ds = register(ledger, epsilon=0.15)
    with pytest.raises(BudgetExceededError):
        ledger.spend(ds, LaplaceEvent(epsilon=0.2, sensitivity=1.0, query="too much"), user=BO)
    with pytest.raises(BudgetExceededError):
        ledger.spend_release(ds, count_release(0.5), user=BO, request_id="big")
    assert ledger.entries(ds) == [] and ledger.published(ds) == {}
    refusals = ledger.actions(ds)[1:]
    assert [(a.action, a.user) for a in refusals] == [("refused", BO)] * 2
    assert refusals[0].details["query"] == "too much" and "first_entry" not in refusals[0].details
    assert refusals[1].details["request_id"] == "big"
    assert describe(refusals[0]).endswith("over the budget, nothing spent")
    # A spend refused before the budget check (an invalid request id) is no attempt on the budget.
    with pytest.raises(ParameterError):
        ledger.spend(ds, EVENT, user=BO, request_id=" ")
    assert len(ledger.actions(ds)) == 3


def test_the_action_and_its_change_are_one_transaction(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = register(ledger, user=ANA)

    def broken(*args: Any) -> None:
        raise LedgerError("the log could not be written")

    with monkeypatch.context() as patch:  # the action cannot be written: the spend is not recorded either
        patch.setattr(ledger_module, "insert_actions", broken)
        with pytest.raises(LedgerError, match="the log"):
            ledger.spend(ds, EVENT, user=BO)
        with pytest.raises(LedgerError, match="the log"):
            ledger.link_version(ds, fingerprint="sha256:v2", name="v2", reason="same people", user=ANA)
    assert ledger.entries(ds) == [] and ledger.versions(ds) == []
    with monkeypatch.context() as patch:  # the spend fails after its action was written: neither stays
        patch.setattr(spending_module, "_before_commit", lambda: broken())
        with pytest.raises(LedgerError, match="the log"):
            ledger.spend(ds, EVENT, user=BO)
    assert ledger.entries(ds) == [] and what(ledger, ds) == [("budget", ANA)]


def test_ledger_wide_actions_and_the_app_s_own(ledger: Ledger) -> None:
    ds = register(ledger)
    ledger.trust_key(public_key(new_private_key()), "laptop", user=ANA)
    details = {"name": "t.csv", "rows": 3}
    load = ledger.record_action("load", user=BO, dataset="sha256:unbudgeted", details=details)
    ledger.record_action("facts", user=BO, dataset=ds, details={"name": "contract", "unit": "one row"})
    assert what(ledger, ds) == [("budget", None), ("facts", BO)]
    assert ledger.actions("sha256:unbudgeted") == [load]
    assert [a.action for a in ledger.actions()] == ["budget", "trust", "load", "facts"]
    assert ledger.actions()[1].dataset is None and ledger.actions()[1].details["label"] == "laptop"
    assert describe(load) == "loaded t.csv (3 rows)"
    assert describe(load, owner=False) == "loaded t.csv"  # the row count is the owner's alone
    where = dataclasses.replace(load, action="connect", details={"name": "t", "source": "host=db user=hr"})
    assert (describe(where), describe(where, owner=False)) == ("connected t (host=db user=hr)", "connected t")
    # The ledger's own words are refused: the log never says a release or an approval happened when it
    # did not.
    for word in sorted(set(ACTIONS) - {"load", "connect", "facts"}):
        with pytest.raises(ParameterError, match="records its own writes' actions"):
            ledger.record_action(word, user=ANA, dataset=ds)
    with pytest.raises(ParameterTypeError):
        ledger.record_action("load", user=None, dataset=ds)  # type: ignore[arg-type]
    assert len(ledger.actions()) == 4


def test_a_version_s_actions_are_its_dataset_s(ledger: Ledger) -> None:
    ds = register(ledger)
    ledger.link_version(ds, fingerprint="sha256:v2", name="v2", reason="same people")
    ledger.record_action("load", user=BO, dataset="sha256:v2")
    assert [a.action for a in ledger.actions(ds)] == ["budget", "version", "load"]
    assert ledger.actions("sha256:v2") == ledger.actions(ds)


# ---- hostile labels and details ----------------------------------------------------------------------
PLAIN_BUT_HOSTILE = [
    "![x](http://127.0.0.1:9/b.png) <img src=x onerror=alert(1)> **bold** :red[boom] $x$",
    "'); DROP TABLE actions; --",
    'Ωμέγα 名前 🙂 "quoted" \\ back',
    "x" * MAX_USER,
]
REFUSED_LABELS = [
    ("", ParameterError), ("   ", ParameterError), ("x" * (MAX_USER + 1), ParameterError),
    ("line\nbreak", ParameterError), ("nul\x00", ParameterError), ("rtl \u202egnp.exe", ParameterError),
    ("zero\u200bwidth", ParameterError), ("lone \ud800", ParameterError), (b"bytes", ParameterTypeError),
    (42, ParameterTypeError),
]  # fmt: skip
REFUSED_DETAILS = [
    ("not a dict", ParameterTypeError), ([1, 2], ParameterTypeError), ({"x": float("nan")}, ParameterError),
    ({"x": float("inf")}, ParameterError), ({1: "int key"}, ParameterTypeError),
    ({"a": {"b": {"c": {"d": {"e": 1}}}}}, ParameterError), ({"x": "y" * MAX_DETAILS}, ParameterError),
    ({"x": {1, 2}}, ParameterTypeError), ({"x": b"bytes"}, ParameterTypeError),
    ({"x": "lone \udfff"}, ParameterError),
]  # fmt: skip


def test_hostile_labels_and_details_are_refused_or_kept_as_text(ledger: Ledger, location: str | Path) -> None:
    ds = register(ledger)
    for label in PLAIN_BUT_HOSTILE:
        made = ledger.record_action("load", user=label, dataset=ds, details={"name": label[:100]})
        assert made.user == label and made.details == {"name": label[:100]}
    for label, error in REFUSED_LABELS:
        with pytest.raises(error):
            ledger.record_action("load", user=label, dataset=ds)  # type: ignore[arg-type]
        with pytest.raises(error):
            ledger.spend(ds, EVENT, user=label)  # type: ignore[arg-type]
    for details, error in REFUSED_DETAILS:
        with pytest.raises(error):
            ledger.record_action("load", user=ANA, dataset=ds, details=details)  # type: ignore[arg-type]
    assert [a.user for a in ledger.actions(ds)[1:]] == PLAIN_BUT_HOSTILE  # read back exactly
    assert ledger.entries(ds) == []
    # An action whose details a plain client broke is a message, not a crash (there is no UPDATE to do
    # it: an INSERT as another client would).
    conn = raw(location)
    try:
        mark = "?" if isinstance(location, Path) else "%s"
        conn.execute(
            f"INSERT INTO actions (uid, created_at, who, what, fingerprint, details) VALUES "
            f"({mark}, {mark}, {mark}, {mark}, {mark}, {mark})",
            ("broken", "now", ANA, "load", FP, "[not json"),
        )
    finally:
        conn.close()
    with pytest.raises(LedgerError, match="unreadable action broken"):
        ledger.actions(ds)


def test_one_person_may_have_at_most_max_waiting_requests_on_a_table(ledger: Ledger) -> None:
    """A flood of requests is refused at the cap, with a message and nothing recorded (issue 25, item 7);
    others may still ask, and a decision makes room."""
    from dpdash.ledger.release_requests import MAX_WAITING

    ds = register(ledger)
    planned = {"query": Count().to_dict(), "mechanism": "geometric", "epsilon": 0.1}
    made = [ledger.request_release(ds, planned, user=BO) for _ in range(MAX_WAITING)]
    with pytest.raises(ParameterError, match=f"already has {MAX_WAITING} release requests waiting"):
        ledger.request_release(ds, planned, user=BO)
    assert len(ledger.release_requests(ds)) == MAX_WAITING
    assert [w for w, _ in what(ledger, ds)].count("request") == MAX_WAITING
    ledger.request_release(ds, planned, user=ANA)  # someone else is not held up
    ledger.decide_request(made[0].uid, False, user=ANA, reason="no")
    ledger.request_release(ds, planned, user=BO)  # a decision makes room
    assert len(ledger.release_requests(ds, "pending")) == MAX_WAITING + 1  # 20 of BO's, 1 of ANA's


def test_text_is_never_compared_with_the_ledger_s_password(pg_url: str) -> None:
    """(PostgreSQL: an SQLite ledger has no password.) A label, a detail, a request's note or a decision's
    reason that holds the ledger's password is recorded like any other text: refusing it would tell whoever
    writes a note whether they guessed the password (issue 25, item 8), and a short password would block
    every label that contains it."""
    ledger = Ledger(pg_url)
    ds = register(ledger)
    ledger.record_action("load", user=f"me {LEDGER_PASSWORD}", dataset=ds)
    ledger.record_action("load", user=ANA, dataset=ds, details={"note": [f"is {LEDGER_PASSWORD}"]})
    planned = {"query": Count().to_dict(), "mechanism": "geometric", "epsilon": 0.1}
    asked = ledger.request_release(ds, {**planned, "note": f"is it {LEDGER_PASSWORD}?"}, user=ANA)
    decided = ledger.decide_request(asked.uid, False, user=ANA, reason=LEDGER_PASSWORD)
    assert decided.status == "declined"
    assert [w for w, _ in what(ledger, ds)] == ["budget", "load", "load", "request", "decline"]
    ledger.close()


# ---- export and import --------------------------------------------------------------------------------
def _reseal(document: dict[str, Any], key: str | None) -> str:
    document = {k: v for k, v in document.items() if k != "signature"}
    return json.dumps(document if key is None else sign(document, key))


@pytest.mark.parametrize(("source_kind", "target_kind"), [("sqlite", "postgresql"), ("postgresql", "sqlite")])
def test_an_export_carries_the_actions_and_a_trusted_import_takes_them(
    source_kind: str, target_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    with Ledger(make_location(source_kind, request, tmp_path)) as source:
        ds = register(source, user=ANA)
        source.link_version(ds, fingerprint="sha256:v2", name="v2", reason="same people", user=ANA)
        source.record_action("load", user=BO, dataset="sha256:v2", details={"name": "v2.csv"})
        source.spend_release(ds, count_release(), user=BO)
        text, key = source.export_json(ds, user=ANA), source.public_key
        exported = source.actions(ds)
    document = json.loads(text)
    assert document["schema_version"] == 4
    assert [a["action"] for a in document["actions"]] == ["budget", "version", "load", "release", "export"]
    assert [a["uid"] for a in document["actions"]] == [a.uid for a in exported]
    assert exported[-1].details == {"entries": 1, "signed": True}
    with Ledger(make_location(target_kind, request, tmp_path)) as target:
        target.trust_key(key)
        report = target.import_json(text, user=BO)
        assert (report.actions, report.actions_left) == (5, 0)
        taken = target.actions(ds)
        assert taken[:5] == exported  # the same uids, times, users, words and details
        assert (taken[5].action, taken[5].user) == ("import", BO)
        assert taken[5].details == {"added": 1, "present": 0, "signed_by": key, "trusted": True, "values": 1,
                                    "actions": 5}  # fmt: skip
        again = target.import_json(text)  # nothing twice; the second import is itself an action
        assert again.actions == 5 and [a.action for a in target.actions(ds)][5:] == ["import", "import"]
        assert len(target.actions(ds)) == 7


def test_an_untrusted_export_s_actions_are_not_taken(ledger: Ledger, tmp_path: Path) -> None:
    ds = register(ledger, user=ANA)
    with Ledger(tmp_path / "source.sqlite") as source:
        register(source, user="mallory")
        source.spend(ds, EVENT, user="mallory")
        document = json.loads(source.export_json(ds, user="mallory"))
    for key in (None, new_private_key()):  # unsigned, or signed by a key this ledger does not trust
        report = ledger.import_json(_reseal(document, key), user=BO)
        assert (report.actions, report.actions_left, report.trusted) == (0, 3, False)
    assert what(ledger, ds) == [("budget", ANA), ("import", BO), ("import", BO)]
    assert len(ledger.entries(ds)) == 1  # its release was added (an import only ever adds spends)


def test_the_signature_covers_the_actions(ledger: Ledger, tmp_path: Path) -> None:
    with Ledger(tmp_path / "source.sqlite") as source:
        ds = register(source, user=ANA)
        source.spend(ds, EVENT, user=BO)
        document, key = json.loads(source.export_json(ds)), source.public_key
    ledger.trust_key(key)
    edited = json.loads(json.dumps(document))
    edited["actions"][1]["user"] = "someone else"
    with pytest.raises(LedgerError, match="changed after it was signed"):
        ledger.import_json(json.dumps(edited))
    for broken, message in [
        ({**document, "actions": "no"}, "'actions' is not a list"),
        ({**document, "actions": [{**document["actions"][0], "action": "delete"}]}, "action 0 .* invalid"),
        ({**document, "actions": [{**document["actions"][0], "user": "a\nb"}]}, "action 0 .* invalid"),
        ({**document, "actions": document["actions"] * 2}, "appears twice"),
    ]:
        with pytest.raises(LedgerError, match=message):
            ledger.import_json(_reseal(broken, new_private_key()))
    # A trusted signer's actions must be about the exported dataset (or a version of it).
    stray = {**document["actions"][0], "uid": uuid.uuid4().hex, "dataset": "sha256:another"}
    with Ledger(tmp_path / "trusting.sqlite") as trusting:
        signer = new_private_key()
        trusting.trust_key(public_key(signer))
        with pytest.raises(LedgerError, match="actions about other tables"):
            trusting.import_json(_reseal({**document, "actions": [*document["actions"], stray]}, signer))
        assert trusting.datasets() == []
    assert ledger.datasets() == []


def test_an_older_export_without_actions_still_imports(ledger: Ledger, tmp_path: Path) -> None:
    with Ledger(tmp_path / "source.sqlite") as source:
        ds = register(source)
        source.spend_release(ds, count_release())
        document = json.loads(source.export_json(ds))
    older = {k: v for k, v in document.items() if k != "actions"}
    older["schema_version"] = 3
    signer = new_private_key()  # an older dpdash's ledger, trusted here
    ledger.trust_key(public_key(signer))
    report = ledger.import_json(_reseal(older, signer))
    assert (report.added, report.values, report.actions, report.actions_left) == (1, 1, 0, 0)
    assert [a.action for a in ledger.actions(ds)] == ["import"]


# ---- the schema -----------------------------------------------------------------------------------------
def test_an_older_ledger_gets_the_log_when_opened(location: str | Path) -> None:
    with Ledger(location) as ledger:
        ds = register(ledger)
    conn = raw(location)
    try:
        for table in SCHEMA_5:
            conn.execute(f"DROP TABLE {table}")
        conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    finally:
        conn.close()
    with Ledger(location) as ledger:
        assert ledger.actions() == [] and ledger.entries(ds) == []
        ledger.spend(ds, EVENT, user=ANA)
        planned = {"query": Count().to_dict(), "mechanism": "geometric", "epsilon": 0.1}
        asked = ledger.request_release(ds, planned, user=BO)
        ledger.decide_request(asked.uid, False, user=ANA)
        assert what(ledger) == [("release", ANA), ("request", BO), ("decline", ANA)]
    conn = raw(location)
    error = sqlite3.DatabaseError if isinstance(location, Path) else psycopg.Error
    try:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("6",)
        for table in SCHEMA_5:
            with pytest.raises(error, match=f"append-only: {table} cannot be deleted"):
                conn.execute(f"DELETE FROM {table}")
        with pytest.raises(error, match="append-only: actions cannot be changed"):
            conn.execute("UPDATE actions SET who = 'someone else'")
    finally:
        conn.close()


# ---- many processes at once ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def context() -> multiprocessing.context.BaseContext:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["dpdash.accounting", "tests.accounting.workers"])
    return ctx


def test_racing_spenders_leave_one_action_per_attempt(location: str | Path, context: Any) -> None:
    """8 processes each try ε = 0.3 against ε = 1 at once: 3 releases, 5 refusals, and the log says so."""
    with Ledger(location) as ledger:
        register(ledger)
    outcomes = race(context, workers.spend_once_as, location, 0.3, BO, processes=8)
    with Ledger(location) as ledger:
        entries, log = ledger.entries(FP), ledger.actions(FP)[1:]
    assert sum(outcomes) == len(entries) == 3
    assert sorted(a.action for a in log) == ["refused"] * 5 + ["release"] * 3
    assert {a.details["first_entry"] for a in log if a.action == "release"} == {e.uid for e in entries}
    assert {a.user for a in log} == {BO}


def test_a_message_for_a_user_on_a_ledger_that_cannot_keep_the_log(tmp_path: Path) -> None:
    """An SQLite ledger from before the log that cannot be written reads, and a write naming its user
    says why it cannot be recorded (what any write there would do)."""
    from tests.accounting.test_ledger_file import unwritable

    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        ds = register(ledger)
    conn = sqlite3.connect(path)
    for table in SCHEMA_5:
        conn.execute(f"DROP TABLE {table}")
    conn.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with unwritable(path), Ledger(path) as ledger:
        assert ledger.actions(ds) == [] and ledger.entries(ds) == []
        with pytest.raises(DPDashError, match=r"cannot record who did it: .* read-only at schema 4"):
            ledger.spend(ds, EVENT, user=ANA)
        with pytest.raises(DPDashError, match=r"cannot record who did it: .* read-only at schema 4"):
            ledger.record_action("load", user=ANA, dataset=ds)
        assert json.loads(ledger.export_json(ds))["actions"] == []  # exported without a log to record in
