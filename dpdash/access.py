"""Who may do what with which table: roles per dataset, read from a roles file.

A served dpdash (sign-in on: ``.streamlit/secrets.toml`` has an ``[auth]`` section) gives every signed-in
person a **role** on each table, from the roles file named by ``$DPDASH_ROLES`` (TOML):

- ``owner``: loads or connects tables, declares their public facts, sets budgets, previews with the true
  values, makes releases and approves (or declines) the releases analysts request;
- ``analyst``: sees the schema and the public facts, previews accuracy without any true value (no true
  value marked, no sample rows, no clipping figures) and requests releases;
- ``viewer``: sees the budget, what was released and the stakeholder reports, read-only.

Without sign-in there is one person, the local owner (``LOCAL_OWNER``, ``AccessPolicy.single_owner()``).

The file::

    groups_claim = "groups"            # the ID token's claim listing a person's groups (default "groups")
    default = "viewer"                 # anyone signed in, on tables without a rule of their own

    [users]                            # an email (used only if the provider says email_verified: true)
    "alice@example.org" = "owner"      # or "sub:<subject>", the provider's stable id for the person
    "sub:248289761001" = "analyst"

    [groups]
    "dp-analysts" = "analyst"

    [[datasets]]                       # one table: by its identity (copied whole from the Data page), or
    fingerprint = "sha256:<64 hex>"    # by name
    default = "none"                   # nobody else, whatever the top level says
    users = { "bob@example.org" = "analyst" }
    groups = { "clinic-owners" = "owner" }

A role is ``"owner"``, ``"analyst"``, ``"viewer"`` or ``"none"`` (no access). How a person's role on a table
is found, the first that says something deciding:

1. the table's own rule, if one matches (first by fingerprint: the table's, then its budget's; otherwise by
   name): the person by subject, then by email; else the highest role among their groups; else the rule's
   ``default``, if it has one; where several name rules match (a table read from several files), the lowest
   role they give;
2. the top level, in the same order: users, groups, ``default``; with none of them, no access.

A fingerprint is the whole identity (``sha256:`` and 64 hex digits); a shorter one would match nothing, so
it is refused. A table's names are the one its owners gave it (its budget's, once it has one) and those
of what is read, whatever the spelling that connected it (``dpdash.engines.Source.names``): each file's
real path and file name; a PostgreSQL table's ``schema.table`` as the database resolves it, and ``table``.

Names are matched exactly, never by resemblance: emails ignore the case of ASCII letters only (the Kelvin
sign U+212A is not a "k"), groups and subjects are matched as written, table names after Unicode NFC. An
entry with invisible or control characters (zero-width spaces, right-to-left overrides, line breaks) or
surrounding spaces is refused when the file is read, so it cannot silently match nothing or look like
another name. A table's name is chosen by its owners, so a name rule can be taken by any table an owner
names so; a fingerprint rule cannot.

>>> policy = AccessPolicy.from_toml('default = "viewer"\\n[users]\\n"ann@example.org" = "owner"\\n')
>>> table = DatasetRef(fingerprints=("sha256:" + "ab" * 32,), names=("survey",))
>>> policy.role_for(User(subject="1", email="Ann@Example.org"), table)
<Role.OWNER: 'owner'>
>>> policy.role_for(User(subject="2", email="bob@example.org"), table)
<Role.VIEWER: 'viewer'>
>>> policy.check(User(subject="2", email="bob@example.org"), Action.RELEASE, table)
Traceback (most recent call last):
...
dpdash.errors.AccessDenied: bob@example.org is a viewer on 'survey' and may not make, approve or decline \
a release: that is for owners of the table. Ask an owner of dpdash to change the roles file if you need it.
"""

from __future__ import annotations

import os
import tomllib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from dpdash.errors import AccessDenied, RolesFileError
from dpdash.people import LOCAL_OWNER, User
from dpdash.roles_file import DatasetRule, Grants, Role, _check_name, _fingerprint

__all__ = [
    "LOCAL_OWNER",
    "PERMISSIONS",
    "ROLES_ENV",
    "AccessPolicy",
    "Action",
    "DatasetRef",
    "DatasetRule",
    "Grants",
    "Role",
    "User",
    "policy_path",
    "require",
]

#: The environment variable naming the roles file.
ROLES_ENV = "DPDASH_ROLES"
#: The largest roles file read (a few thousand entries fit easily).
MAX_ROLES_BYTES = 1_000_000


