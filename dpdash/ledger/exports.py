"""The ledger's export document: what ``Ledger.export_json`` writes and ``Ledger.import_json`` checks.

One JSON object: ``format`` (``EXPORT_FORMAT``), ``schema_version`` (``EXPORT_VERSION``: the document's
own version, apart from the ledger's schema, whose tables an export does not all carry), the dataset
(budget, accountant, unit of privacy, versions), its sessions and entries, the SHA-256 of the entries'
canonical JSON, their totals, the release records, (version 4) the dataset's actions (who did what,
``actions``), and (``signing``) an Ed25519 signature over all of it. Versions 1 to 3 (no actions) still
import. The same document whatever storage the ledger uses, so an export from SQLite imports into
PostgreSQL and back.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from dpdash.accounting import running
from dpdash.accounting.basic import basic_sums
from dpdash.accounting.event_factory import event_from_dict
from dpdash.accounting.events import PrivacyEvent, canonical_json
from dpdash.accounting.registry import get_accountant
from dpdash.errors import DPDashError, LedgerError, ParameterError, ParameterTypeError, UnsupportedEventError
from dpdash.ledger.actions import action_from_record
from dpdash.ledger.records import Action, Budget, Dataset, Entry, Session
from dpdash.ledger.records import text as _text
from dpdash.ledger.signing import signed_by
from dpdash.ledger.versions import RecordedUnit, Version, columns_tuple, row_count, unit_of

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_VERSION",
    "dataset_record",
    "entry_record",
    "parse_export",
    "same_event",
    "totals_record",
]

EXPORT_FORMAT = "dpdash-ledger-export"
EXPORT_VERSION = 4


def _finite_or_text(value: float) -> float | str:
    return value if math.isfinite(value) else ("inf" if value > 0 else "-inf")


def _from_finite_or_text(value: Any, what: str) -> float:
    if isinstance(value, str) and value in ("inf", "-inf"):
        return math.inf if value == "inf" else -math.inf
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise LedgerError(f"the export's {what} must be a number, got {value!r}")


def same_event(text: str, event: PrivacyEvent) -> bool:
    try:
        return event_from_dict(json.loads(text)) == event
    except (ValueError, TypeError):
        return False


def dataset_record(ds: Dataset) -> dict[str, Any]:
    return {
        "fingerprint": ds.fingerprint,
        "name": ds.name,
        "budget": {"epsilon": ds.budget.epsilon, "delta": ds.budget.delta},
        "accountant": ds.accountant,
        "created_at": ds.created_at,
    }


def entry_record(entry: Entry) -> dict[str, Any]:
    return {
        "uid": entry.uid,
        "created_at": entry.created_at,
        "session": entry.session,
        "query": entry.query,
        "mechanism": entry.mechanism,
        "event": entry.event.to_dict(),
    }


def _basic_record(events: list[PrivacyEvent]) -> dict[str, Any] | None:
    """Σε and Σδ of the events (``None`` if one has no (ε, δ)): exact, and cheap to check on import."""
    if not all(e.epsilon is not None and e.delta is not None for e in events):
        return None
    epsilon, delta = basic_sums(events)
    return {"epsilon": _finite_or_text(epsilon), "delta": delta}


def totals_record(ds: Dataset, events: list[PrivacyEvent]) -> dict[str, Any]:
    record: dict[str, Any] = {"count": len(events), "basic": _basic_record(events)}
    try:
        total = running.epsilon(get_accountant(ds.accountant), events, (), ds.budget.delta)
        record["accountant"] = {
            "name": ds.accountant,
            "target_delta": ds.budget.delta,
            "epsilon": _finite_or_text(total),
        }
    except UnsupportedEventError:
        record["accountant"] = None
    return record


def parse_export(text: str | bytes) -> dict[str, Any]:
    """The export's dataset, sessions and entries, checked against its digest and totals."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as error:
            raise LedgerError(f"the export is not UTF-8 JSON text ({error}); nothing was imported") from None
    if not isinstance(text, str):
        raise ParameterTypeError(f"the export must be JSON text, got {type(text).__name__}")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise LedgerError(f"the export is not JSON ({error}); nothing was imported") from None
    except RecursionError:
        raise LedgerError(
            "the export is not a ledger export (it is nested too deeply); nothing was imported"
        ) from None
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        raise LedgerError(
            "the file is not a dpdash ledger export (its 'format' is not "
            f"{EXPORT_FORMAT!r}); nothing was imported"
        )
    version = document.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= EXPORT_VERSION:
        raise LedgerError(
            f"the export has schema version {version!r}; this dpdash reads 1 to {EXPORT_VERSION}"
        )
    try:
        raw = document["dataset"]
        budget = Budget(raw["budget"]["epsilon"], raw["budget"]["delta"])
        get_accountant(raw["accountant"])
        ds = Dataset(
            _text(raw["fingerprint"], "fingerprint"),
            _text(raw["name"], "name"),
            budget,
            raw["accountant"],
            _text(raw["created_at"], "created_at"),
        )
        sessions = [
            Session(
                _text(s["uid"], "session uid"),
                _text(s["label"], "session label", allow_empty=True),
                _text(s["started_at"], "session started_at"),
            )
            for s in document["sessions"]
        ]
        records = document["entries"]
        if not isinstance(records, list):
            raise ParameterTypeError("entries must be a list")
    except (LookupError, TypeError, AttributeError, DPDashError) as error:
        raise LedgerError(
            f"the export is malformed ({type(error).__name__}: {error}); nothing was imported"
        ) from None
    session_uids = {s.uid for s in sessions}
    entries: list[Entry] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        try:
            uid = _text(record["uid"], "uid")
            session = record["session"]
            if session is not None and session not in session_uids:
                raise ParameterError(f"its session {session!r} is not among the exported sessions")
            event = event_from_dict(record["event"])
            if record["query"] != event.query or record["mechanism"] != event.mechanism:
                raise ParameterError("its query or mechanism does not match its event")
            entry = Entry(uid, ds.fingerprint, session, _text(record["created_at"], "created_at"), event)
        except (LookupError, TypeError, AttributeError, RecursionError, DPDashError) as error:
            raise LedgerError(
                f"entry {index} of the export is invalid ({error}); nothing was imported"
            ) from None
        if uid in seen:
            raise LedgerError(f"entry {uid} appears twice in the export; nothing was imported")
        seen.add(uid)
        entries.append(entry)
    digest = hashlib.sha256(canonical_json(records).encode()).hexdigest()
    if document.get("entries_sha256") != digest:
        raise LedgerError(
            "the export's entries do not match their digest: it was edited or truncated; nothing was imported"
        )
    _check_totals(document.get("totals"), ds, [entry.event for entry in entries])
    unit, versions = _parse_unit_and_versions(document["dataset"], ds)
    published = _parse_published(document.get("published", []), seen)
    actions = _parse_actions(document.get("actions", []))
    return {
        "dataset": ds,
        "sessions": sessions,
        "entries": entries,
        "signed_by": signed_by(document),
        "unit": unit,
        "versions": versions,
        "published": published,
        "actions": actions,
    }


