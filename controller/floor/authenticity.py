"""Whether a record comes from its table: the Ed25519 signature the table's feed sent with it,
checked against the table's public key from the floor's config.

The floor holds public keys only, so a floor (or anyone who reads its config or its database)
cannot make a record that passes this check. Pure: no I/O, the keys are handed in."""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from controller.feed.keys import signed_bytes
from controller.journal.record import Record


def public_keys(raw: dict[str, bytes]) -> dict[str, Ed25519PublicKey]:
    """Key objects for each table, made once (verifying with a ready key is the cheap part)."""
    return {table: Ed25519PublicKey.from_public_bytes(key) for table, key in raw.items()}


def forgery(site: str, record: Record, signature: bytes | None,
            key: Ed25519PublicKey | None) -> str | None:
    """``None`` when ``signature`` is the table's over ``record``; else why it is not."""
    if key is None:
        return f"no public key for table {record.table_id!r} in the floor's config " \
               "([floor.keys])"
    if signature is None:
        return "not signed"
    try:
        key.verify(signature, signed_bytes(site, record.table_id, record.seq, record.hash))
    except InvalidSignature:
        return f"signature is not table {record.table_id!r}'s (forged, or signed with " \
               "another key)"
    return None
