"""The ledger's exports and imports, and the keys that sign them: the ``Ledger`` methods that move a
dataset's history between ledgers (``export_json``, ``import_json``, ``trust_key`` …), kept apart from the
budget rules. A mixin of ``Ledger`` with no state of its own: it works through the ledger's transactions.

An export is the signed JSON document of ``exports``; an import checks all of it before writing anything,
and only ever makes this ledger's record of a dataset more conservative (``import_json``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from dpdash.accounting import running
from dpdash.accounting.events import (
    canonical_json,
)
from dpdash.accounting.registry import get_accountant
from dpdash.errors import (
    LedgerError,
    UnsupportedEventError,
)
from dpdash.ledger.actions import (
    action_record,
    insert_actions,
    read_actions,
    short,
)
from dpdash.ledger.exports import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    parse_export,
    same_event,
)
from dpdash.ledger.exports import dataset_record as _dataset_record
from dpdash.ledger.exports import entry_record as _entry_record
from dpdash.ledger.exports import totals_record as _totals_record
from dpdash.ledger.published import (
    insert_published,
    read_published,
)
from dpdash.ledger.records import (
    INSERT_DATASET,
    INSERT_ENTRY,
    Action,
    Dataset,
    Entry,
    ImportReport,
    Session,
    entry_row,
)
from dpdash.ledger.records import now as _now
from dpdash.ledger.records import text as _text
from dpdash.ledger.signing import (
    KEY_FILE_VARIABLE,
    new_private_key,
    public_key,
    read_key_file,
    sign,
    valid_public_key,
)
from dpdash.ledger.storage.base import PUBLIC_KEY
from dpdash.ledger.versions import (
    RecordedUnit,
    Version,
    insert_unit,
    insert_version,
    read_unit,
    read_versions,
    resolve,
)

__all__ = ["TRUSTED_PREFIX", "Transfer"]

# Keys this ledger trusts live in its meta table as ('trusted_key:ed25519:<hex>', label).
TRUSTED_PREFIX = "trusted_key:"


class Transfer:
    """``Ledger``'s keys, exports and imports (see the module docstring)."""

    # ---- keys: who signed an export -------------------------------------------------------------
    def _keys(self) -> dict[str, str]:
        """This ledger's ``signing_key`` and ``signing_public_key`` rows in ``meta``, those it has."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT key, value FROM meta WHERE key IN ('signing_key', ?)", (PUBLIC_KEY,)
            ).fetchall()
        return {str(key): str(value) for key, value in rows}

    def _signing_key(self) -> str | None:
        """This ledger's private Ed25519 key (hex): in its ``meta`` table, or, for a ledger that keeps only
        its public key there (set up by an administrator, ``postgres_setup``), in the file named by
        ``DPDASH_SIGNING_KEY_FILE``, which must hold the key of that public key. Created on first use for
        ledgers made before keys existed; ``None`` if it has none and cannot be written.

        Raises:
            LedgerError: the ledger keeps its key outside, and the key file is not given, cannot be read,
                or holds another key.
        """
        keys = self._keys()
        if "signing_key" in keys:
            return keys["signing_key"]
        if PUBLIC_KEY in keys:
            return self._key_from_file(keys[PUBLIC_KEY])
        try:
            with self._transaction("create the ledger's signing key") as conn:
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('signing_key', ?) ON CONFLICT (key) DO NOTHING",
                    (new_private_key(),),
                )
                row = conn.execute("SELECT value FROM meta WHERE key = 'signing_key'").fetchone()
        except LedgerError:
            return None
        return str(row[0])

    def _key_from_file(self, expected: str) -> str:
        """The private key in ``$DPDASH_SIGNING_KEY_FILE``, checked against the ledger's public key."""
        path = os.environ.get(KEY_FILE_VARIABLE, "").strip()
        if not path:
            raise LedgerError(
                f"cannot sign for the ledger {self._where}: it keeps its signing key outside the database "
                f"(its public key is {expected}). Set {KEY_FILE_VARIABLE} to the key file its administrator "
                "wrote with `python -m dpdash.ledger.storage.postgres_setup`; nothing was exported."
            )
        private = read_key_file(path)
        if public_key(private) != expected:
            raise LedgerError(
                f"the signing key file {path} holds another ledger's key (public key {public_key(private)}; "
                f"this ledger's is {expected}). Set {KEY_FILE_VARIABLE} to this ledger's key file; nothing "
                "was exported."
            )
        return private

    @property
    def public_key(self) -> str | None:
        """The public key (``ed25519:<hex>``) that signs this ledger's exports: give it to another
        ledger's owner, who trusts it with ``trust_key`` to import your exports as new datasets."""
        keys = self._keys()
        if PUBLIC_KEY in keys and "signing_key" not in keys:
            return keys[PUBLIC_KEY]
        private = self._signing_key()
        return None if private is None else public_key(private)

    def check_signing(self) -> None:
        """Nothing if an export can be signed now; else the ``LedgerError`` that export would raise (the key
        file not given, unreadable, or of another ledger), so that a page can say so before anyone clicks."""
        self._signing_key()

    def trust_key(self, key: str, label: str = "", *, user: str | None = None) -> None:
        """Trust exports signed by ``key`` (another ledger's ``public_key``) to bring new datasets, with
        their budgets and histories, into this ledger; a "trust" action by ``user`` is recorded with it."""
        key = valid_public_key(key)
        label = _text(label, "label", allow_empty=True)
        user = self._user(user)
        with self._transaction("trust the key") as conn:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (f"{TRUSTED_PREFIX}{key}", label),
            )
            self._log(conn, "trust", user, None, {"key": key, "label": short(label, 80)})

    def trusted_keys(self) -> dict[str, str]:
        """The keys this ledger trusts besides its own, with their labels."""
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT key, value FROM meta WHERE key LIKE ? ORDER BY key", (f"{TRUSTED_PREFIX}%",)
            ).fetchall()
        return {key[len(TRUSTED_PREFIX) :]: label for key, label in rows}

    # ---- export and import ----------------------------------------------------------------------
    def export_json(self, dataset: Dataset | str, *, user: str | None = None) -> str:
        """The dataset, its sessions and entries, and their totals, as JSON text (read by ``import_json``).

        An export is an action (``actions``): it is recorded, by ``user``, in the transaction that reads
        what it exports, and the export carries the dataset's actions, its own included. So exporting
        writes to the ledger: a ledger that cannot be written cannot export (only one older than the log,
        schema < 5, exports without recording it).
        """
        ds = self.dataset(dataset)
        user = self._user(user)
        private = self._signing_key()
        logged = self._store.schema >= 5
        with self._transaction("record the export") if logged else self._reading() as conn:
            dataset_id = self._dataset_id(conn, ds.fingerprint)
            if logged:
                self._store.lock_dataset(conn, dataset_id)  # what the export says: no spend in between
            entries = self._entries(conn, dataset_id, ds.fingerprint)
            session_uids = {e.session for e in entries if e.session is not None}
            sessions = [
                Session(*row)
                for row in conn.execute("SELECT uid, label, started_at FROM sessions ORDER BY id").fetchall()
                if row[0] in session_uids
            ]
            unit = read_unit(conn, dataset_id, self._where) if self._v2 else None
            versions = read_versions(conn, dataset_id, ds.fingerprint) if self._v2 else []
            published = read_published(conn, dataset_id) if self._v3 else {}
            actions: list[Action] = []
            if logged:
                self._log(conn, "export", user, ds.fingerprint,
                          {"entries": len(entries), "signed": private is not None})  # fmt: skip
                tables = [ds.fingerprint, *(v.fingerprint for v in versions)]
                actions = read_actions(conn, tables, self._store.any_of, self._where)
        records = [_entry_record(entry) for entry in entries]
        document = {
            "format": EXPORT_FORMAT,
            "schema_version": EXPORT_VERSION,
            "exported_at": _now(),
            "dataset": {
                **_dataset_record(ds),
                "unit": None if unit is None else unit.to_dict(),
                "versions": [v.to_dict() for v in versions],
            },
            "sessions": [{"uid": s.uid, "label": s.label, "started_at": s.started_at} for s in sessions],
            "entries": records,
            "entries_sha256": hashlib.sha256(canonical_json(records).encode()).hexdigest(),
            "totals": _totals_record(ds, [entry.event for entry in entries]),
            "published": [{"entry": uid, "record": record} for uid, record in published.items()],
            "actions": [action_record(action) for action in actions],
        }
        if private is not None:
            document = sign(document, private)
        return json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False)

    def export_to(
        self, dataset: Dataset | str, path: str | os.PathLike[str], *, user: str | None = None
    ) -> Path:
        """Write ``export_json(dataset, user=user)`` to a file (UTF-8) and return its path."""
        target = Path(path)
        target.write_text(self.export_json(dataset, user=user), encoding="utf-8")
        return target

    def import_json(
        self, text: str | bytes, *, dataset: Dataset | str | None = None, user: str | None = None
    ) -> ImportReport:
        """Add an exported history to this ledger, all or nothing; an import only ever makes this ledger's
        record of a dataset more conservative.

        The export is checked completely before anything is written: it must be JSON in this format, of
        ``dataset`` if one is given, every entry a valid event, its digest and totals must match its
        entries, and its signature, if it has one, must match it (so an export edited after it was signed is
        refused). Then:

        - into a dataset this ledger already has (same budget and accountant): new entries are added and
          entries already here are skipped; an entry here that the export states differently (a lowered ε,
          another partition) is refused. Entries are never removed, changed or re-partitioned, and the
          budget is never changed, whoever signed the export;
        - a dataset this ledger does not have is created from the export (its name, budget, accountant
          and history) only if the export is signed by this ledger's own key or one it trusts
          (``trust_key``): an unverified export could understate what was spent.

        Imported releases happened, so they are recorded even if they take the dataset over its budget
        (``over_budget`` says so, and further spends are refused).

        The export's actions (who did what) are taken, like its release records, only from an export
        signed by a trusted key (those already here are skipped); the import itself is recorded as an
        "import" action by ``user``, in the same transaction.

        Raises:
            LedgerError: the export is refused (the message says why); this ledger is unchanged.
        """
        document = parse_export(text)
        ds = document["dataset"]
        if dataset is not None:
            expected = dataset.fingerprint if isinstance(dataset, Dataset) else _text(dataset, "dataset")
            if ds.fingerprint != expected:
                raise LedgerError(
                    f"the export is of dataset {ds.name!r} ({ds.fingerprint}), not of the dataset "
                    f"{expected!r}; nothing was imported"
                )
        sessions: list[Session] = document["sessions"]
        entries: list[Entry] = document["entries"]
        signer: str | None = document["signed_by"]
        trusted = signer is not None and (signer == self.public_key or signer in self.trusted_keys())
        by_uid = {entry.uid: entry for entry in entries}
        texts = {entry.uid: canonical_json(entry.event.to_dict()) for entry in entries}
        unit: RecordedUnit | None = document["unit"]
        versions: list[Version] = document["versions"]
        published: dict[str, dict[str, Any]] = document["published"] if trusted else {}
        actions: list[Action] = document["actions"] if trusted else []
        user = self._user(user)
        tables = {ds.fingerprint, *(v.fingerprint for v in versions)}
        if any(action.dataset not in tables for action in actions):
            raise LedgerError(
                "the export carries actions about other tables than its dataset and its versions; nothing "
                "was imported"
            )
        if unit is not None or versions:
            self._need_v2("import the unit of privacy and versions")
        if published and not self._v3:
            raise LedgerError(
                f"cannot import the released values: the ledger {self._where} is read-only at schema "
                f"{self._store.schema} (made by an older dpdash); open it once where it can be written to "
                "upgrade it. Nothing was imported"
            )
        if actions:
            self._need_schema(5, "import who did what")
        with self._transaction("import the export") as conn:
            self._store.lock_ledger(conn)
            existing = self._find(conn, ds.fingerprint, versions=False)
            owner = resolve(conn, ds.fingerprint) if self._v2 else None
            if existing is None and owner is not None:
                raise LedgerError(
                    f"the export is of dataset {ds.name!r} ({ds.fingerprint}), which this ledger has as a "
                    f"version of dataset {owner}: its releases spend that budget here. Import the export "
                    "of that dataset instead; nothing was imported"
                )
            if existing is None:
                if not trusted:
                    origin = "unsigned" if signer is None else f"signed by {signer}, a key it does not trust"
                    raise LedgerError(
                        f"the export would create dataset {ds.name!r} ({ds.fingerprint}) with its budget and "
                        f"history, but it is {origin}: an unverified export could understate what was spent. "
                        "Trust the exporting ledger's key first (Ledger.trust_key, with the key its owner "
                        "gives you), or register the dataset with its budget here, after which an import can "
                        "only add releases to it; nothing was imported"
                    )
                conn.execute(
                    INSERT_DATASET,
                    (
                        ds.fingerprint,
                        ds.name,
                        ds.budget.epsilon,
                        ds.budget.delta,
                        ds.accountant,
                        ds.created_at,
                    ),
                )
                existing = ds
            elif existing.budget != ds.budget or existing.accountant != ds.accountant:
                raise LedgerError(
                    f"the export gives dataset {ds.name!r} the budget ε = {ds.budget.epsilon:g}, "
                    f"δ = {ds.budget.delta:g} under {ds.accountant}, but this ledger has ε = "
                    f"{existing.budget.epsilon:g}, δ = {existing.budget.delta:g} under "
                    f"{existing.accountant}; nothing was imported"
                )
            dataset_id = self._dataset_id(conn, ds.fingerprint)
            self._store.lock_dataset(conn, dataset_id)
            self._import_unit_and_versions(conn, dataset_id, ds, unit, versions)
            session_ids: dict[str, int] = {}
            for s in sessions:
                row = conn.execute(
                    "SELECT id, label, started_at FROM sessions WHERE uid = ?", (s.uid,)
                ).fetchone()
                if row is None:
                    (session_id,) = conn.execute(
                        "INSERT INTO sessions (uid, label, started_at) VALUES (?, ?, ?) RETURNING id",
                        (s.uid, s.label, s.started_at),
                    ).fetchone()
                    session_ids[s.uid] = int(session_id)
                elif (row[1], row[2]) != (s.label, s.started_at):
                    raise LedgerError(
                        f"session {s.uid} differs between the export and this ledger; nothing was imported"
                    )
                else:
                    session_ids[s.uid] = int(row[0])
            # The entries already here, in one query (the export's uids as one parameter).
            among, uids = self._store.any_of("e.uid", [entry.uid for entry in entries])
            found = {
                row[0]: row[1:]
                for row in conn.execute(
                    "SELECT e.uid, e.dataset_id, e.created_at, e.event, s.uid FROM entries e "
                    f"LEFT JOIN sessions s ON s.id = e.session_id WHERE {among}",
                    (uids,),
                )
            }
            for uid, (row_dataset, created, text, session_uid) in found.items():
                entry = by_uid[uid]
                same = (
                    row_dataset == dataset_id
                    and created == entry.created_at
                    and session_uid == entry.session
                    and same_event(text, entry.event)
                )
                if not same:
                    raise LedgerError(
                        f"entry {uid} differs between the export and this ledger; nothing was imported"
                    )
            fresh = [entry for entry in entries if entry.uid not in found]
            conn.executemany(
                INSERT_ENTRY,
                [
                    entry_row(
                        entry,
                        dataset_id,
                        session_ids.get(entry.session) if entry.session else None,
                        texts[entry.uid],
                    )
                    for entry in fresh
                ],
            )
            insert_published(conn, published.items())
            insert_actions(conn, actions)
            added, present = len(fresh), len(found)
            self._log(conn, "import", user, ds.fingerprint, {
                "added": added, "present": present, "signed_by": signer, "trusted": trusted,
                "values": len(published), "actions": len(actions),
            })  # fmt: skip
        try:
            keeper, budget = get_accountant(existing.accountant), existing.budget
            over = not running.fits(keeper, self.events(existing), (), budget.delta, budget.epsilon)
        except UnsupportedEventError:
            over = True
        left = len(document["published"]) - len(published)
        actions_left = len(document["actions"]) - len(actions)
        return ImportReport(
            existing, added, present, over, signer, trusted, len(published), left, len(actions), actions_left
        )

    def _import_unit_and_versions(
        self,
        conn: sqlite3.Connection,
        dataset_id: int,
        ds: Dataset,
        unit: RecordedUnit | None,
        versions: list[Version],
    ) -> None:
        """Add the export's unit of privacy (if none is recorded here) and its versions (those not here);
        a different recorded unit, or a version whose table has another budget here, refuses the import."""
        if unit is not None:
            have = read_unit(conn, dataset_id, self._where)
            if have is None:
                insert_unit(conn, dataset_id, unit)
            elif have.unit != unit.unit:
                raise LedgerError(
                    f"the export records the unit of privacy {unit.unit.describe()} for dataset {ds.name!r}, "
                    f"but this ledger has {have.unit.describe()}; nothing was imported"
                )
        for version in versions:
            owner = resolve(conn, version.fingerprint)
            if owner == ds.fingerprint:
                continue
            if owner is not None:
                raise LedgerError(
                    f"the export links the table {version.fingerprint} to dataset {ds.name!r}, but this "
                    f"ledger keeps that table's budget under dataset {owner}; nothing was imported"
                )
            insert_version(conn, dataset_id, version)

    def import_from(
        self, path: str | os.PathLike[str], *, dataset: Dataset | str | None = None, user: str | None = None
    ) -> ImportReport:
        """``import_json`` of a file's contents."""
        try:
            data = Path(path).read_bytes()
        except OSError as error:
            raise LedgerError(f"cannot read the export {path}: {error}") from error
        return self.import_json(data, dataset=dataset, user=user)

