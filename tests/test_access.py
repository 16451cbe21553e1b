"""Roles per table (dpdash.access): the roles file, how a person's role is found, what each role may do,
and names that try to pass for others."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpdash.access import (
    LOCAL_OWNER,
    PERMISSIONS,
    AccessPolicy,
    Action,
    DatasetRef,
    Role,
    User,
    policy_path,
    require,
)
from dpdash.errors import AccessDenied, DPDashError, RolesFileError

SURVEY = DatasetRef(fingerprints=("sha256:" + "ab" * 32,), names=("survey",))
PAYROLL = DatasetRef(fingerprints=("sha256:" + "cd" * 32, "sha256:" + "ef" * 32), names=("payroll",))
NEW_VERSION = DatasetRef(fingerprints=("sha256:" + "12" * 32, "sha256:" + "ab" * 32), names=("survey",))

POLICY = AccessPolicy.from_toml(
    f"""
default = "viewer"

[users]
"Alice@Example.org" = "owner"
"sub:analyst-7" = "analyst"
"mallory@example.org" = "none"

[groups]
"dp-analysts" = "analyst"
"dp-owners" = "owner"
"contractors" = "none"

[[datasets]]
fingerprint = "sha256:{"cd" * 32}"
default = "none"
users = {{ "bob@example.org" = "analyst" }}
groups = {{ "payroll-team" = "owner" }}

