"""One journal record: its fields, its canonical JSON form, its hash and its HMAC.

A record is one line of JSON. Its ``hash`` is SHA-256 over the canonical JSON of every other
field except ``hmac``; its ``prev`` is the previous record's ``hash``. Because the canonical form
is defined byte for byte (see ``docs/journal.md``), an auditor can recompute every hash with any
JSON library and ``sha256``, without this code. The optional ``hmac`` is HMAC-SHA256 over the
same bytes with a secret key: anyone can recompute a hash after rewriting a record, only the key
holder can recompute the HMAC.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac as hmac_lib
import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timezone
from enum import Enum
from pathlib import PurePath
from typing import Any

from controller.games.cards import Card
from controller.journal.errors import JournalFormatError, JournalValueError

FORMAT_VERSION = 1
"""``v`` of every record; bumped only if the canonical form or the field set changes."""

GENESIS_HASH = "0" * 64
"""``prev`` of the very first record (seq 1) of a journal."""

FIRST_SEQ = 1

BODY_KEYS = frozenset(
    {"v", "seq", "ts", "mono_ns", "table", "round", "event", "actor", "payload", "prev"}
)
"""The fields the hash covers: every field of a record except ``hash`` and ``hmac``."""

RECORD_KEYS = BODY_KEYS | {"hash"}
OPTIONAL_KEYS = frozenset({"hmac"})


def canonical_json(value: Any) -> str:
    """The canonical JSON text of an already-jsonable value: keys sorted by code point, no
    whitespace, non-ASCII characters as themselves (``ensure_ascii=False``), no NaN/Infinity.

    Sorting and fixed separators make the bytes a function of the values alone, so a hash
    computed at the table can be recomputed anywhere.
    """
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as error:
        raise JournalValueError(f"value is not canonical JSON: {error}") from error


def canonical_bytes(value: Any) -> bytes:
    """UTF-8 of :func:`canonical_json`; what the hash and the HMAC are computed over."""
    return canonical_json(value).encode("utf-8")


def _key(key: Any) -> str:
    if isinstance(key, Enum):
        key = key.value
    if isinstance(key, str):
        return key
    if isinstance(key, int) and not isinstance(key, bool):
        return str(key)
    raise JournalValueError(f"mapping key {key!r} is not a string, an int or an Enum")


def _exact_number(value: Any) -> str | None:
    """A ``Fraction`` as ``"n/d"``, a ``Decimal`` as its string, anything else None.

    The classes are looked up among the loaded modules instead of imported: a value can only
    be a Fraction if ``fractions`` is loaded. So a process that only reads records (the feed on
    the table, docs/feed.md "Memory") does not load ``fractions`` and ``decimal`` for them."""
    fractions = sys.modules.get("fractions")
    if fractions is not None and isinstance(value, fractions.Fraction):
        return f"{value.numerator}/{value.denominator}"
    decimal = sys.modules.get("decimal")
    if decimal is not None and isinstance(value, decimal.Decimal):
        return str(value)
    return None


def to_jsonable(value: Any) -> Any:
    """Turn a payload value into plain JSON values, deterministically.

    Cards become their two-character code (``TD``) so a journal line reads like the table;
    Enums their value; frozen dataclasses (device events, round events) a mapping of their
    init fields (derived fields such as ``Card.index`` are left out); tuples and lists lists;
    sets sorted lists; ``Fraction`` ``"n/d"`` and ``Decimal`` its string, so that no money
    value ever passes through a float. Anything else is refused rather than guessed at.

    The plain types come first, by exact type (a studio's settlement is 2,000 results of a
    dozen values each, walked for the journal and again for the watchers: issue 28); an
    ``Enum`` or another subclass takes the general path.
    """
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is dict:
        plain: dict[str, Any] = {}
        for key, item in value.items():
            name = key if type(key) is str else _key(key)
            if name in plain:
                raise JournalValueError(f"mapping key {name!r} appears twice after conversion")
            plain[name] = item if type(item) in _LEAVES else to_jsonable(item)
        return plain
    if kind is list or kind is tuple:
        return [item if type(item) in _LEAVES else to_jsonable(item) for item in value]
    names = _INIT_FIELDS.get(kind)
    if names is not None:
        fields: dict[str, Any] = {}
        for name in names:
            item = getattr(value, name)
            fields[name] = item if type(item) in _LEAVES else to_jsonable(item)
        return fields
    return _general(value)


_LEAVES = frozenset({str, int, bool, type(None)})
"""Types :func:`to_jsonable` returns as they are (by exact type: not their subclasses)."""


_INIT_FIELDS: dict[type, tuple[str, ...]] = {}
"""Per dataclass type, the names of its init fields (what :func:`to_jsonable` journals)."""


def _general(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Enum):
        return to_jsonable(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise JournalValueError(f"cannot journal the non-finite float {value!r}")
        return value
    if isinstance(value, Card):
        return value.code
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = tuple(f.name for f in dataclasses.fields(value) if f.init)
        _INIT_FIELDS[type(value)] = names
        return {name: to_jsonable(getattr(value, name)) for name in names}
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = _key(key)
            if name in out:
                raise JournalValueError(f"mapping key {name!r} appears twice after conversion")
            out[name] = to_jsonable(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item) for item in value]
    if isinstance(value, (set, frozenset)):
        items = [to_jsonable(item) for item in value]
        return sorted(items, key=canonical_json)
    exact = _exact_number(value)
    if exact is not None:
        return exact
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, PurePath):
        return str(value)
    raise JournalValueError(f"cannot journal a value of type {type(value).__name__}")


def event_type_of(value: object) -> str:
    """The journal event type of a typed event: its class name in snake_case
    (``CardAssigned`` -> ``card_assigned``), so the table's events need no separate names."""
    name = type(value).__name__
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower()
                   for i, c in enumerate(name))


