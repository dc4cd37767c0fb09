"""The surveillance journal: an append-only, hash-chained record of everything at the table.

``record`` defines a record and its canonical JSON; ``writer`` appends (through structlog) with
a durability policy, rotation and power-cut repair; ``verify`` proves a journal intact or names
its first damage; ``reader`` reads records back for review tools; ``retention`` deletes old
files without breaking verification. See ``docs/journal.md``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

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
from controller.journal.verify import Anchor, Problem, VerifyReport, verify
from controller.journal.policy import MONEY_EVENT_TYPES, Durability, JournalEvent

if TYPE_CHECKING:
    from controller.journal.retention import DEFAULT_RETENTION_DAYS, apply_retention
    from controller.journal.writer import JournalWriter

_LAZY = {"JournalWriter": "writer", "DEFAULT_RETENTION_DAYS": "retention",
         "apply_retention": "retention"}
"""The writer (and retention, which uses it) load on first use (PEP 562): a process that only
reads records (the floor feed, on a table with a memory budget) does not load structlog and
the writer's machinery with them."""


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_RETENTION_DAYS", "GENESIS_HASH", "MONEY_EVENT_TYPES", "Anchor", "Damage",
    "Durability", "Entry", "JournalClosedError", "JournalConfigError", "JournalDamagedError",
    "JournalError", "JournalEvent", "JournalFormatError", "JournalIOError", "JournalKeyError",
    "JournalValueError", "JournalWriter", "Problem", "Record", "VerifyReport", "apply_retention",
    "canonical_json", "event_type_of", "iter_entries", "iter_records", "load_hmac_key",
    "to_jsonable", "verify",
]
