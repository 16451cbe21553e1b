"""Signed ledger exports: Ed25519 signatures (RFC 8032) over the export's canonical JSON.

A digest anyone can recompute proves nothing about who wrote an export. Each ledger therefore holds an
Ed25519 key pair (created with the ledger, kept in its ``meta`` table, as private as the ledger file) and
signs every export with it. An import verifies the signature, and trusts the export's origin only if the
key is the importing ledger's own or one its owner has declared trusted (``Ledger.trust_key``).

Keys are written ``ed25519:<64 hex digits>`` (the 32-byte raw public key); signatures are the 64-byte
Ed25519 signature in hex, over ``canonical_json`` of the export without its ``signature`` member.
"""

from __future__ import annotations

import re
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from dpdash.accounting.events import canonical_json
from dpdash.errors import LedgerError, ParameterError, ParameterTypeError

__all__ = ["ALGORITHM", "new_private_key", "public_key", "sign", "signed_by", "valid_public_key"]

ALGORITHM = "ed25519"
_KEY = re.compile(r"ed25519:[0-9a-f]{64}")
_SIGNATURE = re.compile(r"[0-9a-f]{128}")


def new_private_key() -> str:
    """A fresh private key (32 random bytes from the OS, via ``cryptography``), as hex."""
    from cryptography.hazmat.primitives import serialization

    raw = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return raw.hex()


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
