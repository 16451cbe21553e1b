"""``Ledger``'s unit of privacy and the lineage of its budgets (schema 2, ``versions``): the unit recorded
with a budget, the versions of a table that continue it, the statements that a table holds other people,
and the tables that look like a budgeted one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpdash.errors import (
    ParameterError,
)
from dpdash.ledger.actions import (
    short,
)
from dpdash.ledger.records import (
    DATASET_COLUMNS,
    Dataset,
)
from dpdash.ledger.records import now as _now
from dpdash.ledger.records import text as _text
from dpdash.ledger.versions import (
    DistinctPopulation,
    LookAlike,
    RecordedUnit,
    Version,
    columns_tuple,
    insert_distinct,
    insert_unit,
    insert_version,
    read_distinct,
    read_unit,
    read_versions,
    resolve,
    row_count,
    shapes,
    unit_of,
)

__all__ = ["Lineage"]


class Lineage:
    """``Ledger``'s unit of privacy, versions and distinct populations (see the module docstring)."""

    # ---- the unit of privacy and versions (schema 2; see ``versions``) ---------------------------
    def unit(self, dataset: Dataset | str) -> RecordedUnit | None:
        """The unit of privacy recorded with the dataset's budget (``None``: none was recorded)."""
        ds = self.dataset(dataset)
        if not self._v2:
            return None
        with self._reading() as conn:
            return read_unit(conn, self._dataset_id(conn, ds.fingerprint), self._where)

    def record_unit(
        self,
        dataset: Dataset | str,
        unit: Any,
        *,
        columns: Sequence[str] | None = None,
        rows: int | None = None,
        user: str | None = None,
    ) -> RecordedUnit:
        """Record (once) the unit of privacy of a dataset registered without one; from then on it is locked.

        Recording the same unit again returns the record; another unit is refused (a unit is never changed).
        A "unit" action by ``user`` is recorded with it (``actions``).
        """
        ds = self.dataset(dataset)
        user = self._user(user)
        self._need_v2("record the unit of privacy")
        recorded = RecordedUnit(unit_of(unit), columns_tuple(columns), row_count(rows), _now())
        with self._transaction("record the unit of privacy") as conn:
            self._store.lock_ledger(conn)
            dataset_id = self._dataset_id(conn, ds.fingerprint)
            have = read_unit(conn, dataset_id, self._where)
            if have is not None:
                if have.unit != recorded.unit:
                    raise ParameterError(
                        f"dataset {ds.name!r} already has its unit of privacy recorded "
                        f"({have.unit.describe()}); it cannot be changed"
                    )
                return have
            insert_unit(conn, dataset_id, recorded)
            self._log(conn, "unit", user, ds.fingerprint, {"unit": short(recorded.unit.describe(), 300)})
        return recorded

    def versions(self, dataset: Dataset | str) -> list[Version]:
        """The other tables (fingerprints) whose releases spend this dataset's budget, oldest first."""
        ds = self.dataset(dataset)
        if not self._v2:
            return []
        with self._reading() as conn:
            return read_versions(conn, self._dataset_id(conn, ds.fingerprint), ds.fingerprint)

    def link_version(
        self,
        dataset: Dataset | str,
        *,
        fingerprint: str,
        name: str,
        reason: str,
        columns: Sequence[str] | None = None,
        rows: int | None = None,
        user: str | None = None,
    ) -> Version:
        """Continue ``dataset``'s budget for another table: releases from ``fingerprint`` spend it.

        For a new version of the same people (a corrected or extended file). Recorded for good, with a
        "version" action by ``user`` (``actions``); a fingerprint that already has a budget (its own, or as
        a version) is refused, since its releases already count somewhere.
        """
        ds = self.dataset(dataset)
        user = self._user(user)
        self._need_v2("link a version")
        fingerprint = _text(fingerprint, "fingerprint")
        version = Version(
            fingerprint, ds.fingerprint, _text(name, "name"), columns_tuple(columns), row_count(rows),
            _text(reason, "reason"), _now(),
        )  # fmt: skip
        with self._transaction("link the version") as conn:
            self._store.lock_ledger(conn)
            owner = resolve(conn, fingerprint)
            if owner is not None:
                if owner == ds.fingerprint and fingerprint != ds.fingerprint:
                    found = [v for v in read_versions(conn, self._dataset_id(conn, owner), owner)]
                    return next(v for v in found if v.fingerprint == fingerprint)
                raise ParameterError(
                    f"the table {fingerprint} already has a budget (dataset {owner}); it cannot continue "
                    f"another one"
                )
            insert_version(conn, self._dataset_id(conn, ds.fingerprint), version)
            reason = short(version.reason, 300)
            details = {"table": fingerprint, "name": short(version.name), "reason": reason}
            self._log(conn, "version", user, ds.fingerprint, details)
        return version

    def declare_distinct(
        self, fingerprint: str, looked_like: Dataset | str, *, reason: str, user: str | None = None
    ) -> DistinctPopulation:
        """State that the table ``fingerprint``, which looks like the budgeted ``looked_like``, holds other
        people (so it may get a budget of its own); recorded for good with the owner's ``reason``, and a
        "distinct" action by ``user`` about ``looked_like`` (``actions``)."""
        ds = self.dataset(looked_like)
        user = self._user(user)
        self._need_v2("record the statement")
        fingerprint = _text(fingerprint, "fingerprint")
        statement = DistinctPopulation(fingerprint, ds.fingerprint, _text(reason.strip(), "reason"), _now())
        with self._transaction("record the statement") as conn:
            self._store.lock_ledger(conn)
            if resolve(conn, fingerprint) is not None:
                raise ParameterError(f"the table {fingerprint} already has a budget; nothing was recorded")
            insert_distinct(conn, self._dataset_id(conn, ds.fingerprint), statement)
            self._log(
                conn,
                "distinct",
                user,
                ds.fingerprint,
                {"table": fingerprint, "reason": short(statement.reason, 300)},
            )
        return statement

    def distinct_populations(self, fingerprint: str) -> list[DistinctPopulation]:
        """The owner's statements that the table ``fingerprint`` holds other people than a dataset it
        resembled."""
        if not self._v2:
            return []
        with self._reading() as conn:
            return read_distinct(conn, _text(fingerprint, "fingerprint"))

    def looks_like(self, *, fingerprint: str, name: str, columns: Sequence[str]) -> list[LookAlike]:
        """The budgeted datasets the table resembles without being them: the same name, or the same set of
        column names, as the dataset or one of its versions, while ``fingerprint`` has no budget and no
        statement of a different population for that dataset. Empty when the table has a budget."""
        fingerprint = _text(fingerprint, "fingerprint")
        wanted = columns_tuple(columns)
        if not self._v2:
            return []
        with self._reading() as conn:
            if resolve(conn, fingerprint) is not None:
                return []
            declared = {s.looked_like for s in read_distinct(conn, fingerprint)}
            matches: dict[int, tuple[bool, bool]] = {}
            for dataset_id, known_name, known_columns in shapes(conn):
                same_name = known_name == name
                same_columns = known_columns is not None and known_columns == wanted
                if same_name or same_columns:
                    was = matches.get(dataset_id, (False, False))
                    matches[dataset_id] = (was[0] or same_name, was[1] or same_columns)
            found = []
            for dataset_id, (same_name, same_columns) in sorted(matches.items()):
                row = conn.execute(
                    f"SELECT {DATASET_COLUMNS} FROM datasets WHERE id = ?", (dataset_id,)
                ).fetchone()
                ds = self._dataset_row(row)
                if ds.fingerprint not in declared:
                    found.append(LookAlike(ds, same_name, same_columns))
        return found
