"""Who is using dpdash: a signed-in person from the identity provider's ID token, or the local owner.

Apart from ``dpdash.access`` (what each role may do) and ``dpdash.roles_file`` (the roles file), which both
name a person; ``dpdash.access`` re-exports both names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dpdash.errors import AccessDenied

__all__ = ["LOCAL_OWNER", "User"]


def _strings(value: object) -> tuple[str, ...]:
    """A claim that lists names: a list of strings (anything else in it is left out), or one string."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple):
        return tuple(item for item in value if isinstance(item, str))
    return ()


@dataclass(frozen=True, slots=True)
class User:
    """A signed-in person, from the identity provider's ID token, or the local owner.

    ``subject`` is the provider's stable id (the ``sub`` claim); ``email`` names the person (for roles,
    messages and the ledger) only if ``email_verified``: from an ID token, only the literal ``true`` (OpenID
    Connect Core 1.0, section 5.1: a JSON boolean); "0", 0, "no", null or a missing claim leave it
    unverified, and the person is then named by the subject. ``groups`` are the names the groups claim
    lists.
    """

    subject: str
    email: str | None = None
    email_verified: bool = True
    groups: tuple[str, ...] = ()
    name: str = ""
    local: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.subject, str) or not self.subject:
            raise AccessDenied("a signed-in person needs a subject (the ID token's 'sub' claim); none given")
        if self.email is not None and not isinstance(self.email, str):
            raise AccessDenied(f"the ID token's email must be text, got {type(self.email).__name__}")
        object.__setattr__(self, "groups", tuple(self.groups))

    @classmethod
    def from_claims(cls, claims: Mapping[str, Any], *, groups_claim: str = "groups") -> User:
        """The person an ID token's claims (``st.user``) describe.

        Raises:
            AccessDenied: the claims have no subject.
        """
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise AccessDenied("the identity provider gave no subject ('sub' claim) for this sign-in")
        email = claims.get("email")
        return cls(
            subject=subject,
            email=email if isinstance(email, str) and email else None,
            # Only a provider that says it checked the address (the JSON literal true) lets it name anyone.
            email_verified=claims.get("email_verified") is True,
            groups=_strings(claims.get(groups_claim)),
            name=claims.get("name") if isinstance(claims.get("name"), str) else "",
        )

    @property
    def label(self) -> str:
        """How messages and the ledger's session name the person: the verified email, else the subject."""
        if self.local:
            return "the local owner"
        if self.email and self.email_verified:
            return self.email
        return f"subject {self.subject}"


#: The one person of a dpdash without sign-in: the owner of every table.
LOCAL_OWNER = User(subject="local", name="local owner", local=True)