class Action(StrEnum):
    """What a person asks to do; its value says it in words (for messages)."""

    OPEN = "see the budget and what was released"
    PREVIEW = "see the schema and preview accuracy"
    REQUEST = "request a release"
    LOAD = "load or connect a table"
    DECLARE = "declare public facts"
    BUDGET = "set a budget or change the ledger's records"
    SEE_TRUTH = "see true values (sample rows, true answers, the data report)"
    RELEASE = "make, approve or decline a release"


#: What each role may do. Everything that spends budget or shows a true value is the owner's alone.
PERMISSIONS: Mapping[Role, frozenset[Action]] = {
    Role.OWNER: frozenset(Action),
    Role.ANALYST: frozenset({Action.OPEN, Action.PREVIEW, Action.REQUEST}),
    Role.VIEWER: frozenset({Action.OPEN}),
}


def _least_role(action: Action) -> Role:
    """The lowest role allowed ``action`` (for the message that refuses it)."""
    return min((role for role, allowed in PERMISSIONS.items() if action in allowed), key=lambda r: r.rank)


@dataclass(frozen=True, slots=True)
class DatasetRef:
    """A table as roles see it: its fingerprints (its own identity first, then its budget's, for a new
    version of budgeted people) and its names (the budget's name once one is set, else the table's)."""

    fingerprints: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "fingerprints", tuple(f for f in self.fingerprints if isinstance(f, str)))
        object.__setattr__(self, "names", tuple(n for n in self.names if isinstance(n, str)))

    @property
    def label(self) -> str:
        if self.names:
            return repr(self.names[0])
        if self.fingerprints:
            return f"the table {self.fingerprints[0][:19]}…"
        return "a new table"


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    """Roles per table (see the module docstring); ``source`` says where they were read from."""

    grants: Grants = field(default_factory=Grants)
    datasets: tuple[DatasetRule, ...] = ()
    groups_claim: str = "groups"
    source: str = ""

    @classmethod
    def single_owner(cls) -> AccessPolicy:
        """dpdash without sign-in: one person, the owner of every table."""
        return cls(grants=Grants(default=Role.OWNER, default_set=True), source="no sign-in: one local owner")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "the roles file") -> AccessPolicy:
        """The policy a parsed roles file states.

        Raises:
            RolesFileError: an unknown key, a role that is not one, a name with invisible characters, a
                table named twice, an entry naming its table both ways or neither.
        """
        if not isinstance(data, Mapping):
            raise RolesFileError(f"{source}: expected a TOML table, got {type(data).__name__}")
        grants = Grants.from_table(data, source, extra=("datasets", "groups_claim"))
        claim = _check_name(data.get("groups_claim", "groups"), "groups_claim", source)
        entries = data.get("datasets", [])
        if not isinstance(entries, list):
            raise RolesFileError(f"{source}: datasets must be written [[datasets]] (a list of tables)")
        rules: list[DatasetRule] = []
        seen: set[tuple[str, str]] = set()
        for number, entry in enumerate(entries, start=1):
            where = f"{source}, [[datasets]] entry {number}"
            if not isinstance(entry, Mapping):
                raise RolesFileError(f"{where} must be a table")
            fingerprint = entry.get("fingerprint")
            name = entry.get("name")
            if (fingerprint is None) == (name is None):
                raise RolesFileError(f"{where}: name its table by 'fingerprint' or by 'name' (one of them)")
            if fingerprint is not None:
                fingerprint = _fingerprint(_check_name(fingerprint, "fingerprint", where), where)
                key = ("fingerprint", fingerprint)
            else:
                name = unicodedata.normalize("NFC", _check_name(name, "name", where))
                key = ("name", name)
            if key in seen:
                raise RolesFileError(f"{where}: the table {key[1]!r} has an entry already")
            seen.add(key)
            rule_grants = Grants.from_table(entry, where, extra=("fingerprint", "name"))
            rules.append(DatasetRule(rule_grants, fingerprint=fingerprint, name=name))
        return cls(grants=grants, datasets=tuple(rules), groups_claim=claim, source=source)

    @classmethod
    def from_toml(cls, text: str, source: str = "the roles file") -> AccessPolicy:
        """The policy a roles file's text states (``RolesFileError`` for bad TOML, naming the line)."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise RolesFileError(f"{source} is not valid TOML: {error}") from None
        return cls.from_dict(data, source)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> AccessPolicy:
        """The policy of the roles file at ``path`` (UTF-8 TOML, at most ``MAX_ROLES_BYTES``)."""
        where = str(path)
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_ROLES_BYTES + 1)
        except OSError as error:
            raise RolesFileError(
                f"the roles file {where} cannot be read ({error.strerror or error}); set {ROLES_ENV} to the "
                "path of a roles file dpdash can read"
            ) from None
        if len(raw) > MAX_ROLES_BYTES:
            raise RolesFileError(f"the roles file {where} is larger than {MAX_ROLES_BYTES:,} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RolesFileError(f"the roles file {where} is not UTF-8 text") from None
        return cls.from_toml(text, source=where)

    def rule_for(self, dataset: DatasetRef) -> DatasetRule | None:
        """The table's own rule: by fingerprint (its own, then its budget's), else by name; or ``None``."""
        for fingerprint in dataset.fingerprints:
            for rule in self.datasets:
                if rule.fingerprint is not None and rule.fingerprint == fingerprint.lower():
                    return rule
        names = [unicodedata.normalize("NFC", name) for name in dataset.names]
        for name in names:
            for rule in self.datasets:
                if rule.name is not None and rule.name == name:
                    return rule
        return None

    def rules_for(self, dataset: DatasetRef) -> tuple[DatasetRule, ...]:
        """The table's own rules: its fingerprint rule (its own, then its budget's) if there is one; else
        every name rule one of its names matches (a table read from several files, each with a rule, has
        them all)."""
        rule = self.rule_for(dataset)
        if rule is None or rule.fingerprint is not None:
            return () if rule is None else (rule,)
        names = {unicodedata.normalize("NFC", name) for name in dataset.names}
        return tuple(rule for rule in self.datasets if rule.name is not None and rule.name in names)

    def role_for(self, user: User, dataset: DatasetRef | None) -> Role | None:
        """``user``'s role on ``dataset`` (``None``: a table not loaded yet, where only the top level
        counts), or ``None`` for no access. Where several name rules match the table, the lowest role any
        of them gives counts (each rule that says nothing of ``user`` gives the top level's)."""
        top = self.grants.decide(user)[1]
        if dataset is None:
            return top
        roles = []
        for rule in self.rules_for(dataset):
            decided, role = rule.grants.decide(user)
            roles.append(role if decided else top)
        if not roles:
            return top
        if None in roles:
            return None
        return min((role for role in roles if role is not None), key=lambda r: r.rank)

    def check(self, user: User, action: Action, dataset: DatasetRef | None) -> Role:
        """``user``'s role on ``dataset`` if it allows ``action``; else ``AccessDenied`` naming who, what
        and why."""
        role = self.role_for(user, dataset)
        require(role, action, user=user, dataset=dataset)
        assert role is not None
        return role


def require(role: Role | None, action: Action, *, user: User, dataset: DatasetRef | None = None) -> None:
    """Nothing if ``role`` allows ``action``; else ``AccessDenied`` saying who asked, for what and why.

    >>> require(Role.ANALYST, Action.PREVIEW, user=User(subject="x"))
    >>> require(None, Action.OPEN, user=User(subject="x"))
    Traceback (most recent call last):
    ...
    dpdash.errors.AccessDenied: subject x has no role on a new table and may not see the budget and what \
was released. Ask an owner of dpdash to change the roles file if you need it.
    """
    if role is not None and action in PERMISSIONS[role]:
        return
    what = "a new table" if dataset is None else dataset.label
    ask = " Ask an owner of dpdash to change the roles file if you need it."
    if role is None:
        raise AccessDenied(f"{user.label} has no role on {what} and may not {action.value}.{ask}")
    least = _least_role(action)
    whose = "owners" if least is Role.OWNER else f"{least.value}s and above"
    raise AccessDenied(
        f"{user.label} is {role.article} {role.value} on {what} and may not {action.value}: that is for "
        f"{whose} of the table.{ask}"
    )


def policy_path() -> Path | None:
    """The roles file ``$DPDASH_ROLES`` names, or ``None`` when it is unset."""
    configured = os.environ.get(ROLES_ENV, "").strip()
    return Path(configured).expanduser() if configured else None
