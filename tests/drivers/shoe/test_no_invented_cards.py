"""No reader produces a card it was not sent, however the bytes arrive (issue 10).

For each dialect with a byte stream, hypothesis builds streams that mix valid messages, noise,
over-long lines and truncated messages, splits them into arbitrary chunks and feeds the chunks
through the code path the driver uses (``LineShoe.on_bytes`` for the scanner and Bee-Tek,
``FrameDecoder.feed`` + ``decode_message`` for the framed shoe, as ``FramedLink.on_bytes`` does).
Two properties each:

- *nothing invented*: every card that comes out has a complete, well-formed message of it in the
  stream. The oracles below are written from docs/protocols-shoes.md and docs/protocols.md, not
  from the decoders: a scanner card needs a terminated line of at most 80 bytes ending in its
  barcode; a Bee-Tek card needs a whole ``<Card:..>`` body; a framed card needs the exact bytes
  of a CARD frame.
- *nothing lost*: valid messages separated by clean terminators all come out, in order,
  regardless of chunking.

The scanner's properties also run end to end over a real pty, the random chunks written one by
one by a simulated device.
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Callable, Iterator

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from controller.games.cards import Card, parse_card
from drivers.decks import DeckMap
from drivers.events import CardRead, DeviceEvent, DeviceOnline, NoRead
from drivers.framed import event_messages as ev
from drivers.framed.codec import decode_message, encode_message
from drivers.framed.framing import Frame, FrameDecoder, encode
from drivers.shoe.beetek import BeeTekShoe
from drivers.shoe.scanner import ScannerShoe
from firmware_sim.serve import PtyServer

from .waiting import wait_for

DECK = DeckMap.load("generic-code128")
SENTINEL = parse_card("KC")
"""Never in a generated stream: the pty test sends it last and waits for it."""
CARDS = [card for card, _ in DECK.fields if card != SENTINEL]
MAX_LINE = 80
PTY_WAIT = 60.0
"""Generous: two cores shared by a whole team's test runs; a wait ends at the sentinel anyway."""
PROPERTY = settings(max_examples=400, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

cards = st.sampled_from(CARDS)
distinct_cards = st.lists(cards, min_size=1, max_size=8, unique=True)
endings = st.sampled_from([b"\r", b"\n", b"\r\n"])
pads = st.sampled_from([b"", b" ", b"  ", b"\t"])


def _chunks(data: bytes, sizes: list[int]) -> Iterator[bytes]:
    pos = 0
    for size in sizes:
        if pos >= len(data):
            return
        yield data[pos:pos + size]
        pos += size
    if pos < len(data):
        yield data[pos:]


chunkings = st.one_of(st.lists(st.integers(1, 24), max_size=60),
                      st.lists(st.integers(1, 3), min_size=200, max_size=400))
"""Read sizes (the second kind trickles the stream a byte or so per read, as a slow scanner
does); what is left after the list arrives as one last read."""


def _drain(events: queue.Queue[DeviceEvent]) -> list[DeviceEvent]:
    out = []
    while not events.empty():
        out.append(events.get_nowait())
    return out


# -- scanner -------------------------------------------------------------------------------------

def _barcode(card: Card) -> bytes:
    return DECK.barcode_for(card).encode("ascii")


@st.composite
def scanner_line(draw: st.DrawFn, card: Card) -> bytes:
    """A clean line for ``card``: optional AIM id, optional padding, any terminator."""
    aim = draw(st.sampled_from([b"", b"]C1"]))
    return draw(pads) + aim + _barcode(card) + draw(pads) + draw(endings)


no_read_line = st.builds(lambda text, end: text + end,
                         st.sampled_from([b"NR", b"nr", b"Nr", b" NR "]), endings)


@st.composite
def overlong_line(draw: st.DrawFn) -> bytes:
    """81+ bytes before the terminator, the last of them a card's barcode (the phantom's bait)."""
    size = draw(st.one_of(st.integers(MAX_LINE + 1, MAX_LINE + 3), st.integers(MAX_LINE - 5, 160)))
    filler = draw(st.binary(min_size=size, max_size=size).map(
        lambda b: b.replace(b"\r", b"x").replace(b"\n", b"x")))
    return filler + _barcode(draw(cards)) + draw(endings)


@st.composite
def truncated_line(draw: st.DrawFn) -> bytes:
    """The start of a valid line, its tail and terminator lost."""
    line = draw(scanner_line(draw(cards)))
    return line[:draw(st.integers(1, max(1, len(line) - 2)))].rstrip(b"\r\n")


scanner_noise = st.binary(max_size=40)
scanner_segment = st.one_of(cards.flatmap(scanner_line), no_read_line, overlong_line(),
                            truncated_line(), scanner_noise)


def scanner_sent(stream: bytes) -> set[Card]:
    """Cards the stream really sent: a terminated line of at most 80 bytes that ends in the
    card's barcode (surrounding whitespace aside). A truncated code glued in front is allowed
    (docs: the stub is dropped); an over-long line sends nothing."""
    lines = re.split(rb"[\r\n]", stream)[:-1]  # the last piece has no terminator yet
    sent = set()
    for line in lines:
        if len(line) > MAX_LINE:
            continue
        body = line.strip(b" \t")
        sent.update(card for card in CARDS + [SENTINEL] if body.endswith(_barcode(card)))
    return sent


def _scanner() -> ScannerShoe:
    return ScannerShoe("loop://", queue.Queue(), deck=DECK)


def _feed(shoe: ScannerShoe | BeeTekShoe, stream: bytes, sizes: list[int]) -> list[DeviceEvent]:
    for chunk in _chunks(stream, sizes):
        shoe.on_bytes(chunk)
    return _drain(shoe.events)


@PROPERTY
@given(segments=st.lists(scanner_segment, max_size=12), sizes=chunkings)
def test_scanner_never_invents_a_card(segments, sizes):
    """Whatever the mix and the chunking, every scanner CardRead was sent on a clean line of at
    most 80 bytes, and no card comes out twice."""
    stream = b"".join(segments)
    reads = [e.card for e in _feed(_scanner(), stream, sizes) if isinstance(e, CardRead)]
    assert set(reads) <= scanner_sent(stream)
    assert len(reads) == len(set(reads))


@st.composite
def clean_scanner_stream(draw: st.DrawFn) -> tuple[bytes, list[Card], int]:
    """Valid lines of distinct cards and no-reads, with terminated noise and over-long lines
    between them; returns (stream, the cards in order, the number of no-reads)."""
    wanted = draw(distinct_cards)
    parts, no_reads = [], 0
    for card in wanted:
        for _ in range(draw(st.integers(0, 2))):
            kind = draw(st.sampled_from(["noise", "overlong", "noread"]))
            if kind == "noise":  # no digits: can never be this deck's barcode; not "NR"
                noise = draw(st.binary(max_size=30).map(
                    lambda b: bytes(c for c in b if c not in b"\r\n0123456789")))
                if noise.strip().lower() == b"nr":
                    noise = b"x"
                parts.append(noise + draw(endings))
            elif kind == "overlong":
                parts.append(draw(overlong_line()))
            else:
                parts.append(draw(no_read_line))
                no_reads += 1
        parts.append(draw(scanner_line(card)))
    return b"".join(parts), wanted, no_reads


@PROPERTY
@given(case=clean_scanner_stream(), sizes=chunkings)
def test_scanner_reads_every_clean_line(case, sizes):
    """Codes on clean lines all come out, in order, with every no-read, in any chunking."""
    stream, wanted, no_reads = case
    events = _feed(_scanner(), stream, sizes)
    assert [e.card for e in events if isinstance(e, CardRead)] == wanted
    assert sum(isinstance(e, NoRead) for e in events) == no_reads


# -- scanner over a real pty -----------------------------------------------------------------------

class _Wire:
    """A simulated device that writes exactly the chunks it is given, one write each."""

    def __init__(self) -> None:
        self.send: Callable[[bytes], None] | None = None
        self.attached = threading.Event()

    def attach(self, send: Callable[[bytes], None]) -> None:
        self.send = send
        self.attached.set()

    def receive(self, data: bytes) -> None:
        pass

    def tick(self, now: float) -> None:
        pass

    def detach(self) -> None:
        self.attached.clear()


@pytest.fixture(name="wire", scope="module")
def fixture_wire() -> Iterator[tuple[_Wire, PtyServer]]:
    device = _Wire()
    with PtyServer(device) as server:
        yield device, server


def _pty_events(wire: tuple[_Wire, PtyServer], stream: bytes,
                sizes: list[int]) -> list[DeviceEvent]:
    """Open a scanner driver on the pty, write ``stream`` in ``sizes`` chunks, then a sentinel
    card on a line of its own; the events up to the sentinel."""
    device, server = wire
    events: queue.Queue[DeviceEvent] = queue.Queue()
    shoe = ScannerShoe(server.path, events, deck=DECK)
    shoe.start()
    try:
        wait_for(events, DeviceOnline, timeout=PTY_WAIT)
        assert device.send is not None
        for chunk in _chunks(stream + b"\r\n" + _barcode(SENTINEL) + b"\r\n", sizes):
            device.send(chunk)
        seen: list[DeviceEvent] = []
        while True:
            read = wait_for(events, CardRead, timeout=PTY_WAIT, seen=seen)
            if read.card == SENTINEL:
                return seen
            seen.append(read)
    finally:
        shoe.close()


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(segments=st.lists(scanner_segment, max_size=10), case=clean_scanner_stream(),
       sizes=chunkings)
def test_scanner_over_a_pty(wire, segments, case, sizes):
    """Over a real pty, with the bytes written in the random chunks: nothing invented from a
    mixed stream, and after a clean terminator every clean line's card comes out in order."""
    mixed = b"".join(segments)
    clean, wanted, _ = case
    # a card dealt twice is a duplicate, rightly; the terminator written after ``mixed``
    # completes its last line too (an unterminated "100128" becomes a sent 2D)
    assume(not scanner_sent(mixed + b"\r\n") & set(wanted))
    events = _pty_events(wire, mixed + b"\r\n" + clean, sizes)
    reads = [e.card for e in events if isinstance(e, CardRead)]
    assert set(reads) <= scanner_sent(mixed + b"\r\n" + clean)
    assert reads[len(reads) - len(wanted):] == wanted


# -- Bee-Tek -------------------------------------------------------------------------------------

RANKS = {"A": "A", "2": "2", "3": "3", "4": "4", "5": "5", "6": "6", "7": "7", "8": "8",
         "9": "9", "T": "T", "10": "T", "J": "J", "Q": "Q", "K": "K"}
SUITS = "SHDC"
BEETEK_CARD = re.compile(rb"<\s*card:([^<>\[]{0,60})>", re.IGNORECASE)


def beetek_token_card(token: str) -> Card | None:
    """The doc's card token: rank and suit in either order, ten as 10 or T, any case."""
    token = token.strip().upper()
    for rank_part, suit in ((token[:-1], token[-1:]), (token[1:], token[:1])):
        if suit and suit in SUITS and rank_part in RANKS:
            return parse_card(RANKS[rank_part] + suit)
    return None


def beetek_sent(stream: bytes) -> set[Card]:
    """Cards with a whole ``<Card:..>`` body in the stream (nothing else can carry one)."""
    found = (beetek_token_card(m[1].decode("ascii", "replace"))
             for m in BEETEK_CARD.finditer(stream))
    return {card for card in found if card is not None}


@st.composite
def beetek_message(draw: st.DrawFn, card: Card) -> bytes:
    rank = card.rank.symbol
    if rank == "T":
        rank = draw(st.sampled_from(["T", "10"]))
    suit = card.suit.value
    token = draw(st.sampled_from([rank + suit, suit + rank]))
    tag = draw(st.sampled_from(["Card", "card", "CARD"]))
    if draw(st.booleans()):
        token = token.lower()
    section = draw(st.sampled_from([b"[Game]", b"[Manual Burn Cards]", b"[game]", b""]))
    return b" " + section + f"<{tag}:{token}>".encode() + draw(st.sampled_from([b" ", b"\r\n"]))


@st.composite
def beetek_other(draw: st.DrawFn) -> bytes:
    return draw(st.sampled_from([b" [Game]<Game> ", b" [GameAlarm]<Alarm:E3 Card Not Read> ",
                                 b"<W0x01>", b" [Game]<game>\r\n"]))


@st.composite
def beetek_overlong(draw: st.DrawFn) -> bytes:
    """A body with no ``>`` within the token limit, a card's tag at its end."""
    return (b" [Game]<Card:" + b"x" * draw(st.integers(60, 120))
            + draw(beetek_message(draw(cards))).strip() + b" ")


@st.composite
def beetek_truncated(draw: st.DrawFn) -> bytes:
    message = draw(beetek_message(draw(cards))).rstrip()
    return message[:draw(st.integers(1, max(1, len(message) - 1)))].rstrip(b">")


beetek_segment = st.one_of(cards.flatmap(beetek_message), beetek_other(), beetek_overlong(),
                           beetek_truncated(), st.binary(max_size=40))


@PROPERTY
@given(segments=st.lists(beetek_segment, max_size=12), sizes=chunkings)
def test_beetek_never_invents_a_card(segments, sizes):
    """Every Bee-Tek CardRead has a whole ``<Card:..>`` body of that card in the stream."""
    stream = b"".join(segments)
    events = _feed(BeeTekShoe("loop://", queue.Queue()), stream, sizes)
    reads = [e.card for e in events if isinstance(e, CardRead)]
    assert set(reads) <= beetek_sent(stream)
    assert len(reads) == len(set(reads))


@PROPERTY
@given(wanted=distinct_cards, data=st.data(), sizes=chunkings)
def test_beetek_reads_every_clean_message(wanted, data, sizes):
    """Whole messages with noise between them (no ``[``/``<``, so it starts no message) all come
    out, in order, in any chunking."""
    noise = st.binary(max_size=20).map(lambda b: bytes(c for c in b if c not in b"[<"))
    stream = b"".join(data.draw(noise) + data.draw(beetek_message(card)) for card in wanted)
    events = _feed(BeeTekShoe("loop://", queue.Queue()), stream, sizes)
    assert [e.card for e in events if isinstance(e, CardRead)] == wanted


# -- framed shoe (decoder read, not edited: it belongs to the framed link) -----------------------

def card_frame(seq: int, event_id: int, index: int, card: Card) -> bytes:
    return encode_message(seq, ev.CardMsg(event_id, index, card))


@st.composite
def framed_card(draw: st.DrawFn, card: Card) -> bytes:
    return card_frame(draw(st.integers(0, 255)), draw(st.integers(0, 0xFFFF)),
                      draw(st.integers(1, 416)), card)


@st.composite
def framed_mangled(draw: st.DrawFn) -> bytes:
    """A card frame truncated, or with one byte flipped (the CRC must catch it)."""
    frame = bytearray(draw(framed_card(draw(cards))))
    if draw(st.booleans()):
        return bytes(frame[:draw(st.integers(1, len(frame) - 1))])
    pos = draw(st.integers(0, len(frame) - 1))
    frame[pos] ^= draw(st.integers(1, 255))
    return bytes(frame)


framed_segment = st.one_of(cards.flatmap(framed_card), framed_mangled(), st.binary(max_size=40))


def framed_cards(stream: bytes, sizes: list[int]) -> list[tuple[Card, Frame]]:
    """Cards out of the framed link's own receive path: FrameDecoder.feed, then decode_message."""
    decoder = FrameDecoder()
    out = []
    for chunk in _chunks(stream, sizes):
        for item in decoder.feed(chunk):
            if isinstance(item, Frame) and item.type == ev.CardMsg.TYPE:
                try:
                    message = decode_message(item)
                except Exception:  # noqa: BLE001 - a malformed payload is the link's to report
                    continue
                assert isinstance(message, ev.CardMsg)
                out.append((message.card, item))
    return out


@PROPERTY
@given(segments=st.lists(framed_segment, max_size=12), sizes=chunkings)
def test_framed_never_invents_a_card(segments, sizes):
    """Every card the framed decoder yields is a CARD frame whose exact bytes are in the stream."""
    stream = b"".join(segments)
    for _, frame in framed_cards(stream, sizes):
        assert encode(frame) in stream


@PROPERTY
@given(wanted=distinct_cards, data=st.data(), sizes=chunkings)
def test_framed_reads_every_clean_frame(wanted, data, sizes):
    """Whole CARD frames with noise between them that holds no STX all come out, in order."""
    noise = st.binary(max_size=20).map(lambda b: b.replace(b"\x02", b""))
    stream = b"".join(data.draw(noise) + data.draw(framed_card(card)) for card in wanted)
    assert [card for card, _ in framed_cards(stream, sizes)] == wanted
