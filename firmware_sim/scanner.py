"""A dealing shoe fitted with a plain serial barcode scanner, byte for byte.

Each :meth:`ScannerShoeSim.draw` sends the drawn card's barcode from a
:class:`drivers.decks.DeckMap` as one line: ``prefix + [AIM id] + code + suffix + ending``
(ending CR, LF or CRLF, as the scanner is configured). Faults: ``foreign`` (a card of another
deck id), ``duplicate`` (a card already dealt), ``noread`` (the scanner's no-read message, "NR"),
``doubleread`` and ``repeat`` (the same line twice), ``truncate`` (the line cut short, its tail
and terminator lost), ``stall`` (hold, then burst) and ``disconnect``.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.games.cards import Card
from drivers.decks import DeckMap
from drivers.shoe.codes import ScannedCode
from drivers.shoe.scanner_codec import NO_READ_TEXT, ScannerCodec
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.shoe_deck import SimShoe

ENDINGS = {"cr": b"\r", "lf": b"\n", "crlf": b"\r\n"}
FOREIGN_DECK_IDS = {"generic-code128": "2002", "house-s2": "ZZ999"}


class ScannerShoeSim(SimShoe):
    """Serial barcode-scanner shoe; options mirror the scanner's configuration menu."""

    SUPPORTED = frozenset({
        FaultKind.FOREIGN, FaultKind.DUPLICATE, FaultKind.NO_READ, FaultKind.DOUBLE_READ,
        FaultKind.REPEAT_EVENT, FaultKind.TRUNCATE, FaultKind.STALL, FaultKind.DISCONNECT,
    })

    def __init__(self, seed: int | None = None, faults: Sequence[FaultSpec] = (), *,
                 deck: DeckMap | str = "generic-code128", ending: str = "crlf",
                 prefix: bytes = b"", suffix: bytes = b"", aim: str | None = None,
                 no_read_text: str | None = NO_READ_TEXT,
                 foreign_deck_id: str | None = None) -> None:
        self.deck = deck if isinstance(deck, DeckMap) else DeckMap.load(deck)
        if ending not in ENDINGS:
            raise ValueError(f"ending must be one of {', '.join(ENDINGS)}, got {ending!r}")
        self.ending = ENDINGS[ending]
        self.codec = ScannerCodec(prefix=prefix, suffix=suffix, aim=aim is not None)
        self.aim = aim
        self.no_read_text = no_read_text
        other = foreign_deck_id or FOREIGN_DECK_IDS.get(self.deck.name, self.deck.deck_id)
        self.foreign_deck = self.deck.with_deck_id(other)
        super().__init__(seed, faults)

    def line_for(self, code: str) -> bytes:
        """The exact bytes the scanner sends for ``code``."""
        return self.codec.encode(ScannedCode(code, self.aim), self.ending)

    def draw(self) -> Card | None:
        """Draw one card past the scanner; return the card dealt (None for a foreign card)."""
        with self._lock:
            card, code = self.pick_barcode(self.deck, self.foreign_deck)
            if self.take_fault(FaultKind.NO_READ):
                if self.no_read_text is not None:
                    self.output(self.line_for(self.no_read_text))
                return card
            line = self.line_for(code)
            if self.take_fault(FaultKind.TRUNCATE):
                line = line[: max(1, len(line) // 2)]
            elif self.take_fault(FaultKind.DOUBLE_READ, FaultKind.REPEAT_EVENT):
                line = line + line
            self.output(line)
            disconnect = self.take_fault(FaultKind.DISCONNECT)
        if disconnect:
            self.disconnect_for(disconnect.arg or 0.5)
        return card
