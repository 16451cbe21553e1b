"""How a roles file reads (``access``): a table's or the top level's grants (users by subject or e-mail,
groups, a default), a ``[[datasets]]`` rule by whole fingerprint or by name, and the checks that refuse an
entry with invisible characters, a prefix of a fingerprint or an unknown role."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dpdash.people import User
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from dpdash.errors import RolesFileError

__all__ = ["DatasetRule", "Grants", "Role"]


class Role(StrEnum):
    """A person's role on one table (see the module docstring for what each may do)."""

    OWNER = "owner"
    ANALYST = "analyst"
    VIEWER = "viewer"

    @property
    def rank(self) -> int:
        """3 for an owner, 2 for an analyst, 1 for a viewer: the highest of several group roles wins."""
        return {"owner": 3, "analyst": 2, "viewer": 1}[self.value]

    @property
    def article(self) -> str:
        return "an" if self is Role.OWNER or self is Role.ANALYST else "a"


_NONE = "none"


# ---- people and tables ------------------------------------------------------------------------------
def _ascii_lower(text: str) -> str:
    """Lower-case A-Z only: ``str.lower`` would turn the Kelvin sign (U+212A) into a "k"."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


# ---- the policy -----------------------------------------------------------------------------------
def _check_name(text: object, what: str, where: str) -> str:
    """``text`` as a name the file may use: non-empty text, no surrounding spaces, no invisible or control
    characters (they would match nothing while looking like another name)."""
    if not isinstance(text, str):
        raise RolesFileError(f"{where}: {what} must be text, got {text!r}")
    if not text or text != text.strip():
        raise RolesFileError(f"{where}: {what} {text!r} is empty or has spaces around it")
    for character in text:
        if unicodedata.category(character) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            raise RolesFileError(
                f"{where}: {what} {text!r} holds an invisible or control character "
                f"(U+{ord(character):04X}); write the name without it"
            )
    return text


def _role(value: object, where: str) -> Role | None:
    if value == _NONE:
        return None
    if isinstance(value, str) and value in Role.__members__.values():
        return Role(value)
    choices = ", ".join(repr(v) for v in (*(r.value for r in Role), _NONE))
    raise RolesFileError(f"{where}: the role must be one of {choices}, got {value!r}")


def _user_key(key: str, where: str) -> str:
    """A ``[users]`` key as matched: ``sub:<subject>`` as written, an email with ASCII letters lower-cased."""
    key = _check_name(key, "the user", where)
    if key.startswith("sub:"):
        if len(key) == 4:
            raise RolesFileError(f"{where}: 'sub:' needs the subject after it")
        return key
    local, at, domain = key.rpartition("@")
    if not at or not local or not domain or any(c.isspace() for c in key):
        raise RolesFileError(
            f"{where}: the user {key!r} is neither an email (name@domain) nor a subject ('sub:<subject>')"
        )
    return _ascii_lower(key)


@dataclass(frozen=True, slots=True)
class Grants:
    """One block of a roles file (the top level, or a ``[[datasets]]`` entry): roles by person (matching
    keys: ``sub:<subject>`` or an email with ASCII letters lower-cased) and by group, and the default if
    ``default_set``. A role of ``None`` is the file's ``"none"``: no access."""

    users: tuple[tuple[str, Role | None], ...] = ()
    groups: tuple[tuple[str, Role | None], ...] = ()
    default: Role | None = None
    default_set: bool = False

    @classmethod
    def from_table(cls, data: Mapping[str, Any], where: str, extra: Iterable[str] = ()) -> Grants:
        known = {"users", "groups", "default", *extra}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RolesFileError(
                f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; known: {', '.join(sorted(known))}"
            )
        users: dict[str, Role | None] = {}
        for key, value in _mapping(data.get("users", {}), f"{where}: users").items():
            matched = _user_key(key, f"{where}, users")
            if matched in users:
                raise RolesFileError(f"{where}, users: {key!r} is listed twice (emails ignore ASCII case)")
            users[matched] = _role(value, f"{where}, users, {key!r}")
        groups = {
            _check_name(key, "the group", f"{where}, groups"): _role(value, f"{where}, groups, {key!r}")
            for key, value in _mapping(data.get("groups", {}), f"{where}: groups").items()
        }
        default_set = "default" in data
        default = _role(data["default"], f"{where}, default") if default_set else None
        return cls(tuple(users.items()), tuple(groups.items()), default, default_set)

    def decide(self, user: User) -> tuple[bool, Role | None]:
        """(whether this block says something about ``user``, the role it gives: ``None`` for none)."""
        users = dict(self.users)
        if f"sub:{user.subject}" in users:
            return True, users[f"sub:{user.subject}"]
        email = None if user.email is None or not user.email_verified else _ascii_lower(user.email)
        # "sub:" keys match subjects only, never an email claim that starts so
        if email is not None and not email.startswith("sub:") and email in users:
            return True, users[email]
        granted = [role for group, role in self.groups if group in user.groups]
        if granted:
            roles = [role for role in granted if role is not None]
            # "none" for a group takes nothing away from the person's other groups; only none at all is none.
            return True, max(roles, key=lambda r: r.rank) if roles else None
        if self.default_set:
            return True, self.default
        return False, None


def _fingerprint(text: str, where: str) -> str:
    """A rule's fingerprint, whole: ``sha256:`` and 64 hex digits (a prefix would never match, so the rule
    would silently protect nothing)."""
    digits = text.lower().removeprefix("sha256:")
    if not text.lower().startswith("sha256:") or len(digits) != 64 or digits.strip(_HEX):
        raise RolesFileError(
            f"{where}: a fingerprint is 'sha256:' and 64 hex digits, the whole identity the Data page shows "
            f"(copy it from there), got {text!r} ({len(digits)} digits after 'sha256:')"
        )
    return "sha256:" + digits


_HEX = "0123456789abcdef"


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RolesFileError(f"{where} must be a table of name = role, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class DatasetRule:
    """A ``[[datasets]]`` entry: one table, by fingerprint or by name, and its grants."""

    grants: Grants
    fingerprint: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if (self.fingerprint is None) == (self.name is None):
            raise RolesFileError("a [[datasets]] entry names its table by fingerprint or by name (one)")
