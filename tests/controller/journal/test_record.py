"""The record format: canonical JSON, the hash and HMAC an auditor can recompute without our
code, and the deterministic serialiser for table values (issue 5 "The journal")."""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from enum import Enum
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.games.cards import parse_card, parse_cards
from controller.journal import JournalValueError, canonical_json, to_jsonable
from controller.journal.record import (
    GENESIS_HASH,
    Record,
    compute_hash,
    format_ts,
    parse_ts,
    seal,
    seal_and_render,
)
from drivers.events import Fault

from .conftest import KEY, START


class Colour(str, Enum):
    RED = "red"


@dataclass(frozen=True, slots=True)
class Dealt:
    position: str
    cards: tuple
    fault: Fault | None = None


def test_cards_become_two_character_codes() -> None:
    """Cards read as the table prints them (TD, not a rank/suit object)."""
    assert to_jsonable(parse_card("10d")) == "TD"
    assert to_jsonable({"hand": parse_cards(["QD", "7S"])}) == {"hand": ["QD", "7S"]}


def test_dataclasses_enums_and_exact_numbers() -> None:
    """Frozen event dataclasses become mappings of their fields; money never passes a float."""
    value = Dealt("1", (parse_card("AH"),), Fault.JAM)
    assert to_jsonable(value) == {"position": "1", "cards": ["AH"], "fault": "jam"}
    assert to_jsonable({Colour.RED: Fraction(1, 2), 3: Decimal("1.50")}) == \
        {"red": "1/2", "3": "1.50"}
    assert to_jsonable(frozenset({"b", "a"})) == ["a", "b"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), object(), {(1, 2): 3}])
def test_values_without_a_deterministic_form_are_refused(value: object) -> None:
    """Guessing a representation would make the hash depend on the guess."""
    with pytest.raises(JournalValueError):
        to_jsonable(value)


def test_canonical_json_is_sorted_compact_and_utf8() -> None:
    """The canonical form in docs/journal.md: sorted keys, no whitespace, characters as is."""
    assert canonical_json({"b": 1, "a": ["Q♦", None]}) == '{"a":["Q♦",null],"b":1}'


def test_hash_and_hmac_recompute_with_the_standard_library_alone() -> None:
    """An auditor needs only json, hashlib and hmac to recompute a record's seal."""
    body = {"v": 1, "seq": 1, "ts": format_ts(START), "mono_ns": 5, "table": "T7",
            "round": None, "event": "card_assigned", "actor": "shoe",
            "payload": {"card": "QD", "position": "1"}, "prev": GENESIS_HASH}
    sealed = seal(body, KEY)
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert sealed["hash"] == hashlib.sha256(text.encode()).hexdigest() == compute_hash(body)
    assert sealed["hmac"] == hmac.new(KEY, text.encode(), hashlib.sha256).hexdigest()
    record = Record.from_dict(sealed)
    assert record.line() == canonical_json(sealed)
    assert record.time == START


def test_naive_timestamps_are_refused() -> None:
    """A time without a zone cannot be put on the UTC axis surveillance reads."""
    with pytest.raises(JournalValueError):
        format_ts(START.replace(tzinfo=None))


@given(st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31),
                    timezones=st.just(timezone.utc)))
def test_timestamps_read_back_as_written_and_as_strptime_reads_them(moment: datetime) -> None:
    """parse_ts is format_ts's inverse, and agrees with the strptime pattern it replaced."""
    text = format_ts(moment)
    assert parse_ts(text) == moment
    assert parse_ts(text) == datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ") \
        .replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("text", [
    "2026-11-25T19:04:39Z",  # no microseconds
    "2026-11-25T19:04:39.2150Z",  # not six digits
    "2026-1-25T19:04:39.215055Z",  # one-digit month (strptime took it; format_ts never writes it)
    "2026-11-25 19:04:39.215055Z",
    "2026-11-25T19:04:39.215055+00:00",
    "2026-11-25T19:04:39.215055",
    "2026-02-30T19:04:39.215055Z",  # no such day
    "2026-11-25T24:04:39.215055Z",
    "\uff12026-11-25T19:04:39.215055Z",  # a fullwidth digit
    " 2026-11-25T19:04:39.215055Z",
])
def test_anything_but_the_written_timestamp_form_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_ts(text)


_TEXT = st.text(alphabet=st.sampled_from(['"', "\\", ",", ":", "a", "é", "m", "o", "_", "n",
                                          "s", "{", "}", " "]), max_size=24)


@given(actor=st.none() | _TEXT, event=_TEXT.filter(bool), extra=_TEXT,
       keyed=st.booleans())
def test_the_line_made_from_the_body_text_is_the_canonical_form(
        actor: str | None, event: str, extra: str, keyed: bool) -> None:
    """The writer renders a record from its body's canonical text with ``hash`` (and
    ``hmac``) put in before ``mono_ns`` (issue 28: a 400 kB settlement serialised once). The
    line is byte for byte ``canonical_json`` of the sealed record, whatever the actor, the
    event type and the payload hold, quotes and ``,"mono_ns":`` included."""
    body = {"v": 1, "seq": 3, "ts": "2026-11-26T14:00:00.000000Z", "mono_ns": 5,
            "table": "T1", "round": "7", "event": event, "actor": actor,
            "payload": {"note": extra, ',"mono_ns":': f',"mono_ns":{extra}', "n": [1, None]},
            "prev": "0" * 64}
    sealed, line = seal_and_render(body, KEY if keyed else None)
    assert line == canonical_json(sealed)
    assert sealed == seal(body, KEY if keyed else None)
