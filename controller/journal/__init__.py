"""The surveillance journal: an append-only, hash-chained record of everything at the table.

``record`` defines a record and its canonical JSON; ``writer`` appends (through structlog) with
a durability policy, rotation and power-cut repair; ``verify`` proves a journal intact or names
its first damage; ``reader`` reads records back for review tools; ``retention`` deletes old
files without breaking verification. See ``docs/journal.md``.
"""

from __future__ import annotations

from controller.journal.damage import Damage
from controller.journal.errors import (
    JournalClosedError,
    JournalConfigError,
    JournalDamagedError,
    JournalError,
    JournalFormatError,
    JournalIOError,
    JournalKeyError,
    JournalValueError,
)
from controller.journal.keys import load_hmac_key
from controller.journal.reader import Entry, iter_entries, iter_records
from controller.journal.record import (
    GENESIS_HASH,
    Record,
    canonical_json,
    event_type_of,
    to_jsonable,
)
from controller.journal.retention import DEFAULT_RETENTION_DAYS, apply_retention
from controller.journal.verify import Anchor, Problem, VerifyReport, verify
from controller.journal.writer import JournalWriter
from controller.journal.policy import MONEY_EVENT_TYPES, Durability, JournalEvent

__all__ = [
    "DEFAULT_RETENTION_DAYS", "GENESIS_HASH", "MONEY_EVENT_TYPES", "Anchor", "Damage",
    "Durability", "Entry", "JournalClosedError", "JournalConfigError", "JournalDamagedError",
    "JournalError", "JournalEvent", "JournalFormatError", "JournalIOError", "JournalKeyError",
    "JournalValueError", "JournalWriter", "Problem", "Record", "VerifyReport", "apply_retention",
    "canonical_json", "event_type_of", "iter_entries", "iter_records", "load_hmac_key",
    "to_jsonable", "verify",
]
