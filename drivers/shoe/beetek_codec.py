"""Decoder for the Bee-Tek shoe's ASCII output, as captured in the field at 9600 baud.

The shoe writes a section in brackets followed by a body in angle brackets, each message padded
with spaces::

     [Game]<Card:4S>                  a card read while dealing
     [Manual Burn Cards]<Card:H3>     a burn card (rank and suit in either order, 10 or T)
     [Game]<Game>                     a card passed but was not read
     [GameAlarm]<Alarm:E3 Card Not Read>
    <W0x01>                           a warning, with or without a section

The decoder is pure and incremental (``decode(buf) -> (consumed, message | None)``). Noise is
dropped up to the next ``[`` or ``<`` and reported as :class:`Garbage`; it never raises. Tags and
their fields are case-insensitive (``<card:4s>``, ``<game>``, ``<alarm:e3 ...>``, ``<w0x0a>``):
shoe firmware versions differ in case, and case carries no meaning in any of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from controller.errors import CardError
from controller.games.cards import Card, parse_card
from drivers.shoe.codes import Garbage, printable

MAX_TOKEN = 64
_SPACE = b" \t\r\n"
_WARNING = re.compile(r"W0x([0-9A-F]{2})", re.IGNORECASE)
_ALARM = re.compile(r"Alarm:(E[0-9A-F]+)\s*(.*)", re.IGNORECASE)
_CARD = "card:"


@dataclass(frozen=True, slots=True)
class BeeTekCard:
    card: Card
    section: str
    burn: bool = False


@dataclass(frozen=True, slots=True)
class BeeTekNoRead:
    section: str


@dataclass(frozen=True, slots=True)
class BeeTekAlarm:
    code: str
    text: str
    section: str


@dataclass(frozen=True, slots=True)
class BeeTekWarning:
    code: str
    section: str


Message = BeeTekCard | BeeTekNoRead | BeeTekAlarm | BeeTekWarning | Garbage


def parse_beetek_card(text: str) -> Card:
    """``4S``, ``S4``, ``10H``, ``H10``, ``TH``: rank and suit in either order."""
    try:
        return parse_card(text)
    except CardError:
        return parse_card(text[1:] + text[:1])


def _skip_space(buf: bytes, start: int) -> int:
    while start < len(buf) and buf[start] in _SPACE:
        start += 1
    return start


def _noise(buf: bytes, start: int, reason: str) -> tuple[int, Garbage]:
    """Drop from ``start`` up to (not including) the next ``[`` or ``<`` after it."""
    cut = [i for i in (buf.find(b"[", start + 1), buf.find(b"<", start + 1)) if i >= 0]
    end = min(cut) if cut else len(buf)
    return end, Garbage(reason, end - start, bytes(buf[start:end]))


class BeeTekCodec:
    """Incremental Bee-Tek decoder; stateless (every message starts at a ``[`` or ``<``)."""

    def reset(self) -> None:
        """Nothing to forget: the driver's buffer is all the state there is."""

    def decode(self, buf: bytes) -> tuple[int, Message | None]:
        start = _skip_space(buf, 0)
        if start == len(buf):
            return start, None
        section = ""
        pos = start
        if buf[pos] == 0x5B:  # "["
            close = buf.find(b"]", pos, pos + MAX_TOKEN)
            restart = _next_start(buf, pos + 1, close)
            if restart >= 0:
                return restart, Garbage("truncated [section]", restart - start,
                                        bytes(buf[start:restart]))
            if close < 0:
                if len(buf) - pos < MAX_TOKEN:
                    return start, None
                return _noise(buf, pos, "unterminated [section]")
            section = _text(buf[pos + 1:close])
            if section is None:
                return _noise(buf, pos, "non-printable [section]")
            pos = _skip_space(buf, close + 1)
            if pos == len(buf):
                return start, None  # wait for the body
            if buf[pos] != 0x3C:
                return pos, Garbage(f"[{section}] without a <body>", pos - start,
                                    bytes(buf[start:pos]))
        if buf[pos] != 0x3C:  # "<"
            return _noise(buf, pos, "bytes outside [section]<body>")
        close = buf.find(b">", pos, pos + MAX_TOKEN)
        restart = _next_start(buf, pos + 1, close)
        if restart >= 0:  # a message began inside this body: the body was truncated
            return restart, Garbage("truncated <body>", restart - start, bytes(buf[start:restart]))
        if close < 0:
            if len(buf) - pos < MAX_TOKEN:
                return start, None
            return _noise(buf, pos, "unterminated <body>")
        body = _text(buf[pos + 1:close])
        consumed = close + 1
        if body is None:
            return consumed, Garbage("non-printable <body>", consumed - start,
                                     bytes(buf[start:consumed]))
        return consumed, _message(section, body, bytes(buf[start:consumed]))

    @staticmethod
    def encode(message: BeeTekCard | BeeTekNoRead | BeeTekAlarm | BeeTekWarning, *,
               suit_first: bool = False, ten: str = "10") -> bytes:
        """The bytes the shoe sends for ``message`` (used by the simulator)."""
        if isinstance(message, BeeTekCard):
            rank = ten if message.card.rank.symbol == "T" else message.card.rank.symbol
            suit = message.card.suit.value
            body = f"Card:{suit + rank if suit_first else rank + suit}"
        elif isinstance(message, BeeTekNoRead):
            body = "Game"
        elif isinstance(message, BeeTekAlarm):
            body = f"Alarm:{message.code} {message.text}"
        else:
            body = message.code
        head = f"[{message.section}]" if message.section else ""
        return f" {head}<{body}> ".encode("ascii")


def _next_start(buf: bytes, begin: int, close: int) -> int:
    """Index of a ``[`` or ``<`` between ``begin`` and ``close`` (or the token limit), else -1."""
    end = close if close >= 0 else min(len(buf), begin + MAX_TOKEN)
    found = [i for i in (buf.find(b"[", begin, end), buf.find(b"<", begin, end)) if i >= 0]
    return min(found) if found else -1


def _text(raw: bytes) -> str | None:
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return None
    return text if printable(text) else None


def _message(section: str, body: str, raw: bytes) -> Message:
    if body[:len(_CARD)].lower() == _CARD:
        token = body[len(_CARD):]
        try:
            card = parse_beetek_card(token.strip().upper())
        except CardError:
            return Garbage(f"unreadable card token {token!r}", len(raw), raw)
        return BeeTekCard(card, section, burn="burn" in section.lower())
    if body.lower() == "game":
        return BeeTekNoRead(section)
    alarm = _ALARM.fullmatch(body)
    if alarm:
        return BeeTekAlarm(alarm[1].upper(), alarm[2].strip(), section)
    if warning := _WARNING.fullmatch(body):
        return BeeTekWarning(f"W0x{warning[1].upper()}", section)
    return Garbage(f"unknown message <{body}>", len(raw), raw)
