"""Signed ledger exports: Ed25519 signatures (RFC 8032) over the export's canonical JSON.

A digest anyone can recompute proves nothing about who wrote an export. Each ledger therefore has an
Ed25519 key pair and signs every export with it: created with the ledger and kept in its ``meta`` table
(as private as the ledger file), or, for a PostgreSQL ledger set up by an administrator
(``storage.postgres_setup``), kept outside it in a key file the app reads (``DPDASH_SIGNING_KEY_FILE``,
``read_key_file``) while the ledger holds only the public key, so the app's database role cannot read
the private key from any table. An import verifies the signature, and trusts the export's origin only if the
key is the importing ledger's own or one its owner has declared trusted (``Ledger.trust_key``).

Keys are written ``ed25519:<64 hex digits>`` (the 32-byte raw public key); signatures are the 64-byte
Ed25519 signature in hex, over ``canonical_json`` of the export without its ``signature`` member.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from dpdash.accounting.events import canonical_json
from dpdash.errors import LedgerError, ParameterError, ParameterTypeError

__all__ = [
    "ALGORITHM",
    "KEY_FILE_VARIABLE",
    "new_private_key",
    "public_key",
    "read_key_file",
    "sign",
    "signed_by",
    "valid_public_key",
    "write_key_file",
]

ALGORITHM = "ed25519"
#: The environment variable naming the private key file of a ledger that keeps only its public key.
KEY_FILE_VARIABLE = "DPDASH_SIGNING_KEY_FILE"
_PRIVATE = re.compile(r"[0-9a-f]{64}")
_KEY = re.compile(r"ed25519:[0-9a-f]{64}")
_SIGNATURE = re.compile(r"[0-9a-f]{128}")


def new_private_key() -> str:
    """A fresh private key (32 random bytes from the OS, via ``cryptography``), as hex."""
    from cryptography.hazmat.primitives import serialization

    raw = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return raw.hex()


def read_key_file(path: str | os.PathLike[str]) -> str:
    """The private key (hex) in a key file written by ``write_key_file``; a ``LedgerError`` that says what
    is wrong if it cannot be read or holds no key."""
    try:
        text = Path(path).read_text(encoding="ascii").strip().lower()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or "not ASCII text"
        raise LedgerError(f"cannot read the signing key file {path} ({reason})") from None
    if not _PRIVATE.fullmatch(text):
        raise LedgerError(
            f"the signing key file {path} holds no Ed25519 private key (64 hex digits, as "
            "`python -m dpdash.ledger.storage.postgres_setup` writes it)"
        )
    return text


def write_key_file(path: str | os.PathLike[str], private_hex: str) -> None:
    """Write a private key to a new file, readable by its owner only (mode 0600); never over a file that
    exists (a ``LedgerError``: another key would be lost)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise LedgerError(
            f"the signing key file {path} already exists: give the path of a new file"
        ) from None
    except OSError as error:
        raise LedgerError(f"cannot write the signing key file {path} ({error.strerror})") from None
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        file.write(private_hex + "\n")
        file.flush()
        os.fsync(file.fileno())


def _private(private_hex: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(bytes.fromhex(private_hex))


def public_key(private_hex: str) -> str:
    """The public key ``ed25519:<hex>`` of a private key."""
    from cryptography.hazmat.primitives import serialization

    raw = (
        _private(private_hex)
        .public_key()
        .public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )
    return f"{ALGORITHM}:{raw.hex()}"


def valid_public_key(key: object) -> str:
    """``key`` if it is a public key written ``ed25519:<64 hex digits>``; else a ``ParameterError``."""
    if not isinstance(key, str):
        raise ParameterTypeError(f"a public key must be a string, got {type(key).__name__}")
    key = key.strip().lower()
    if not _KEY.fullmatch(key):
        raise ParameterError(
            f"a public key is written 'ed25519:' followed by 64 hex digits, got {key[:80]!r}"
        )
    return key


def _payload(document: dict[str, Any]) -> bytes:
    return canonical_json({k: v for k, v in document.items() if k != "signature"}).encode("utf-8")


def sign(document: dict[str, Any], private_hex: str) -> dict[str, Any]:
    """The document with a ``signature`` member: ``{"algorithm", "public_key", "value"}``."""
    value = _private(private_hex).sign(_payload(document)).hex()
    return {
        **document,
        "signature": {"algorithm": ALGORITHM, "public_key": public_key(private_hex), "value": value},
    }


def signed_by(document: dict[str, Any]) -> str | None:
    """The public key whose signature the document carries, verified; ``None`` if it is unsigned.

    Raises:
        LedgerError: the signature is malformed or does not match the document (it was changed after it
            was signed).
    """
    signature = document.get("signature")
    if signature is None:
        return None
    if not isinstance(signature, dict) or signature.get("algorithm") != ALGORITHM:
        raise LedgerError(f"the export's signature is not an {ALGORITHM} signature; nothing was imported")
    try:
        key = valid_public_key(signature.get("public_key"))
    except (ParameterError, ParameterTypeError) as error:
        raise LedgerError(
            f"the export's signature names no valid key ({error}); nothing was imported"
        ) from None
    value = signature.get("value")
    if not isinstance(value, str) or not _SIGNATURE.fullmatch(value):
        raise LedgerError("the export's signature value is malformed; nothing was imported")
    verifier = Ed25519PublicKey.from_public_bytes(bytes.fromhex(key.split(":", 1)[1]))
    try:
        verifier.verify(bytes.fromhex(value), _payload(document))
    except InvalidSignature:
        raise LedgerError(
            "the export does not match its signature: it was changed after it was signed; "
            "nothing was imported"
        ) from None
    return key
