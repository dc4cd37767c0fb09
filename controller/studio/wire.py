"""The bodies a game server sends, checked before anything reaches the table.

Only the *shape* is checked here (types, sizes, the batch bound): whether a position or a bet
exists, whether betting is open and whether an amount is within the limits is the table's to
say, so those refusals are journaled by the table with the game server's identity, exactly as
a dealer's would be. A body's ``digest`` is what an idempotency key is bound to: the same key
with another digest is a different request reusing a key, and is refused."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from controller import strictjson
from controller.service.protocol import MAX_MINOR_UNITS
from controller.studio.errors import StudioRefusal

MAX_KEY_CHARS = 40
"""An idempotency key fits the journal's actor field beside ``studio`` (64 characters)."""
MAX_ID_CHARS = 40
BYTES_PER_WAGER = 512
"""A body's byte bound per wager of ``studio.max_batch``: the longest wager the wire allows is
198 bytes as compact JSON (every token at its bound, the largest amount), 287 indented by
four, and a body's envelope (the key, ``wagers``) 65 at most: 512 leaves room for any layout
(one wager with its envelope fits ``max_batch = 1``)."""
_TOKEN = re.compile(r"[A-Za-z0-9._:-]+")
"""Matched whole (``fullmatch``: ``$`` would let a trailing newline through)."""


def _bad(message: str) -> StudioRefusal:
    return StudioRefusal(400, "bad_request", message)


def _token(body: dict[str, Any], key: str, where: str, limit: int = MAX_ID_CHARS) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not 1 <= len(value) <= limit \
            or not _TOKEN.fullmatch(value):
        raise _bad(f"{where}{key!r} must be 1-{limit} of A-Z a-z 0-9 . _ : -, got "
                   f"{str(value)[:50]!r}")
    return value


def _fields(body: object, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _bad(f"{where}must be a JSON object")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise _bad(f"{where}unknown field {unknown[0]!r} (fields are "
                   f"{', '.join(sorted(allowed))})")
    return body


def max_body_bytes(max_batch: int) -> int:
    """The largest body the gateway reads, ``max_batch`` x :data:`BYTES_PER_WAGER` (256,000
    bytes at the default 500): the one figure the 413, ``GET /v1/table`` and the OpenAPI
    document state (issue 33: the bound enforced was 260,096 where the document implied
    ``max_batch x 512``). A larger declared ``Content-Length`` is refused before a byte of the
    body is read."""
    return max_batch * BYTES_PER_WAGER


def load_body(raw: bytes) -> object:
    try:
        return strictjson.loads(raw)
    except strictjson.StrictJsonError as error:
        raise _bad(f"not JSON: {error}") from error


@dataclass(frozen=True, slots=True)
class MemberWager:
    """One member's wager: ``member`` is the game server's opaque id for the member (the
    table's ``player``), ``position`` the hand (``p1``-``p3``, ``banker`` for Pair Plus)."""

    id: str
    member: str
    position: str
    bet: str
    amount: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "member": self.member, "position": self.position,
                "bet": self.bet, "amount": self.amount}


@dataclass(frozen=True, slots=True)
class OpenRound:
    key: str
    betting_seconds: int

    @property
    def digest(self) -> str:
        return _digest({"open": self.betting_seconds})


@dataclass(frozen=True, slots=True)
class CloseBetting:
    key: str
    round: int

    @property
    def digest(self) -> str:
        return _digest({"close": self.round})


@dataclass(frozen=True, slots=True)
class WagerBatch:
    key: str
    round: int
    wagers: tuple[MemberWager, ...]
    digest: str
    """The SHA-256 of the batch's canonical JSON (``{"round", "wagers": [each wager's
    to_json()]}``, keys sorted): worked out once, by :func:`parse_batch`."""


