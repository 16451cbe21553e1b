"""Who did what: the ledger's schema-5 log of actions (``Ledger.actions``).

Each row says when (UTC), who (``user``: a label such as an e-mail, a sign-in subject or "local owner"),
what (one word of ``ACTIONS``), which table (its fingerprint, or none) and a few details (a small JSON
object of parameters and ids: ε, a query's name, an entry's uid, counts; never a value computed from the
data, never a row). The ledger's own writes record their action in the same transaction as their change,
so an action is in the log exactly when its change is in the ledger:

- ``budget`` (``add_dataset`` registered a dataset), ``unit`` (``record_unit``), ``version``
  (``link_version``), ``distinct`` (``declare_distinct``), ``trust`` (``trust_key``);
- ``release`` (``spend``, ``spend_many``, ``spend_release`` recorded a release), and ``refused``: a spend
  the budget refused. Nothing was spent then; the attempt is kept because an audit wants to see it. A
  request sent again under a recorded ``request_id`` (which records nothing) records no action;
- ``request``, ``approve``, ``decline`` (``release_requests``);
- ``import`` (``import_json``, with what it added) and ``export`` (``export_json``: the export carries the
  dataset's actions, its own included).

A write called without ``user=`` records its action with no one named (``user`` is ``None``). The app
records, with ``Ledger.record_action``, what only it sees (``APP_ACTIONS``: a table loaded, a database
table connected, the facts saved); the other words are the ledger's own and are refused there, so no caller
can write an approval or a release into the log that did not happen. Append-only like the rest of the
ledger. This module holds the vocabulary, the checks, the queries and the one-line summary; each storage
(``storage``) creates the table.
"""

from __future__ import annotations

import dataclasses
import json
import math
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from dpdash.errors import LedgerError, ParameterError, ParameterTypeError
from dpdash.identity import short_identity
from dpdash.ledger.records import Action, now, short_text
from dpdash.ledger.storage.base import Connection

__all__ = [
    "ACTIONS",
    "APP_ACTIONS",
    "MAX_DETAILS",
    "MAX_USER",
    "action_from_record",
    "action_record",
    "describe",
    "details_of",
    "insert_actions",
    "new_action",
    "read_actions",
    "short",
    "user_label",
]

#: Every action word, with what it means.
ACTIONS: dict[str, str] = {
    "load": "loaded a table (the app)",
    "connect": "connected a table where it lives (the app)",
    "facts": "saved a table's public facts (the app)",
    "budget": "registered a dataset with its budget",
    "unit": "locked the unit of privacy of a budget",
    "version": "continued a budget for another version of the table",
    "distinct": "stated that a table holds a different population",
    "release": "recorded a release: budget spent",
    "refused": "a release refused for the budget: nothing spent",
    "request": "requested a release",
    "approve": "approved a release request",
    "decline": "declined a release request",
    "import": "imported an export",
    "export": "exported the ledger of a dataset",
    "trust": "trusted another ledger's key",
}
#: The actions only the app sees, which it records with ``Ledger.record_action``.
APP_ACTIONS = ("load", "connect", "facts")
#: The longest user label, in characters.
MAX_USER = 200
#: The largest details object, in characters of its JSON.
MAX_DETAILS = 2000
_MAX_DEPTH = 4
# Unicode categories a label may not hold: controls, format characters (bidirectional overrides, zero
# width), line and paragraph separators, surrogates, private use and unassigned code points.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def user_label(value: object, name: str = "user") -> str:
    """``value`` if it is a valid user label: text of 1 to ``MAX_USER`` characters, not only spaces, with
    no control, format or separator characters (which could hide or reorder what is shown); else a
    ``ParameterError`` saying why. A label names someone (an e-mail, a sign-in subject, "local owner"):
    never a password or a token."""
    label = short_text(value, name, MAX_USER)
    bad = sorted({f"U+{ord(c):04X}" for c in label if unicodedata.category(c) in _REFUSED_CATEGORIES})
    if bad:
        raise ParameterError(
            f"{name} must hold no control, format or separator characters, got {', '.join(bad[:5])}"
        )
    return label


