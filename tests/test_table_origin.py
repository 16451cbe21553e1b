"""The table a reproduction names (``TableOrigin``): checked when it is made, its type changes kept as
pairs, the file the downloads name, and the ledger written as a resolved path or a URL without its
password."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from dpdash.errors import ParameterError, ParameterTypeError
from dpdash.table_origin import TableOrigin


def test_coercions_are_kept_as_pairs_and_written_as_lists() -> None:
    origin = TableOrigin(coercions=[["sex", "categorical"], ("age", "numeric")], lossy=True, table_name="t")
    assert origin.coercions == (("sex", "categorical"), ("age", "numeric"))
    assert origin == TableOrigin(coercions=(("sex", "categorical"), ["age", "numeric"]), lossy=True,
                                 table_name="t")  # fmt: skip
    values = origin.values("sha256:i", "sha256:f")
    assert values["COERCIONS"] == [["sex", "categorical"], ["age", "numeric"]] and values["LOSSY"] is True
    assert (values["TABLE_NAME"], values["IDENTITY"], values["FINGERPRINT"]) == ("t", "sha256:i", "sha256:f")
    assert list(values) == ["LEDGER", "TABLE_NAME", "IDENTITY", "FINGERPRINT", "COERCIONS", "LOSSY"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        origin.lossy = False  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"lossy": 1}, ParameterTypeError, "lossy must be True or False"),
        ({"table_name": 3}, ParameterTypeError, "table_name must be a string"),
        ({"ledger": 3}, ParameterTypeError, "ledger must be a file path"),
        ({"coercions": "ab"}, ParameterTypeError, "coercions must be a sequence"),
        ({"coercions": ["ab"]}, ParameterTypeError, "coercions must be .column, kind. pairs"),
        ({"coercions": [("a",)]}, ParameterTypeError, "coercions must be .column, kind. pairs"),
        ({"coercions": [("a", 1)]}, ParameterTypeError, "coercions must be .column, kind. pairs"),
        ({"coercions": [("a", 'text";import os;"')]}, ParameterError, "kind"),
    ],
)
def test_bad_arguments_are_refused_when_it_is_made(kwargs: dict, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        TableOrigin(**kwargs)


@pytest.mark.parametrize(
    ("name", "file"), [("people.csv", "people.csv"), ("people", "TABLE_FILE"), ("", "TABLE_FILE")]
)
def test_the_file_named_is_the_tables_name_when_it_looks_like_a_file(name: str, file: str) -> None:
    assert TableOrigin(table_name=name).table_file == file


def test_the_ledger_is_a_resolved_path_or_a_url_without_its_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert TableOrigin(ledger="l.sqlite").values("i", "f")["LEDGER"] == str(tmp_path.resolve() / "l.sqlite")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert TableOrigin(ledger=Path("~/x.sqlite")).values("i", "f")["LEDGER"] == str(
        tmp_path.resolve() / "x.sqlite"
    )
    url = TableOrigin(ledger="postgresql://ana:secret@db:5432/dpdash").values("i", "f")["LEDGER"]
    assert url == "postgresql://ana@db:5432/dpdash"
    # None: the ledger Ledger() opens, looked up when the values are written.
    origin = TableOrigin()
    monkeypatch.setenv("DPDASH_LEDGER", str(tmp_path / "default.sqlite"))
    assert origin.values("i", "f")["LEDGER"] == str(tmp_path.resolve() / "default.sqlite")
    monkeypatch.setenv("DPDASH_LEDGER", "postgresql://bo:pw@h/db")
    assert origin.values("i", "f")["LEDGER"] == "postgresql://bo@h/db"