def _digest(content: dict[str, Any]) -> str:
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def parse_open(body: object, max_seconds: int) -> OpenRound:
    fields = _fields(body, {"key", "betting_seconds"}, "round: ")
    seconds = fields.get("betting_seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int) \
            or not 1 <= seconds <= max_seconds:
        raise _bad(f"round: 'betting_seconds' must be an integer from 1 to {max_seconds}, "
                   f"got {seconds!r}")
    return OpenRound(_token(fields, "key", "round: ", MAX_KEY_CHARS), seconds)


def parse_close(body: object, round_number: int) -> CloseBetting:
    fields = _fields(body, {"key"}, "close: ")
    return CloseBetting(_token(fields, "key", "close: ", MAX_KEY_CHARS), round_number)


_WAGER_FIELDS = frozenset({"id", "member", "position", "bet", "amount"})
_FOUR_TOKENS = re.compile(r"[A-Za-z0-9._:-]{1,%d} [A-Za-z0-9._:-]{1,%d} [A-Za-z0-9._:-]{1,16} "
                          r"[A-Za-z0-9._:-]{1,32}" % (MAX_ID_CHARS, MAX_ID_CHARS))
"""A wager's id, member, position and bet joined by spaces (no token holds one), each within
its bound: one regular-expression match a wager instead of four."""


def _quick_wager(wager: object) -> MemberWager | None:
    """A well-formed wager, checked in one pass (a batch is 500 of them: issue 28); ``None``
    for anything else, which :func:`_wager` then refuses naming the field."""
    if type(wager) is not dict or wager.keys() != _WAGER_FIELDS:
        return None
    own_id, member, position, bet = wager["id"], wager["member"], wager["position"], \
        wager["bet"]
    if type(own_id) is not str or type(member) is not str or type(position) is not str \
            or type(bet) is not str \
            or _FOUR_TOKENS.fullmatch(f"{own_id} {member} {position} {bet}") is None:
        return None
    amount = wager["amount"]
    if type(amount) is not int or not 0 < amount <= MAX_MINOR_UNITS:
        return None
    return MemberWager(own_id, member, position, bet, amount)


def _wager(wager: object, where: str) -> MemberWager:
    one = _fields(wager, set(_WAGER_FIELDS), where)
    amount = one.get("amount")
    if isinstance(amount, bool) or not isinstance(amount, int) \
            or not 0 < amount <= MAX_MINOR_UNITS:
        raise _bad(f"{where}'amount' must be a whole number of minor units, 1 to "
                   f"{MAX_MINOR_UNITS}, got {amount!r}")
    return MemberWager(_token(one, "id", where), _token(one, "member", where),
                       _token(one, "position", where, 16), _token(one, "bet", where, 32),
                       amount)


def parse_batch(body: object, round_number: int, max_batch: int) -> WagerBatch:
    """A batch of wagers; over ``max_batch`` is refused whole (413) before any is placed."""
    fields = _fields(body, {"key", "wagers"}, "batch: ")
    key = _token(fields, "key", "batch: ", MAX_KEY_CHARS)
    wagers = fields.get("wagers")
    if not isinstance(wagers, list) or not wagers:
        raise _bad("batch: 'wagers' must be a non-empty list")
    if len(wagers) > max_batch:
        raise StudioRefusal(413, "batch_too_large", f"batch {key}: {len(wagers)} wagers; at "
                            f"most {max_batch} in one batch (studio.max_batch): nothing placed")
    parsed = [_quick_wager(wager) or _wager(wager, f"batch {key} wager {index}: ")
              for index, wager in enumerate(wagers)]
    ids = {w.id for w in parsed}
    if len(ids) != len(parsed):
        raise _bad(f"batch {key}: a wager id appears twice in the batch")
    # Each wager the quick check passed is a dict of exactly the five fields, of exact types
    # (str, int): its own canonical JSON is its to_json()'s, so it is hashed as it came.
    exact = all(type(w) is dict and w.keys() == _WAGER_FIELDS for w in wagers)
    content = wagers if exact else [w.to_json() for w in parsed]
    return WagerBatch(key, round_number, tuple(parsed),
                      _digest({"round": round_number, "wagers": content}))
