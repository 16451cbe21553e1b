"""What a budget protects, and which tables it covers: the ledger's schema-2 records.

A budget protects people, so two things are stored with it, append-only like the rest of the ledger:

- the **unit of privacy** it was set for (``RecordedUnit``: the neighbour relation, the most rows per
  person c and the person-id column, plus the table's column names and row count when it was set). It is
  recorded once, with the budget, and never changed: ``Ledger.spend_release`` refuses a release whose
  query states another unit, so a weaker unit can never spend the budget silently;
- the **versions** of the table it covers (``Version``): another content fingerprint whose releases spend
  the same budget ("continue this budget": the same people, a corrected or extended file), and the owner's
  **statements of a different population** (``DistinctPopulation``): a table that looked like a budgeted
  one (same name or same columns) but holds other people, with the owner's reason.

``looks_like`` finds the budgeted datasets a new table could be a version of. This module holds the
queries and the row conversions; ``Ledger`` calls it inside its own transactions; each storage
(``storage``) creates the tables.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dpdash.errors import DPDashError, LedgerError, ParameterError, ParameterTypeError
from dpdash.facts import Facts
from dpdash.ledger.storage.base import Connection

__all__ = [
    "DistinctPopulation",
    "LookAlike",
    "RecordedUnit",
    "Version",
]

@dataclass(frozen=True, slots=True)
class RecordedUnit:
    """The unit of privacy recorded with a dataset's budget, and the table's shape when it was set.

    Attributes:
        unit: neighbour relation, rows per person c and id column (``dpdash.facts.Facts``).
        columns: the table's column names, sorted (``None``: not recorded).
        rows: the table's row count (``None``: not recorded).
        recorded_at: when (UTC, ISO 8601).
    """

    unit: Facts
    columns: tuple[str, ...] | None
    rows: int | None
    recorded_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.unit.to_dict(),
            "columns": None if self.columns is None else list(self.columns),
            "rows": self.rows,
            "recorded_at": self.recorded_at,
        }


@dataclass(frozen=True, slots=True)
class Version:
    """Another table (content fingerprint) whose releases spend a dataset's budget: "continue this budget".

    Attributes:
        fingerprint: the version's content fingerprint.
        dataset: the fingerprint of the dataset whose budget it continues.
        name: its name when it was linked.
        columns, rows: its column names (sorted) and row count, when known.
        reason: the owner's words.
        created_at: when it was linked.
    """

    fingerprint: str
    dataset: str
    name: str
    columns: tuple[str, ...] | None
    rows: int | None
    reason: str
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "name": self.name,
            "columns": None if self.columns is None else list(self.columns),
            "rows": self.rows,
            "reason": self.reason,
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True)
class DistinctPopulation:
    """The owner's statement that a table (``fingerprint``) that looked like a budgeted dataset
    (``looked_like``, its fingerprint) holds other people, so it may get a budget of its own."""

    fingerprint: str
    looked_like: str
    reason: str
    created_at: str


@dataclass(frozen=True, slots=True)
class LookAlike:
    """A budgeted dataset a table resembles without having its content: a possible new version."""

    dataset: Any  # ledger.Dataset (not imported here: the ledger imports this module)
    same_name: bool
    same_columns: bool

    @property
    def why(self) -> str:
        """In words: "the same name and the same columns"."""
        named = (("the same name", self.same_name), ("the same columns", self.same_columns))
        parts = [words for words, yes in named if yes]
        return " and ".join(parts)


# ---- value checks ------------------------------------------------------------------------------------
def columns_tuple(columns: Sequence[str] | None) -> tuple[str, ...] | None:
    """Column names as a sorted tuple of strings (order does not matter to a table's identity)."""
    if columns is None:
        return None
    if isinstance(columns, str) or not hasattr(columns, "__iter__"):
        raise ParameterTypeError(f"columns must be a list of column names, got columns={columns!r}")
    names = [str(c) for c in columns]
    return tuple(sorted(names))


def row_count(rows: object) -> int | None:
    if rows is None:
        return None
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise ParameterError(f"rows must be an integer >= 0, got rows={rows!r}")
    return rows


def unit_of(unit: object) -> Facts:
    """The unit of privacy of ``unit`` (Facts or their dict), without how c is enforced (``unit_only``)."""
    if isinstance(unit, Facts):
        return unit.unit_only
    if isinstance(unit, dict):
        return Facts.from_dict(unit).unit_only
    raise ParameterTypeError(f"unit must be a dpdash.facts.Facts, got unit={unit!r}")


def _columns_json(columns: tuple[str, ...] | None) -> str | None:
    return None if columns is None else json.dumps(list(columns), ensure_ascii=False)


def _columns_from(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    value = json.loads(text)
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise ValueError("columns must be a JSON list of strings")
    return tuple(value)


# ---- rows ----------------------------------------------------------------------------------------------
def read_unit(conn: Connection, dataset_id: int, where: object) -> RecordedUnit | None:
    row = conn.execute(
        "SELECT neighbours, rows_per_person, id_column, columns, n_rows, recorded_at FROM dataset_units "
        "WHERE dataset_id = ?",
        (dataset_id,),
    ).fetchone()
    if row is None:
        return None
    try:
        unit = Facts(neighbours=row[0], rows_per_person=row[1], id_column=row[2])
        return RecordedUnit(unit, _columns_from(row[3]), row[4], row[5])
    except (DPDashError, ValueError, TypeError) as error:
        raise LedgerError(f"the ledger {where} holds an invalid unit of privacy: {error}") from error


def insert_unit(conn: Connection, dataset_id: int, recorded: RecordedUnit) -> None:
    unit = recorded.unit
    conn.execute(
        "INSERT INTO dataset_units (dataset_id, neighbours, rows_per_person, id_column, columns, n_rows, "
        "recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            dataset_id, unit.neighbours.value, unit.rows_per_person, unit.id_column,
            _columns_json(recorded.columns), recorded.rows, recorded.recorded_at,
        ),
    )  # fmt: skip


def resolve(conn: Connection, fingerprint: str) -> str | None:
    """The fingerprint of the dataset whose budget ``fingerprint`` spends: itself if it is a dataset, the
    dataset it is a version of, or ``None``."""
    row = conn.execute("SELECT fingerprint FROM datasets WHERE fingerprint = ?", (fingerprint,)).fetchone()
    if row is not None:
        return str(row[0])
    row = conn.execute(
        "SELECT d.fingerprint FROM dataset_versions v JOIN datasets d ON d.id = v.dataset_id "
        "WHERE v.fingerprint = ?",
        (fingerprint,),
    ).fetchone()
    return None if row is None else str(row[0])


def read_versions(conn: Connection, dataset_id: int, dataset_fp: str) -> list[Version]:
    rows = conn.execute(
        "SELECT fingerprint, name, columns, n_rows, reason, created_at FROM dataset_versions "
        "WHERE dataset_id = ? ORDER BY id",
        (dataset_id,),
    ).fetchall()
    return [Version(r[0], dataset_fp, r[1], _columns_from(r[2]), r[3], r[4], r[5]) for r in rows]


def insert_version(conn: Connection, dataset_id: int, version: Version) -> None:
    conn.execute(
        "INSERT INTO dataset_versions (fingerprint, dataset_id, name, columns, n_rows, reason, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            version.fingerprint, dataset_id, version.name, _columns_json(version.columns), version.rows,
            version.reason, version.created_at,
        ),
    )  # fmt: skip


