"""Event ids and their order across the wrap (docs/protocols.md 3.4).

A device numbers its events 1..65535 and then starts again at 1 (0 is never an id). Which of two
ids is newer is decided by serial-number arithmetic in the style of RFC 1982 over that range:
``b`` is newer than ``a`` when ``(b - a) mod 65535`` is in 1..32767. So 1 follows 65535, and a
host (or a conformance check) can tell a backlog in id order from one out of order even when it
spans the wrap.
"""

from __future__ import annotations

from collections.abc import Sequence

FIRST_ID = 1
LAST_ID = 0xFFFF
_SPAN = LAST_ID  # ids 1..65535: 65535 distinct values
_HALF = _SPAN // 2  # 32767


def next_id(event_id: int) -> int:
    """The id after ``event_id``: 65535 is followed by 1."""
    return event_id % LAST_ID + 1


def is_newer(b: int, a: int) -> bool:
    """``True`` when id ``b`` was raised after id ``a`` (serial-number order over 1..65535)."""
    return 1 <= (b - a) % _SPAN <= _HALF


def in_order(ids: Sequence[int]) -> bool:
    """``True`` when each id is newer than the one before it."""
    return all(is_newer(b, a) for a, b in zip(ids, ids[1:]))