def format_ts(moment: datetime) -> str:
    """UTC, microseconds, ``Z``: ``2025-06-01T20:15:03.120456Z``. Fixed width so that the
    text sorts as the time does; a naive datetime is refused (it has no zone to convert)."""
    if moment.tzinfo is None:
        raise JournalValueError("journal timestamps need an aware datetime (UTC)")
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_TS = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{6})Z")


def parse_ts(text: str) -> datetime:
    """The inverse of :func:`format_ts`, which is the only form accepted (ValueError otherwise).

    Not ``datetime.strptime``: its first call loads ``locale`` and ``calendar`` (0.5 MB of the
    feed's memory on the table, docs/feed.md "Memory"), and each call costs several times this
    one on every record read."""
    match = _TS.fullmatch(text)
    if match is None:
        raise ValueError(f"{text!r} is not of the form YYYY-MM-DDTHH:MM:SS.ffffffZ")
    year, month, day, hour, minute, second, micro = map(int, match.groups())
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=timezone.utc)


def compute_hash(body: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``body`` (the record without hash and hmac)."""
    return hashlib.sha256(canonical_bytes(body)).hexdigest()


def compute_hmac(key: bytes, body: Mapping[str, Any]) -> str:
    """HMAC-SHA256 (hex) of the same canonical bytes the hash covers."""
    return hmac_lib.new(key, canonical_bytes(body), hashlib.sha256).hexdigest()


def hmac_matches(key: bytes, body: Mapping[str, Any], claimed: str) -> bool:
    """Constant-time comparison, so a verifier cannot be used as an HMAC oracle by timing."""
    return hmac_lib.compare_digest(compute_hmac(key, body), claimed)


@dataclass(frozen=True, slots=True)
class Record:
    """One sealed journal record. ``payload`` is plain JSON values (see :func:`to_jsonable`);
    treat it as read-only: the hash was computed over it."""

    seq: int
    ts: str
    mono_ns: int
    table_id: str
    round_id: str | None
    event_type: str
    actor: str | None
    payload: Mapping[str, Any]
    prev_hash: str
    hash: str
    hmac: str | None = None
    version: int = FORMAT_VERSION

    @property
    def time(self) -> datetime:
        return parse_ts(self.ts)

    def body(self) -> dict[str, Any]:
        """The hashed fields, under their JSON names."""
        return {
            "v": self.version,
            "seq": self.seq,
            "ts": self.ts,
            "mono_ns": self.mono_ns,
            "table": self.table_id,
            "round": self.round_id,
            "event": self.event_type,
            "actor": self.actor,
            "payload": self.payload,
            "prev": self.prev_hash,
        }

    def to_dict(self) -> dict[str, Any]:
        out = self.body()
        out["hash"] = self.hash
        if self.hmac is not None:
            out["hmac"] = self.hmac
        return out

    def line(self) -> str:
        """The record's line in the file, without the newline."""
        return canonical_json(self.to_dict())

    @classmethod
    def _trusted(cls, data: Mapping[str, Any]) -> Record:
        """Build from a dict this process just sealed (no re-validation on the hot path)."""
        return cls(
            seq=data["seq"], ts=data["ts"], mono_ns=data["mono_ns"], table_id=data["table"],
            round_id=data["round"], event_type=data["event"], actor=data["actor"],
            payload=data["payload"], prev_hash=data["prev"], hash=data["hash"],
            hmac=data.get("hmac"), version=data["v"],
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Record:
        """Rebuild a record from a parsed line, checking field names and types (not the hash:
        that is :func:`seal_matches`' job). Raise :class:`JournalFormatError` naming the field."""
        keys = set(data)
        missing = RECORD_KEYS - keys
        extra = keys - RECORD_KEYS - OPTIONAL_KEYS
        if missing:
            raise JournalFormatError(f"record lacks field(s) {', '.join(sorted(missing))}")
        if extra:
            raise JournalFormatError(f"record has unknown field(s) {', '.join(sorted(extra))}")
        checks: tuple[tuple[str, tuple[type, ...], bool], ...] = (
            ("v", (int,), False), ("seq", (int,), False), ("ts", (str,), False),
            ("mono_ns", (int,), False), ("table", (str,), False), ("round", (str,), True),
            ("event", (str,), False), ("actor", (str,), True), ("payload", (dict,), False),
            ("prev", (str,), False), ("hash", (str,), False), ("hmac", (str,), True),
        )
        for name, types, nullable in checks:
            value = data.get(name)
            if value is None and (nullable or name not in data):
                continue
            if isinstance(value, bool) or not isinstance(value, types):
                raise JournalFormatError(f"field {name!r} has the wrong type")
        if data["v"] != FORMAT_VERSION:
            raise JournalFormatError(f"unsupported record format version {data['v']!r}")
        try:
            parse_ts(data["ts"])
        except ValueError as error:
            raise JournalFormatError(f"field 'ts' is not a UTC timestamp: {data['ts']!r}") \
                from error
        return cls._trusted(data)


def seal(body: dict[str, Any], hmac_key: bytes | None) -> dict[str, Any]:
    """Add ``hash`` (and ``hmac`` when keyed) to a record body; returns the full record dict."""
    return seal_and_render(body, hmac_key)[0]


def seal_and_render(body: dict[str, Any], hmac_key: bytes | None) -> tuple[dict[str, Any], str]:
    """:func:`seal`, and the sealed record's canonical JSON line made from the body's text:
    the keys sort ``actor``, ``event``, ``hash``, ``hmac``, ``mono_ns``..., so ``hash`` (and
    ``hmac``) go in before the body's ``mono_ns``, and the body (a studio settlement: 400 kB)
    is serialised once, not twice. ``actor`` and ``event`` are strings or null, whose text
    never holds an unescaped quote, so the first ``,"mono_ns":`` is the key's."""
    sealed = dict(body)
    text = canonical_json(body)
    data = text.encode("utf-8")  # once: the hash and the HMAC cover the same bytes
    sealed["hash"] = hashlib.sha256(data).hexdigest()
    added = f',"hash":"{sealed["hash"]}"'
    if hmac_key is not None:
        sealed["hmac"] = hmac_lib.new(hmac_key, data, hashlib.sha256).hexdigest()
        added += f',"hmac":"{sealed["hmac"]}"'
    at = text.find(',"mono_ns":')
    if at < 0 or set(body) != BODY_KEYS:  # not a record body: render it the long way
        return sealed, canonical_json(sealed)
    return sealed, text[:at] + added + text[at:]


def payload_text(line: str) -> str:
    """The canonical JSON text of the payload of a record line that :func:`seal_and_render`
    made: what the service's watchers are sent of a journaled event, so a studio's 345 kB
    settlement is not encoded a second time for them (issue 28).

    The payload starts after the first ``,"payload":`` (the keys before it, ``actor``,
    ``event``, ``hash``, ``hmac``, ``mono_ns``, are strings whose quotes are escaped or
    numbers) and ends at the last ``,"prev":"`` (after it come only ``prev``, ``round``,
    ``seq``, ``table``, ``ts`` and ``v``: strings and numbers again)."""
    start = line.find(',"payload":')
    end = line.rfind(',"prev":"')
    if start < 0 or end < start:
        raise JournalFormatError("not a record line: no payload where the canonical form has it")
    return line[start + len(',"payload":'):end]