[[datasets]]
name = "survey"
groups = {{ "survey-viewers" = "viewer" }}
"""
)


def person(email: str | None = None, *, sub: str = "s-1", groups: tuple[str, ...] = (), **extra) -> User:
    return User(subject=sub, email=email, groups=groups, **extra)


# ---- who gets which role -----------------------------------------------------------------------------
def test_without_sign_in_the_local_owner_owns_every_table() -> None:
    policy = AccessPolicy.single_owner()
    for table in (SURVEY, PAYROLL, None):
        assert policy.role_for(LOCAL_OWNER, table) is Role.OWNER
    assert LOCAL_OWNER.label == "the local owner"


def test_the_top_level_users_then_groups_then_default() -> None:
    assert POLICY.role_for(person("alice@example.org"), SURVEY) is Role.OWNER
    assert POLICY.role_for(person(None, sub="analyst-7"), SURVEY) is Role.ANALYST
    assert POLICY.role_for(person("carol@example.org", groups=("dp-analysts",)), SURVEY) is Role.ANALYST
    assert POLICY.role_for(person("dan@example.org"), SURVEY) is Role.VIEWER  # the default
    named_none = person("mallory@example.org", groups=("dp-owners",))
    assert POLICY.role_for(named_none, SURVEY) is None  # named with "none": their groups do not count


def test_a_persons_highest_group_role_counts_and_none_for_a_group_takes_nothing_away() -> None:
    both = person("erin@example.org", groups=("dp-analysts", "dp-owners"))
    assert POLICY.role_for(both, None) is Role.OWNER
    also_analyst = person("f@example.org", groups=("contractors", "dp-analysts"))
    assert POLICY.role_for(also_analyst, None) is Role.ANALYST
    assert POLICY.role_for(person("g@example.org", groups=("contractors",)), None) is None


def test_a_tables_own_rule_comes_first_and_its_default_shuts_out_everyone_else() -> None:
    assert POLICY.role_for(person("bob@example.org"), PAYROLL) is Role.ANALYST
    assert POLICY.role_for(person("h@example.org", groups=("payroll-team",)), PAYROLL) is Role.OWNER
    # Owner everywhere else, but payroll's rule says "none" for anyone it does not name.
    assert POLICY.role_for(person("alice@example.org"), PAYROLL) is None
    assert POLICY.role_for(person("dan@example.org"), PAYROLL) is None
    assert POLICY.role_for(person("bob@example.org"), SURVEY) is Role.VIEWER


def test_a_rule_without_a_default_falls_back_to_the_top_level() -> None:
    assert POLICY.role_for(person("i@example.org", groups=("survey-viewers",)), SURVEY) is Role.VIEWER
    assert POLICY.role_for(person("alice@example.org", groups=("survey-viewers",)), SURVEY) is Role.VIEWER
    assert POLICY.role_for(person("alice@example.org"), SURVEY) is Role.OWNER


def test_a_new_version_of_budgeted_people_follows_its_budgets_fingerprint() -> None:
    policy = AccessPolicy.from_toml(
        f'[[datasets]]\nfingerprint = "sha256:{"ab" * 32}"\nusers = {{ "bob@example.org" = "owner" }}\n'
    )
    assert policy.role_for(person("bob@example.org"), NEW_VERSION) is Role.OWNER
    assert policy.role_for(person("bob@example.org"), DatasetRef(names=("survey",))) is None


def test_a_fingerprint_rule_wins_over_a_name_rule() -> None:
    policy = AccessPolicy.from_toml(
        f'[[datasets]]\nname = "payroll"\ndefault = "owner"\n'
        f'[[datasets]]\nfingerprint = "sha256:{"ef" * 32}"\ndefault = "viewer"\n'
    )
    assert policy.role_for(person("x@example.org"), PAYROLL) is Role.VIEWER
    assert policy.role_for(person("x@example.org"), DatasetRef(names=("payroll",))) is Role.OWNER


def test_a_table_several_name_rules_match_gets_the_lowest_role_they_give() -> None:
    """A folder read with a closed file in it is closed: every rule its names match counts, not the first
    (issue 25, item 4)."""
    policy = AccessPolicy.from_toml(
        '[users]\n"bob@example.org" = "owner"\n'
        '[[datasets]]\nname = "/data/open.parquet"\nusers = { "bob@example.org" = "owner" }\n'
        '[[datasets]]\nname = "/data/closed.parquet"\nusers = { "bob@example.org" = "analyst" }\n'
        '[[datasets]]\nname = "/data/secret.parquet"\ndefault = "none"\n'
    )
    bob = person("bob@example.org")
    both = DatasetRef(names=("visits", "/data/open.parquet", "/data/closed.parquet"))
    assert policy.role_for(bob, both) is Role.ANALYST
    assert policy.role_for(bob, DatasetRef(names=("/data/open.parquet", "/data/secret.parquet"))) is None
    assert policy.role_for(bob, DatasetRef(names=("/data/open.parquet", "other"))) is Role.OWNER


def test_names_are_compared_after_nfc_only() -> None:
    policy = AccessPolicy.from_toml('[[datasets]]\nname = "caf\u00e9"\ndefault = "analyst"\n')
    decomposed = DatasetRef(names=("cafe\u0301",))  # the same text, canonically
    assert policy.role_for(person("x@example.org"), decomposed) is Role.ANALYST
    assert policy.role_for(person("x@example.org"), DatasetRef(names=("CAF\u00c9",))) is None
    assert policy.role_for(person("x@example.org"), DatasetRef(names=("caf\u00e9 ",))) is None


# ---- names that try to pass for others ------------------------------------------------------------
@pytest.mark.parametrize(
    "email",
    [
        "al\u0131ce@example.org",  # a dotless i
        "alice@example.org\u200b",  # a zero-width space after it
        "\u202ealice@example.org",  # a right-to-left override
        "ａlice@example.org",  # a fullwidth "a"
        "аlice@example.org",  # a Cyrillic "а"
        " alice@example.org",
        "alice@example.org\n",
        "alice@example.org.evil",
        "alice@example.org@evil.example",
    ],
)
def test_look_alike_emails_get_nothing_of_the_real_ones(email: str) -> None:
    policy = AccessPolicy.from_toml('[users]\n"alice@example.org" = "owner"\n')
    assert policy.role_for(person("alice@example.org"), None) is Role.OWNER
    assert policy.role_for(person(email), None) is None


def test_the_kelvin_sign_is_not_a_k() -> None:
    # str.lower() turns U+212A KELVIN SIGN into an ASCII "k": emails ignore the case of ASCII letters only.
    policy = AccessPolicy.from_toml('[users]\n"kate@example.org" = "owner"\n')
    assert "\u212aate@example.org".lower() == "kate@example.org"
    assert policy.role_for(person("\u212aate@example.org"), None) is None
    assert policy.role_for(person("KATE@EXAMPLE.ORG"), None) is Role.OWNER
    # German sharp s folds to "ss" under casefold(); not here.
    policy = AccessPolicy.from_toml('[users]\n"strasse@example.org" = "owner"\n')
    assert policy.role_for(person("stra\u00dfe@example.org"), None) is None


def test_an_unverified_email_counts_for_nothing_but_the_subject_still_does() -> None:
    policy = AccessPolicy.from_toml('[users]\n"alice@example.org" = "owner"\n"sub:42" = "analyst"\n')
    claims = {"sub": "7", "email": "alice@example.org", "email_verified": False}
    assert policy.role_for(User.from_claims(claims), None) is None
    assert policy.role_for(User.from_claims({**claims, "email_verified": "false"}), None) is None
    assert policy.role_for(User.from_claims({**claims, "email_verified": True}), None) is Role.OWNER
    assert policy.role_for(User.from_claims({**claims, "sub": "42"}), None) is Role.ANALYST


@pytest.mark.parametrize("verified", ["0", 0, "no", None, "true", 1, "yes", "missing"])
def test_an_email_names_the_person_only_when_the_provider_says_true(verified: object) -> None:
    """Only the JSON literal true makes an email verified: anything else, or no claim, leaves the person
    named by their subject, in roles and in every label (messages, the ledger's sessions)."""
    policy = AccessPolicy.from_toml('[users]\n"ann@example.org" = "owner"\n')
    claims: dict[str, object] = {"sub": "mallory", "email": "ann@example.org"}
    if verified != "missing":
        claims["email_verified"] = verified
    mallory = User.from_claims(claims)
    assert not mallory.email_verified
    assert mallory.label == "subject mallory"
    assert policy.role_for(mallory, None) is None
    ann = User.from_claims({**claims, "sub": "ann", "email_verified": True})
    assert ann.label == "ann@example.org"
    assert policy.role_for(ann, None) is Role.OWNER


def test_a_subject_that_looks_like_an_email_is_not_that_email() -> None:
    policy = AccessPolicy.from_toml('[users]\n"alice@example.org" = "owner"\n')
    impostor = User.from_claims({"sub": "alice@example.org", "email": "mallory@example.org"})
    assert policy.role_for(impostor, None) is None
    # and "sub:" keys match subjects only, never an email
    policy = AccessPolicy.from_toml('[users]\n"sub:alice@example.org" = "owner"\n')
    assert policy.role_for(User.from_claims({"sub": "x", "email": "sub:alice@example.org"}), None) is None
    assert policy.role_for(User.from_claims({"sub": "alice@example.org"}), None) is Role.OWNER


def test_groups_are_matched_as_written() -> None:
    policy = AccessPolicy.from_toml('[groups]\n"DP-Owners" = "owner"\n')
    assert policy.role_for(person(groups=("DP-Owners",)), None) is Role.OWNER
    for group in ("dp-owners", "DP-Owners ", "DP\u2010Owners", "DP-Owners\u200b"):
        assert policy.role_for(person(groups=(group,)), None) is None


def test_the_groups_claim_is_configurable_and_only_lists_of_text_count() -> None:
    policy = AccessPolicy.from_toml('groups_claim = "roles"\n[groups]\n"admins" = "owner"\n')
    assert policy.groups_claim == "roles"
    user = User.from_claims({"sub": "1", "roles": ["admins", 3, None]}, groups_claim=policy.groups_claim)
    assert user.groups == ("admins",) and policy.role_for(user, None) is Role.OWNER
    assert User.from_claims({"sub": "1", "roles": "admins"}, groups_claim="roles").groups == ("admins",)
    assert User.from_claims({"sub": "1", "roles": {"admins": True}}, groups_claim="roles").groups == ()
    assert User.from_claims({"sub": "1"}, groups_claim="roles").groups == ()


def test_claims_without_a_subject_are_refused() -> None:
    for claims in ({}, {"sub": ""}, {"sub": 5}, {"email": "alice@example.org"}):
        with pytest.raises(AccessDenied, match="subject"):
            User.from_claims(claims)


def test_hostile_table_names_are_quoted_in_messages() -> None:
    name = "**x**\n<script>alert(1)</script>\u202e"
    with pytest.raises(AccessDenied) as caught:
        POLICY.check(person("dan@example.org"), Action.RELEASE, DatasetRef(names=(name,)))
    assert repr(name) in str(caught.value) and "\n" not in str(caught.value)


@given(st.text(alphabet=string.printable + "\u212a\u0130\u00df\u200b\uff41", max_size=30))
def test_only_an_ascii_case_variant_of_a_listed_email_gets_its_role(email: str) -> None:
    policy = AccessPolicy.from_toml('[users]\n"kate@example.org" = "owner"\n')
    expected = Role.OWNER if email.isascii() and email.lower() == "kate@example.org" else None
    assert policy.role_for(person(email or None), None) is expected


# ---- what each role may do ------------------------------------------------------------------------
def test_only_owners_see_true_values_spend_load_declare_or_set_budgets() -> None:
    owner_only = {Action.SEE_TRUTH, Action.RELEASE, Action.LOAD, Action.DECLARE, Action.BUDGET}
    assert PERMISSIONS[Role.OWNER] == frozenset(Action)
    assert not PERMISSIONS[Role.ANALYST] & owner_only
    assert PERMISSIONS[Role.ANALYST] == {Action.OPEN, Action.PREVIEW, Action.REQUEST}
    assert PERMISSIONS[Role.VIEWER] == {Action.OPEN}


def test_a_refusal_names_who_what_and_why() -> None:
    with pytest.raises(AccessDenied) as caught:
        POLICY.check(person("carol@example.org", groups=("dp-analysts",)), Action.SEE_TRUTH, SURVEY)
    message = str(caught.value)
    assert message.startswith("carol@example.org is an analyst on 'survey' and may not see true values")
    assert "that is for owners of the table" in message and "roles file" in message
    with pytest.raises(AccessDenied, match="viewer on 'survey' and may not request a release: that is for "
                                           "analysts and above"):  # fmt: skip
        POLICY.check(person("dan@example.org"), Action.REQUEST, SURVEY)
    with pytest.raises(AccessDenied, match=r"^subject s-1 has no role on 'payroll'"):
        POLICY.check(person(None), Action.OPEN, PAYROLL)
    with pytest.raises(AccessDenied, match="no role on a new table and may not load or connect a table"):
        require(None, Action.LOAD, user=person(None))
    error = AccessDenied("x")
    assert isinstance(error, DPDashError) and isinstance(error, PermissionError)


def test_check_returns_the_role_that_allowed_it() -> None:
    assert POLICY.check(person("alice@example.org"), Action.RELEASE, SURVEY) is Role.OWNER
    assert POLICY.check(person("dan@example.org"), Action.OPEN, SURVEY) is Role.VIEWER


# ---- the file -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('defualt = "owner"', "unknown key.*'defualt'"),
        ('default = "admin"', "role must be one of 'owner', 'analyst', 'viewer', 'none', got 'admin'"),
        ('default = "Owner"', "got 'Owner'"),
        ('[users]\n"alice" = "owner"', "neither an email"),
        ('[users]\n"sub:" = "owner"', "needs the subject"),
        ('[users]\n"alice@example.org\u200b" = "owner"', "invisible or control character \\(U\\+200B\\)"),
        ('[users]\n"\u202ealice@example.org" = "owner"', "U\\+202E"),
        ('[users]\n" alice@example.org" = "owner"', "spaces around it"),
        ('[users]\n"a@x.org" = "owner"\n"A@X.org" = "viewer"', "listed twice"),
        ('[groups]\n"te\\nam" = "owner"', "U\\+000A"),
        ('[groups]\n"" = "owner"', "empty"),
        ("users = 3", "users must be a table"),
        ("datasets = 3", "written \\[\\[datasets\\]\\]"),
        ("[[datasets]]\ndefault = \"viewer\"", "by 'fingerprint' or by 'name'"),
        ('[[datasets]]\nname = "a"\nfingerprint = "sha256:' + "a" * 64 + '"', "'fingerprint' or by 'name'"),
        ('[[datasets]]\nfingerprint = "abc"', "'sha256:' and 64 hex digits"),
        ('[[datasets]]\nname = "a"\n[[datasets]]\nname = "a"', "'a' has an entry already"),
        ('[[datasets]]\nname = "a"\nowner = "x@y.org"', "unknown key.*'owner'"),
        ('[[datasets]]\nname = "a"\ngroups_claim = "g"', "unknown key"),
        ("default = ", "not valid TOML"),
        ('groups_claim = ""', "empty"),
    ],
)
def test_an_unclear_roles_file_is_refused_with_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(RolesFileError, match=message):
        AccessPolicy.from_toml(text)


