"""HMAC key files.

A key file holds the key as hexadecimal text on one line (trailing whitespace allowed), at
least 32 bytes (64 hex digits) of key: a key shorter than the hash gives less protection than
the hash itself. Generate one with ``python -c "import secrets; print(secrets.token_hex(32))"``
and keep it readable only by the controller's user (``chmod 0400``).
"""

from __future__ import annotations

from pathlib import Path

from controller.journal.errors import JournalKeyError

MIN_KEY_BYTES = 32


def load_hmac_key(path: str | Path) -> bytes:
    """Read and check a key file; every problem is one clear :class:`JournalKeyError` line."""
    try:
        text = Path(path).read_text(encoding="ascii").strip()
    except FileNotFoundError as error:
        raise JournalKeyError(f"HMAC key file {path}: not found") from error
    except UnicodeDecodeError as error:
        raise JournalKeyError(f"HMAC key file {path}: not hex text") from error
    except OSError as error:
        raise JournalKeyError(f"HMAC key file {path}: {error.strerror or error}") from error
    try:
        key = bytes.fromhex(text)
    except ValueError as error:
        raise JournalKeyError(f"HMAC key file {path}: not hex text") from error
    if len(key) < MIN_KEY_BYTES:
        raise JournalKeyError(
            f"HMAC key file {path}: {len(key)} bytes of key, need at least {MIN_KEY_BYTES}"
        )
    return key
