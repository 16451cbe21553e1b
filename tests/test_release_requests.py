"""Release requests (dpdash.release_requests): written once, decided once, read back as written."""

from __future__ import annotations

import json
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dpdash.queries import Mean, query_from_dict
from dpdash.release_requests import ReleaseRequest, RequestError, RequestStore

TABLE = "sha256:" + "ab" * 32


def ask(store: RequestStore, **changes: object) -> ReleaseRequest:
    arguments = dict(dataset=TABLE, table_name="survey", query=Mean(column="age", bounds=(0, 100)).to_dict(),
                     mechanism="laplace", epsilon=0.25, delta=0.0, confidence=0.95, postprocess=("round:1",),
                     requested_by="ann@example.org", note="for the annual report")  # fmt: skip
    return store.submit(**{**arguments, **changes})


def test_a_request_reads_back_as_it_was_made(tmp_path: Path) -> None:
    store = RequestStore(tmp_path / "requests")
    asked = ask(store)
    (read, decision), = store.requests(TABLE)
    assert read == asked and decision is None
    assert query_from_dict(dict(read.query)) == Mean(column="age", bounds=(0, 100))
    assert read.request_id == f"dpdash-request:{asked.uid}" and read.postprocess == ("round:1",)
    assert store.requests("sha256:" + "cd" * 32) == []


def test_files_are_private(tmp_path: Path) -> None:
    store = RequestStore(tmp_path / "requests")
    asked = ask(store)
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(store.path / f"{asked.uid}.request.json").st_mode) == 0o600
    assert [p.name for p in store.path.iterdir()] == [f"{asked.uid}.request.json"]  # no temporary left


def test_a_request_is_decided_once(tmp_path: Path) -> None:
    store = RequestStore(tmp_path)
    asked = ask(store)
    decision = store.decide(asked.uid, approved=True, by="owner@example.org", entry="e1")
    assert store.requests(TABLE) == [(asked, decision)]
    with pytest.raises(RequestError, match=r"approved already, by owner@example\.org"):
        store.decide(asked.uid, approved=False, by="other@example.org", reason="no")
    assert store.decision(asked.uid) == decision


def test_owners_deciding_at_once_leave_one_decision(tmp_path: Path) -> None:
    store = RequestStore(tmp_path)
    asked = ask(store)

    def decide(i: int) -> bool:
        try:
            store.decide(asked.uid, approved=i % 2 == 0, by=f"owner{i}@example.org")
        except RequestError:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        wins = list(pool.map(decide, range(16)))
    assert wins.count(True) == 1
    assert store.decision(asked.uid).by == f"owner{wins.index(True)}@example.org"


def test_bad_requests_and_files_are_messages(tmp_path: Path) -> None:
    store = RequestStore(tmp_path)
    with pytest.raises(RequestError, match="epsilon must be a finite number"):
        ask(store, epsilon=float("nan"))
    with pytest.raises(RequestError, match="query spec"):
        ask(store, query={"column": "age"})
    with pytest.raises(RequestError, match="longer than"):
        ask(store, note="x" * 3000)
    with pytest.raises(RequestError, match="no release request"):
        store.decide("0" * 32, approved=True, by="x")
    with pytest.raises(RequestError, match="32 hex digits"):
        store.decide("../../etc/passwd", approved=True, by="x")
    (tmp_path / ("1" * 32 + ".request.json")).write_text("{not json")
    with pytest.raises(RequestError, match="cannot be read"):
        store.requests()
    (tmp_path / ("1" * 32 + ".request.json")).write_text(json.dumps({"format": "other"}))
    with pytest.raises(RequestError, match="not a dpdash release request"):
        store.requests()


def test_an_unwritable_folder_is_a_message(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(RequestError, match="nothing was recorded"):
        ask(RequestStore(tmp_path / "file" / "requests"))