def details_of(value: object) -> dict[str, Any]:
    """A copy of ``value`` if it is valid details: ``None`` (none), or a JSON object with text keys and
    JSON values (finite numbers, text without lone surrogates), nested at most 4 deep, whose JSON has at
    most ``MAX_DETAILS`` characters; else a ``ParameterError`` saying why."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ParameterTypeError(f"details must be a JSON object (a dict), got {type(value).__name__}")
    _check_json(value, 1)
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)
    if len(text) > MAX_DETAILS:
        raise ParameterError(
            f"details must be small (at most {MAX_DETAILS} characters of JSON: parameters and ids, never "
            f"data), got {len(text)}"
        )
    copied: dict[str, Any] = json.loads(text)
    return copied


def _check_json(value: object, depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise ParameterError(f"details must be nested at most {_MAX_DEPTH} deep")
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ParameterTypeError(f"details keys must be strings, got {type(key).__name__}")
            _check_text(key)
            _check_json(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check_json(item, depth + 1)
    elif isinstance(value, str):
        _check_text(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ParameterError(f"details numbers must be finite, got {value!r}")
    elif not (value is None or isinstance(value, (bool, int))):
        raise ParameterTypeError(
            f"details values must be JSON (text, numbers, true/false, null, lists, objects), got "
            f"{type(value).__name__}"
        )


def _check_text(value: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ParameterError("details text must be valid Unicode (no lone surrogates)") from None


def short(value: object, limit: int = 120) -> str:
    """``str(value)`` cut to ``limit`` characters (with "…"): names quoted in an action's details."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def new_action(action: str, user: str | None, dataset: str | None, details: Mapping[str, Any]) -> Action:
    """An action happening now (checked: a known word, a valid label, valid details)."""
    if action not in ACTIONS:
        raise ParameterError(f"action must be one of {', '.join(ACTIONS)}, got {short(action, 40)!r}")
    return Action(
        uuid.uuid4().hex,
        now(),
        None if user is None else user_label(user),
        action,
        dataset,
        details_of(details),
    )


_INSERT = (
    "INSERT INTO actions (uid, created_at, who, what, fingerprint, details) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (uid) DO NOTHING"
)


def insert_actions(conn: Connection, actions: Iterable[Action]) -> None:
    """Store actions; one whose uid is already stored is skipped (an import of an export seen before)."""
    conn.executemany(
        _INSERT,
        [
            (a.uid, a.created_at, a.user, a.action, a.dataset,
             json.dumps(a.details, ensure_ascii=False, allow_nan=False, sort_keys=True))
            for a in actions
        ],
    )  # fmt: skip


def read_actions(
    conn: Connection, fingerprints: Sequence[str] | None, any_of: Any, where: str
) -> list[Action]:
    """The actions about these tables (all of them for ``None``), oldest first. ``any_of`` is the
    storage's ``Store.any_of``; ``where`` names the ledger in messages."""
    sql = "SELECT uid, created_at, who, what, fingerprint, details FROM actions"
    parameters: tuple[Any, ...] = ()
    if fingerprints is not None:
        among, values = any_of("fingerprint", list(fingerprints))
        sql, parameters = f"{sql} WHERE {among}", (values,)
    out = []
    for uid, created, who, what, fp, details in conn.execute(f"{sql} ORDER BY id", parameters).fetchall():
        try:
            parsed = json.loads(details)
            if not isinstance(parsed, dict):
                raise ValueError("its details are not a JSON object")
        except (ValueError, RecursionError) as error:
            raise LedgerError(f"the ledger {where} holds an unreadable action {uid}: {error}") from None
        out.append(Action(uid, created, who, what, fp, parsed))
    return out


def action_record(action: Action) -> dict[str, Any]:
    """An action as an export carries it."""
    return dataclasses.asdict(action)


