"""Kinds of damage, and the check of one line on its own (before any chain check).

Both the verifier and the writer (when it resumes a journal after a restart) need to know
whether one line is a sound record; keeping the check here means they can never disagree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum

from controller.journal.errors import JournalFormatError
from controller.journal.record import Record, canonical_json, compute_hash, hmac_matches


class Damage(str, Enum):
    """What is wrong at the first bad place of a journal. The values appear in ``--json``."""

    ALTERED = "altered"
    """A record's content no longer matches its hash, or its link to the record before."""
    MISSING = "missing"
    """Records absent inside a file, or before the first record with no checkpoint for them."""
    REORDERED = "reordered"
    """A record appears before one that precedes it in sequence."""
    DUPLICATED = "duplicated"
    """A record appears a second time."""
    TRUNCATED = "truncated"
    """A file ends inside a record (torn line), or lost its last records."""
    BAD_HMAC = "bad_hmac"
    """A record's HMAC is absent or wrong for the given key: rewritten without the key."""
    MALFORMED = "malformed"
    """A line that is not a journal record at all (not UTF-8, not JSON, wrong fields)."""
    FILE_SWAPPED = "file_swapped"
    """Files out of order: the chain continues in another file than the next one."""
    GAP = "gap"
    """A whole file missing between two files."""


@dataclass(frozen=True, slots=True)
class LineFault:
    """Why one line, on its own, is not a sound record."""

    kind: Damage
    detail: str


def check_line(raw: bytes, hmac_key: bytes | None) -> Record | LineFault:
    """Parse one line (without its newline) and check it on its own: UTF-8, JSON, fields,
    canonical form, hash, and the HMAC when a key is given.

    The canonical-form check (the line must be byte-identical to the canonical rendering of
    what it parses to) is what makes *every* byte count: without it, ``1E-05`` for ``1e-05``
    or an added space would parse to the same values and pass the hash.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return LineFault(Damage.MALFORMED, "line is not UTF-8")
    try:
        data = json.loads(text)
    except ValueError:
        return LineFault(Damage.MALFORMED, "line is not JSON")
    if not isinstance(data, dict):
        return LineFault(Damage.MALFORMED, "line is not a JSON object")
    try:
        record = Record.from_dict(data)
    except JournalFormatError as error:
        return LineFault(Damage.MALFORMED, str(error))
    try:
        canonical = canonical_json(data)
    except ValueError:
        return LineFault(Damage.MALFORMED, "line holds values outside canonical JSON")
    if canonical != text:
        return LineFault(Damage.ALTERED, "line is not in canonical form")
    body = record.body()
    if compute_hash(body) != record.hash:
        return LineFault(Damage.ALTERED, "hash does not match the record's content")
    if hmac_key is not None:
        if record.hmac is None:
            return LineFault(Damage.BAD_HMAC, "record carries no HMAC")
        if not hmac_matches(hmac_key, body, record.hmac):
            return LineFault(Damage.BAD_HMAC, "HMAC does not match (rewritten, or wrong key)")
    return record
