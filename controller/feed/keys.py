"""Each table's signing key: its files, the bytes a signature covers, and how the floor names a
table's public key in its config.

A record on the wire is the journal line, whose hash the floor recomputes; a signature over the
record's site, table, seq and hash therefore vouches for every byte of it. The journal's HMAC
cannot do this for the floor: whoever can check an HMAC can also make one, so a floor holding
the journal key could forge any table's records, and a floor without it checks nothing
(docs/feed.md, "Authenticity"). Ed25519 splits the two: the table keeps the private key (a
file 0400 owned by the feed's account), the floor holds only public keys.

Formats are the standard ones, so OpenSSL reads them too: the private key is PKCS#8 PEM
(``openssl pkey -in KEY -pubout`` prints its public key), and the floor's config names a public
key by the base64 of its SubjectPublicKeyInfo -- the one line inside that ``-pubout`` PEM.
Both have a fixed layout for Ed25519, so this module reads them without loading
``cryptography`` in the feed (docs/feed.md, memory).
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
from pathlib import Path

from controller.feed.errors import KeyFileError

PRIVATE_PREFIX = bytes.fromhex("302e020100300506032b657004220420")
"""PKCS#8 ``PrivateKeyInfo`` of an Ed25519 key, up to its 32-byte seed (RFC 8410)."""
PUBLIC_PREFIX = bytes.fromhex("302a300506032b6570032100")
"""``SubjectPublicKeyInfo`` of an Ed25519 key, up to its 32 raw bytes (RFC 8410)."""
SIGNATURE_PROPERTY = "sig"
"""The MQTT 5 user property carrying a record's signature (base64 of 64 bytes)."""
DOMAIN = b"tablectl-feed-record/1\n"
"""Prefixed to what is signed, so a table's key signs nothing else that could pass for it."""
PEM_BEGIN = "-----BEGIN PRIVATE KEY-----"
PEM_END = "-----END PRIVATE KEY-----"


def signed_bytes(site: str, table: str, seq: int, record_hash: str) -> bytes:
    """What a table signs for one record. The site is in it because the topic names it and the
    record does not: a record signed for one site cannot be replayed into another."""
    return DOMAIN + f"{site}\n{table}\n{seq}\n{record_hash}".encode()


def private_key_pem(seed: bytes) -> bytes:
    if len(seed) != 32:
        raise KeyFileError(f"an Ed25519 private key is 32 bytes, got {len(seed)}")
    body = base64.b64encode(PRIVATE_PREFIX + seed).decode()
    return f"{PEM_BEGIN}\n{body}\n{PEM_END}\n".encode()


def public_key_text(raw: bytes) -> str:
    """The floor's config form of a public key (base64 of its SubjectPublicKeyInfo)."""
    if len(raw) != 32:
        raise KeyFileError(f"an Ed25519 public key is 32 bytes, got {len(raw)}")
    return base64.b64encode(PUBLIC_PREFIX + raw).decode()


def parse_public_key(text: str) -> bytes:
    """The 32 raw bytes of a public key written as :func:`public_key_text` writes it."""
    try:
        der = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError) as error:
        raise KeyFileError("not base64 (the line inside the PEM that "
                           "'tablectl feed keygen' or 'openssl pkey -pubout' prints)") from error
    if len(der) != len(PUBLIC_PREFIX) + 32 or not der.startswith(PUBLIC_PREFIX):
        raise KeyFileError("not an Ed25519 public key")
    return der[len(PUBLIC_PREFIX):]


def read_private_seed(path: Path) -> bytes:
    """The 32-byte seed of the private key file, refused unless it is the feed's alone: owned
    by this process's user and readable by no one else (mode 0400 or 0600), like ssh does."""
    try:
        info = path.stat()
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as error:
        detail = error.strerror if isinstance(error, OSError) else "not a PEM file"
        raise KeyFileError(f"signing key {path}: {detail or error}") from error
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(f"signing key {path}: mode {stat.S_IMODE(info.st_mode):04o} lets "
                           "others read it; chmod 0400 (owner: the feed's user)")
    if info.st_uid != os.geteuid():
        raise KeyFileError(f"signing key {path}: owned by uid {info.st_uid}, not by the feed's "
                           f"user (uid {os.geteuid()}); chown it to the feed's account")
    lines = [line.strip() for line in text.strip().splitlines()]
    if len(lines) < 3 or lines[0] != PEM_BEGIN or lines[-1] != PEM_END:
        raise KeyFileError(f"signing key {path}: not a PEM private key")
    try:
        der = base64.b64decode("".join(lines[1:-1]), validate=True)
    except (binascii.Error, ValueError) as error:
        raise KeyFileError(f"signing key {path}: PEM body is not base64") from error
    if len(der) != len(PRIVATE_PREFIX) + 32 or not der.startswith(PRIVATE_PREFIX):
        raise KeyFileError(f"signing key {path}: not an Ed25519 private key (make one with "
                           "'tablectl feed keygen')")
    return der[len(PRIVATE_PREFIX):]


def generate_key_file(path: Path) -> str:
    """Create a new private key at ``path`` (mode 0400, never over an existing file) and return
    its public key as the floor's config writes it. Uses ``cryptography`` (the command line,
    not the feed, pays for loading it)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (Encoding, NoEncryption,
                                                              PrivateFormat, PublicFormat)

    key = Ed25519PrivateKey.generate()
    seed = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
    except FileExistsError as error:
        raise KeyFileError(f"signing key {path} exists already: a new key would orphan the "
                           "floor's copy of the public key; move it away first") from error
    except OSError as error:
        raise KeyFileError(f"signing key {path}: {error.strerror or error}") from error
    try:
        os.fchmod(fd, 0o400)  # whatever the umask
        os.write(fd, private_key_pem(seed))
        os.fsync(fd)
    finally:
        os.close(fd)
    return public_key_text(public)