def action_from_record(record: object) -> Action:
    """An export's action, checked like a new one; else a ``ParameterError`` saying why."""
    if not isinstance(record, Mapping):
        raise ParameterTypeError(f"an action must be a JSON object, got {type(record).__name__}")
    uid, created, user, action, dataset = (
        record.get(k) for k in ("uid", "created_at", "user", "action", "dataset")
    )
    if not isinstance(uid, str) or not uid or len(uid) > 64:
        raise ParameterError("its uid must be text of 1 to 64 characters")
    if not isinstance(created, str) or not created or len(created) > 64:
        raise ParameterError("its created_at must be a time (text)")
    if action not in ACTIONS:
        raise ParameterError(f"its action must be one of {', '.join(ACTIONS)}")
    if not isinstance(dataset, str) or not dataset or len(dataset) > 200:
        raise ParameterError("its dataset must be a fingerprint (text of 1 to 200 characters)")
    return Action(
        uid, created, None if user is None else user_label(user), str(action), str(dataset),
        details_of(record.get("details")),
    )  # fmt: skip


# ---- the one-line summary ---------------------------------------------------------------------------
def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "?"


def _cost(details: Mapping[str, Any]) -> str:
    """ "query (mechanism, ε = …, δ = …)" of a release's or a request's details."""
    parts = []
    if details.get("mechanism"):
        parts.append(short(details["mechanism"], 40))
    if isinstance(details.get("epsilon"), (int, float)):
        parts.append(f"ε = {_number(details['epsilon'])}")
    if details.get("delta"):
        parts.append(f"δ = {_number(details['delta'])}")
    pieces = details.get("entries")
    if isinstance(pieces, int) and pieces > 1:
        parts.append(f"{pieces} entries")
    query = short(details.get("query") or "a release", 80)
    return f"{query} ({', '.join(parts)})" if parts else query


#: The one-line summaries that read nothing but the action's details.
_LINES: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "unit": lambda d: f"locked the unit of privacy: {short(d.get('unit', '?'), 100)}",
    "distinct": lambda d: f"stated that the table {short_identity(d.get('table', '?'))} holds other people",
    "release": lambda d: f"released {_cost(d)}",
    "refused": lambda d: f"was refused {_cost(d)}: over the budget, nothing spent",
    "request": lambda d: f"requested {_cost(d)} (request {short(d.get('request', '?'), 8)})",
}


def describe(action: Action, *, owner: bool = True) -> str:
    """The action in one line of plain text (names quoted as given: escape it where Markdown renders).

    ``owner=False`` (an analyst or viewer reads it) leaves out what is the data owner's alone: a loaded
    table's true row count (each new version's count would tell the difference exactly) and a connected
    source's location (host, database user, server paths), as the Datasets page does."""
    d, what = action.details, action.action
    name = short(d.get("name", ""), 80)
    if what == "load":
        rows = f" ({_number(d['rows'])} rows)" if "rows" in d and owner else ""
        return f"loaded {name or 'a table'}{rows}"
    if what == "connect":
        where = f" ({short(d['source'], 80)})" if d.get("source") and owner else ""
        return f"connected {name or 'a table'}{where}"
    if what == "facts":
        unit = f": {short(d['unit'], 100)}" if d.get("unit") else ""
        return f"saved the facts of {name or 'the table'}{unit}"
    if what == "budget":
        delta = f", δ = {_number(d['delta'])}" if d.get("delta") else ""
        keeper = f" under {short(d['accountant'], 20)}" if d.get("accountant") else ""
        return f"set the budget ε = {_number(d.get('epsilon'))}{delta}{keeper} of {name or 'the dataset'}"
    if what == "version":
        table = short_identity(d.get("table", "?"))
        return f"continued the budget for {name or 'another table'} (identity {table})"
    if what in _LINES:
        return _LINES[what](d)
    if what in ("approve", "decline"):
        reason = f": {short(d['reason'], 100)}" if d.get("reason") else ""
        verb = "approved" if what == "approve" else "declined"
        return f"{verb} request {short(d.get('request', '?'), 8)}{reason}"
    if what == "import":
        origin = "signed by a trusted key" if d.get("trusted") else "not from a trusted key"
        return (
            f"imported an export: {_number(d.get('added'))} entries added, {_number(d.get('present'))} "
            f"already here ({origin})"
        )
    if what == "export":
        signed = "signed" if d.get("signed") else "unsigned"
        return f"exported the ledger of this dataset ({_number(d.get('entries'))} entries, {signed})"
    if what == "trust":
        label = f" ({short(d['label'], 60)})" if d.get("label") else ""
        return f"trusted the key {short(d.get('key', '?'), 24)}{label}"
    return ACTIONS.get(what, what)