def read_distinct(conn: Connection, fingerprint: str) -> list[DistinctPopulation]:
    rows = conn.execute(
        "SELECT p.fingerprint, d.fingerprint, p.reason, p.created_at FROM distinct_populations p "
        "JOIN datasets d ON d.id = p.looked_like WHERE p.fingerprint = ? ORDER BY p.id",
        (fingerprint,),
    ).fetchall()
    return [DistinctPopulation(*row) for row in rows]


def insert_distinct(conn: Connection, looked_like_id: int, statement: DistinctPopulation) -> None:
    conn.execute(
        "INSERT INTO distinct_populations (fingerprint, looked_like, reason, created_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (statement.fingerprint, looked_like_id, statement.reason, statement.created_at),
    )


def shapes(conn: Connection) -> list[tuple[int, str, tuple[str, ...] | None]]:
    """(dataset id, a name, its column names) for every dataset and every version: what ``looks_like``
    compares a table with."""
    out: list[tuple[int, str, tuple[str, ...] | None]] = []
    for dataset_id, name, columns in conn.execute(
        "SELECT d.id, d.name, u.columns FROM datasets d LEFT JOIN dataset_units u ON u.dataset_id = d.id"
    ):
        out.append((int(dataset_id), name, _columns_from(columns)))
    for dataset_id, name, columns in conn.execute("SELECT dataset_id, name, columns FROM dataset_versions"):
        out.append((int(dataset_id), name, _columns_from(columns)))
    return out


def unit_mismatch(recorded: Facts, stated: Facts | None) -> str | None:
    """Why a release's unit of privacy is not the recorded one, in words (``None``: it is the same)."""
    if stated is None:
        return "the release does not state its unit of privacy"
    if stated == recorded:
        return None
    parts = []
    if stated.id_column != recorded.id_column:
        parts.append(f"person id column {stated.id_column!r} instead of {recorded.id_column!r}")
    if stated.rows_per_person != recorded.rows_per_person:
        parts.append(
            f"at most {stated.rows_per_person} rows per person instead of {recorded.rows_per_person}"
        )
    if stated.neighbours != recorded.neighbours:
        parts.append(f"neighbours '{stated.neighbours.value}' instead of '{recorded.neighbours.value}'")
    return "its unit of privacy differs from the one recorded with the budget: " + "; ".join(parts)
