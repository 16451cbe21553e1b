"""Who uses this session: Streamlit's OpenID Connect sign-in, switched on by configuration, and the roles.

Sign-in is on when ``.streamlit/secrets.toml`` (or a file in Streamlit's ``secrets.files``) has an ``[auth]``
section in Streamlit's format (``redirect_uri``, ``cookie_secret``, ``client_id``, ``client_secret``,
``server_metadata_url``; docs/team.md, "Sign-in"). Then a visitor who has not signed in sees only the
sign-in page, and each signed-in person's role on a table comes from the roles file ``$DPDASH_ROLES``
(``dpdash.access``), read again whenever it changes. Without ``[auth]`` (the default) there is one person,
the local owner, and no roles file is read.

A half-done configuration is refused rather than guessed at: sign-in without a roles file, or a roles file
without sign-in (nobody would be checked against it), stops every page with a message saying what to set.

``st.user`` comes from the identity cookie Streamlit signs with ``cookie_secret`` at sign-in (the ID token's
claims): a browser cannot make it up. Groups are read from the token at sign-in, so a change of groups
counts from the next sign-in; a person named in the roles file is checked against it on every run.
"""

from __future__ import annotations

import logging
from pathlib import Path

import streamlit as st

from dpdash.access import (
    LOCAL_OWNER,
    ROLES_ENV,
    AccessPolicy,
    Action,
    DatasetRef,
    Role,
    User,
    policy_path,
)
from dpdash.errors import AccessDenied, RolesFileError
from ui.text import md

_LOG = logging.getLogger("dpdash.auth")

__all__ = ["access_policy", "check", "current_user", "role_of", "sign_in_gate", "sign_in_on", "user_box"]


def sign_in_on() -> bool:
    """Whether Streamlit's sign-in is configured (an ``[auth]`` section in the secrets)."""
    return bool(st.secrets.load_if_toml_exists() and "auth" in st.secrets)


@st.cache_data(max_entries=4, show_spinner=False)
def _read_policy(path: str, changed: tuple[int, int]) -> AccessPolicy:
    """The roles file, read again when its modification time or size (``changed``, part of the cache key)
    changes: an edit counts from the next run of every session."""
    return AccessPolicy.from_file(path)


def access_policy() -> AccessPolicy:
    """The roles in force: one local owner without sign-in, else the roles file's.

    Raises:
        RolesFileError: sign-in without a roles file, a roles file without sign-in, or a file that cannot
            be read or says something unclear.
    """
    path = policy_path()
    if not sign_in_on():
        if path is not None:
            raise RolesFileError(
                f"{ROLES_ENV} names a roles file ({path}), but sign-in is off, so nobody could be checked "
                "against it: add an [auth] section to .streamlit/secrets.toml (docs/team.md, 'Sign-in'), "
                f"or unset {ROLES_ENV} for the single-owner local mode"
            )
        return AccessPolicy.single_owner()
    if path is None:
        raise RolesFileError(
            f"sign-in is on (.streamlit/secrets.toml has [auth]) but no roles file says who may do what: set "
            f"{ROLES_ENV} to a roles file (docs/team.md, 'Roles')"
        )
    try:
        stat = Path(path).stat()
    except OSError as error:
        raise RolesFileError(
            f"the roles file {path} cannot be read ({error.strerror or error}); set {ROLES_ENV} to the path "
            "of a roles file dpdash can read"
        ) from None
    return _read_policy(str(path), (stat.st_mtime_ns, stat.st_size))


def current_user() -> User | None:
    """The person using this session: the local owner without sign-in; the signed-in person; ``None``
    before sign-in.

    Raises:
        RolesFileError: see ``access_policy``.
        AccessDenied: the identity provider gave no subject.
    """
    policy = access_policy()
    if not sign_in_on():
        return LOCAL_OWNER
    if st.user.get("is_logged_in") is not True:
        return None
    return User.from_claims(st.user.to_dict(), groups_claim=policy.groups_claim)


def role_of(dataset: DatasetRef | None) -> Role | None:
    """The current person's role on ``dataset`` (``None`` for a table not loaded yet); ``None`` for none."""
    user = current_user()
    return None if user is None else access_policy().role_for(user, dataset)


def check(action: Action, dataset: DatasetRef | None) -> Role:
    """The current person's role on ``dataset`` if it allows ``action``; else ``AccessDenied`` (also before
    sign-in) naming who, what and why."""
    user = current_user()
    if user is None:
        raise AccessDenied(f"nobody is signed in, so nobody may {action.value}: sign in first")
    return access_policy().check(user, action, dataset)


def sign_in_gate() -> User:
    """The person using this session; the sign-in page (and a stop) for anyone not signed in, and a
    message (and a stop) for a configuration that cannot be enforced."""
    try:
        user = current_user()
    except (RolesFileError, AccessDenied) as error:
        st.title("dpdash")
        if sign_in_on() and st.user.get("is_logged_in") is True:
            st.error(f"dpdash cannot check who may do what: {md(error)}", icon=":material/lock:")
        else:  # anyone at all: the roles file's path and the entry at fault go to the server's log only
            _LOG.error("dpdash cannot check who may do what: %s", error)
            st.error(
                "dpdash cannot check who may do what, so nobody can use it yet. Whoever runs this server "
                "will find why in its log.",
                icon=":material/lock:",
            )
        st.stop()
    if user is not None:
        return user
    st.title("dpdash")
    st.markdown(
        "A differential-privacy budget explorer. Sign in to see the tables you have a role on: owners "
        "release, analysts preview and request releases, viewers read the budget and the reports."
    )
    if st.button("Sign in", type="primary", key="auth_sign_in"):
        st.login()
    st.stop()


def user_box(user: User, role: Role | None) -> None:
    """The sidebar's line on who is signed in and their role on the active table, with "Sign out"."""
    if user.local:
        return
    what = "no role" if role is None else f"{role.article} **{role.value}**"
    st.markdown(f"Signed in as **{md(user.label)}**: {what} on this table.")
    if st.button("Sign out", key="auth_sign_out"):
        st.logout()