@pytest.mark.parametrize("digits", ["ab" * 10, "ab" * 20, "ab" * 31 + "a", "ab" * 33, "ab" * 31 + "zz"])
def test_a_fingerprint_rule_must_give_the_whole_identity(digits: str) -> None:
    """A prefix (20 or 40 digits), one digit too few or too many, or a digit that is not hex would match no
    table: the file is refused, saying where to copy the identity from (issue 25, item 5)."""
    text = f'[[datasets]]\nfingerprint = "sha256:{digits}"\ndefault = "none"\n'
    with pytest.raises(RolesFileError, match=r"entry 1: a fingerprint is 'sha256:' and 64 hex.*Data page"):
        AccessPolicy.from_toml(text)
    whole = AccessPolicy.from_toml(f'default = "viewer"\n[[datasets]]\nfingerprint = "SHA256:{"AB" * 32}"\n'
                                   'default = "none"\n')  # fmt: skip
    assert whole.role_for(person(), SURVEY) is None  # upper-case hex is the same identity


def test_an_empty_file_gives_nobody_anything() -> None:
    policy = AccessPolicy.from_toml("")
    assert policy.role_for(person("alice@example.org", groups=("g",)), SURVEY) is None


def test_reading_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "roles.toml"
    path.write_text('default = "analyst"\n', encoding="utf-8")
    policy = AccessPolicy.from_file(path)
    assert policy.source == str(path) and policy.role_for(person(), None) is Role.ANALYST
    with pytest.raises(RolesFileError, match=r"cannot be read.*DPDASH_ROLES"):
        AccessPolicy.from_file(tmp_path / "missing.toml")
    path.write_bytes(b"default = \"\xff\"")
    with pytest.raises(RolesFileError, match="not UTF-8"):
        AccessPolicy.from_file(path)
    path.write_bytes(b"#" * 1_000_001)
    with pytest.raises(RolesFileError, match="larger than"):
        AccessPolicy.from_file(path)
    path.write_text('default = "root"', encoding="utf-8")
    with pytest.raises(RolesFileError, match=f"^{path}, default: the role must be"):
        AccessPolicy.from_file(path)
    monkeypatch.delenv("DPDASH_ROLES", raising=False)
    assert policy_path() is None
    monkeypatch.setenv("DPDASH_ROLES", f"  {path}  ")
    assert policy_path() == path
