"""Turns decoded shoe messages into table events, the same way for every dialect.

The tracker owns what the bytes alone cannot say: the card's index in the shoe, whether a card
was already dealt from this shoe (a duplicate is :class:`FaultRaised` ``DUPLICATE_CARD``, never a
second :class:`CardRead`), whether a reader reported the same card twice in a row (a double read:
a :class:`DeviceWarning`, the second report is dropped) and which deck a barcode belongs to
(another deck id or an unknown code is :class:`ForeignCard`). Garbage is counted in
``dropped_bytes``/``link_errors`` and becomes one :class:`LinkError` per resync.

A barcode is looked up with its surrounding whitespace stripped, and the no-read message matches
in any case (``NR``, ``nr``). A code glued behind a truncated one (``1001`` + ``100102``) is
recovered only when the stub in front is itself the start of one of this deck's barcodes: noise
in front of a code is a foreign barcode, never a card.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import structlog

from controller.games.cards import Card
from drivers.decks import DeckMap, ForeignDeckBarcode
from drivers.errors import UnknownBarcode
from drivers.events import (
    CardRead,
    DeviceEvent,
    DeviceWarning,
    Fault,
    FaultRaised,
    ForeignCard,
    LinkError,
    NoRead,
)
from drivers.shoe.codes import Garbage, ScannedCode
from drivers.shoe.scanner_codec import NO_READ_TEXT

log = structlog.get_logger(__name__)

_TRAILING_AIM = re.compile(r"\][A-Za-z][0-9A-Za-z]$")
"""An AIM id at the end of a stub: the truncated line was cut right after its own AIM id."""


class ShoeTracker:
    """Per-shoe state shared by the scanner, HID and Bee-Tek drivers."""

    def __init__(self, name: str, emit: Callable[[DeviceEvent], None],
                 clock: Callable[[], float], *, deck: DeckMap | None = None,
                 no_read_text: str | None = NO_READ_TEXT) -> None:
        self.name = name
        self._emit = emit
        self._clock = clock
        self.deck = deck
        self.no_read_text = no_read_text
        self._barcodes = (tuple(deck.barcode_for(card) for card, _ in deck.fields)
                          if deck is not None else ())
        self.link_errors = 0
        self.dropped_bytes = 0
        self.new_shoe()

    def new_shoe(self) -> None:
        """A fresh deck was loaded: forget dealt cards and restart the index at 1."""
        self.index = 0
        self.seen: set[Card] = set()
        self._last: Card | None = None

    # inputs -------------------------------------------------------------------------------------
    def card(self, card: Card, *, burn: bool = False) -> None:
        now = self._clock()
        if card == self._last:
            self._emit(DeviceWarning(self.name, now, code="double_read",
                                     text=f"{card.code} reported twice in a row; ignored"))
            return
        self._last = card
        if card in self.seen:
            self._emit(FaultRaised(self.name, now, fault=Fault.DUPLICATE_CARD,
                                   detail=f"{card.code} already dealt from this shoe"))
            return
        self.seen.add(card)
        self.index += 1
        self._emit(CardRead(self.name, now, card=card, index_in_shoe=self.index, burn=burn))

    def no_read(self) -> None:
        self.index += 1
        self._last = None
        self._emit(NoRead(self.name, self._clock(), index_in_shoe=self.index))

    def code(self, code: ScannedCode) -> None:
        """A barcode from a scanner: the no-read message, a card of our deck, or foreign."""
        text = code.text.strip()
        if self.no_read_text is not None and text.casefold() == self.no_read_text.casefold():
            self.no_read()
            return
        if self.deck is None:
            self.garbage(Garbage("barcode but no deck map configured", len(code.text)))
            return
        try:
            card = self.deck.lookup(text)
        except ForeignDeckBarcode as error:
            self._foreign(text, error.deck_id)
            return
        except UnknownBarcode:
            if self._resync(text):
                return
            self._foreign(text, None)
            return
        self.card(card)

    def garbage(self, garbage: Garbage) -> None:
        self.link_errors += 1
        self.dropped_bytes += garbage.dropped
        # The bytes themselves are not logged: they may hold a card dealt face down, and the
        # system log is read by people at the table; the reason and the count say what went wrong.
        log.warning("link_garbage", device=self.name, reason=garbage.reason,
                    dropped=garbage.dropped)
        self._emit(LinkError(self.name, self._clock(), reason=garbage.reason,
                             dropped=garbage.dropped))

    def emit(self, event: DeviceEvent) -> None:
        self._emit(event)

    # helpers ------------------------------------------------------------------------------------
    def _foreign(self, text: str, deck_id: str | None) -> None:
        self._last = None
        self._emit(ForeignCard(self.name, self._clock(), barcode=text, deck_id=deck_id))

    def _resync(self, text: str) -> bool:
        """A truncated code glued to the next one: drop the stub, keep the whole code behind it."""
        assert self.deck is not None
        for cut in range(1, len(text)):
            if not self._truncated_code(text[:cut]):
                continue
            try:
                card = self.deck.lookup(text[cut:])
            except UnknownBarcode:
                continue
            self.garbage(Garbage("truncated code before a complete one", cut,
                                 text[:cut].encode("ascii", "replace")))
            self.card(card)
            return True
        return False

    def _truncated_code(self, stub: str) -> bool:
        """``stub`` is the front of one of this deck's barcodes (after its AIM id, if any)."""
        aim = _TRAILING_AIM.search(stub)
        head = stub[:aim.start()] if aim else stub
        if aim and not head:
            return True  # only the AIM id got through before the line was cut
        return any(len(head) < len(barcode) and barcode.startswith(head)
                   for barcode in self._barcodes)