def _parse_actions(raw: Any) -> list[Action]:
    """The export's actions (version 4; older exports have none). Whether they are about the exported
    dataset is checked where they are taken (``Ledger.import_json``: from a trusted export only)."""
    if not isinstance(raw, list):
        raise LedgerError("the export's 'actions' is not a list; nothing was imported")
    actions: list[Action] = []
    seen: set[str] = set()
    for index, record in enumerate(raw):
        try:
            action = action_from_record(record)
        except (DPDashError, RecursionError) as error:
            raise LedgerError(
                f"action {index} of the export is invalid ({error}); nothing was imported"
            ) from None
        if action.uid in seen:
            raise LedgerError(f"action {action.uid} appears twice in the export; nothing was imported")
        seen.add(action.uid)
        actions.append(action)
    return actions


def _parse_published(raw: Any, uids: set[str]) -> dict[str, dict[str, Any]]:
    """The export's release records (schema 3; older exports have none), each for one of its entries."""
    if not isinstance(raw, list):
        raise LedgerError("the export's 'published' is not a list; nothing was imported")
    published: dict[str, dict[str, Any]] = {}
    for index, item in enumerate(raw):
        uid = item.get("entry") if isinstance(item, dict) else None
        record = item.get("record") if isinstance(item, dict) else None
        if not isinstance(uid, str) or uid not in uids or uid in published or not isinstance(record, dict):
            raise LedgerError(
                f"release record {index} of the export is invalid (it must be an object with 'entry', the "
                "uid of one of the export's entries, once, and 'record', a JSON object); nothing was imported"
            )
        published[uid] = record
    return published


def _parse_unit_and_versions(raw: dict[str, Any], ds: Dataset) -> tuple[RecordedUnit | None, list[Version]]:
    """The export's recorded unit of privacy and versions (schema 2; a schema-1 export has neither)."""
    try:
        unit = None
        stated = raw.get("unit")
        if stated is not None:
            unit = RecordedUnit(
                unit_of({k: stated[k] for k in ("neighbours", "rows_per_person", "id_column")}),
                columns_tuple(stated.get("columns")),
                row_count(stated.get("rows")),
                _text(stated["recorded_at"], "recorded_at"),
            )
        versions = [
            Version(
                _text(v["fingerprint"], "version fingerprint"), ds.fingerprint, _text(v["name"], "name"),
                columns_tuple(v.get("columns")), row_count(v.get("rows")), _text(v["reason"], "reason"),
                _text(v["created_at"], "created_at"),
            )
            for v in raw.get("versions") or []
        ]  # fmt: skip
    except (LookupError, TypeError, AttributeError, DPDashError) as error:
        raise LedgerError(
            f"the export's unit of privacy or versions are malformed ({error}); nothing was imported"
        ) from None
    return unit, versions


def _check_totals(totals: Any, ds: Dataset, events: list[PrivacyEvent]) -> None:
    """Refuse an export whose stated count, basic totals (Σε, Σδ) or accountant name do not follow from its
    entries: a cheap check against careless edits (a forger recomputes them; the signature is what proves
    origin). The stated total under the dataset's accountant is for people and is not recomputed here: it
    can take a from-scratch PLD composition of every entry, and the importing ledger computes its own
    totals from the entries anyway."""
    problem = "the export's totals do not match its entries (it was edited); nothing was imported"
    if not isinstance(totals, dict) or totals.get("count") != len(events):
        raise LedgerError(problem)
    stated_basic, expected_basic = totals.get("basic"), _basic_record(events)
    if (stated_basic is None) != (expected_basic is None) or not isinstance(stated_basic, (dict, type(None))):
        raise LedgerError(problem)
    if expected_basic is not None:
        for key in ("epsilon", "delta"):
            stated = _from_finite_or_text(stated_basic.get(key), f"basic {key}")
            actual = _from_finite_or_text(expected_basic[key], f"basic {key}")
            if not (stated == actual or math.isclose(stated, actual, rel_tol=1e-12)):
                raise LedgerError(problem)
    stated_total = totals.get("accountant")
    if stated_total is not None and (
        not isinstance(stated_total, dict) or stated_total.get("name") != ds.accountant
    ):
        raise LedgerError(problem)
