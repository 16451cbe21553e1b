"""The workspace: stored uploads and facts come back exactly, files are private and written atomically,
bad records are messages, "forget" deletes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from dpdash.datasets import PublicFacts
from dpdash.errors import ParameterError
from dpdash.facts import Facts, GroupBounds
from dpdash.loading import MAX_UPLOAD_BYTES
from dpdash.workspace import (
    Workspace,
    WorkspaceError,
    default_workspace_path,
    facts_from_dict,
    facts_to_dict,
)

KEY = "sha256:" + "ab" * 32
OTHER = "sha256:" + "cd" * 32
FACTS = PublicFacts(
    bounds={"age": (18, 90)},
    categories={"city": ("Oslo", "Bergen"), "smoker": (True, False), "code": (1, 2)},
    unit=Facts(neighbours="substitute", rows_per_person=5, id_column="person_id"),
    notes={"age": "adults only, by the survey's design"},
)


def test_facts_round_trip_through_json() -> None:
    assert facts_from_dict(facts_to_dict(FACTS)) == FACTS
    assert facts_from_dict({}) == PublicFacts()
    with pytest.raises(ParameterError, match="lower < upper"):
        facts_from_dict({"bounds": {"age": [5, 1]}})


def test_per_group_bounds_round_trip_and_bad_ones_are_refused() -> None:
    """k and m of a categorical column come back after a reload or a restart (the workspace's JSON)."""
    facts = PublicFacts(categories=FACTS.categories, unit=FACTS.unit, group_bounds={"city": (2, 1)})
    data = json.loads(json.dumps(facts_to_dict(facts)))
    assert data["group_bounds"] == {"city": [2, 1]}
    back = facts_from_dict(data)
    assert back == facts and back.bounds_for_groups("city") == GroupBounds(2, 1)
    with pytest.raises(ParameterError, match="declare their categories first"):
        facts_from_dict({**data, "group_bounds": {"age": [2, 1]}})
    with pytest.raises(ParameterError, match="max_groups must be an integer >= 1"):
        facts_from_dict({**data, "group_bounds": {"city": [0, 1]}})


def test_an_upload_is_kept_with_its_choices_and_comes_back(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws.store_upload(KEY, filename="people.csv", name="people.csv", data=b"person_id,age\n1,30\n")
    ws.update(KEY, name="Clinic A", facts=FACTS, coercions=[("age", "text")], lossy=True)
    ws.set_active(KEY)
    again = Workspace(tmp_path / "ws").active()  # a new process, say
    assert again is not None
    assert (again.name, again.filename, again.coercions, again.lossy) == (
        "Clinic A", "people.csv", (("age", "text"),), True,
    )  # fmt: skip
    assert again.facts == FACTS and again.example is None
    assert Workspace(tmp_path / "ws").source_bytes(KEY) == b"person_id,age\n1,30\n"
    # The same content uploaded again keeps its name and facts, and starts without type changes.
    ws.store_upload(KEY, filename="people.parquet", name="people.parquet", data=b"PAR1")
    kept = ws.table(KEY)
    assert kept is not None and (kept.name, kept.facts, kept.coercions) == ("Clinic A", FACTS, ())


def test_files_are_private_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws.store_upload(KEY, filename="a.csv", name="a", data=b"x\n1\n")
    ws.set_active(KEY)
    for path in [tmp_path / "ws", *(tmp_path / "ws").rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path
        assert not path.name.startswith(".tmp-")


def test_examples_are_kept_without_bytes(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws.store_example(OTHER, example="tips", name="Tips", facts=FACTS)
    assert ws.table(OTHER).example == "tips"
    assert not (tmp_path / "ws" / "tables" / ("cd" * 32) / "source.bin").exists()


def test_forget_deletes_the_files_and_the_active_pointer(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    ws.store_upload(KEY, filename="a.csv", name="a", data=b"x\n1\n")
    ws.store_upload(OTHER, filename="b.csv", name="b", data=b"y\n2\n")
    ws.set_active(KEY)
    assert ws.forget(KEY) is True
    assert ws.table(KEY) is None and ws.active() is None
    assert [t.identity for t in ws.tables()] == [OTHER]
    assert ws.forget(KEY) is False


def test_bad_input_is_a_message_and_changes_nothing(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    with pytest.raises(ParameterError, match="upload limit"):
        ws.store_upload(KEY, filename="a.csv", name="a", data=b"x" * (MAX_UPLOAD_BYTES + 1))
    assert ws.table(KEY) is None
    with pytest.raises(ParameterError, match="sha256"):
        ws.table("../../etc/passwd")
    ws.store_upload(KEY, filename="a.csv", name="a", data=b"x\n1\n")
    record = tmp_path / "ws" / "tables" / ("ab" * 32) / "table.json"
    record.write_text("{not json")
    with pytest.raises(WorkspaceError, match="cannot be read"):
        ws.table(KEY)
    assert ws.tables() == []  # an unreadable record is skipped in the list
    with pytest.raises(WorkspaceError, match="not in the workspace"):
        ws.update(OTHER, name="x")


def test_an_unwritable_place_is_a_message(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(WorkspaceError, match="cannot be written"):
        Workspace(blocker / "ws").store_upload(KEY, filename="a.csv", name="a", data=b"x\n1\n")


def test_the_default_is_beside_the_ledger_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DPDASH_WORKSPACE", raising=False)
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "ledger.sqlite"))
    assert default_workspace_path() == tmp_path / "ledger.sqlite.workspace"
    monkeypatch.setenv("DPDASH_WORKSPACE", str(tmp_path / "elsewhere"))
    assert default_workspace_path() == tmp_path / "elsewhere"
