"""Shoe driver for a plain serial barcode scanner (one code per line).

Every code is looked up in the configured :class:`drivers.decks.DeckMap`: our deck gives
:class:`CardRead`, another deck id or an unknown code gives :class:`ForeignCard`, the scanner's
no-read message gives :class:`NoRead`. Line noise becomes a counted :class:`LinkError`.
"""

from __future__ import annotations

import queue
from typing import Any

from drivers.decks import DeckMap
from drivers.events import DeviceEvent
from drivers.shoe.codes import Garbage, ScannedCode
from drivers.shoe.lines import LineShoe
from drivers.shoe.scanner_codec import NO_READ_TEXT, ScannerCodec
from drivers.transport import Transport


class ScannerShoe(LineShoe):
    """``ScannerShoe("/dev/serial/by-id/...", events, deck=DeckMap.load("house-s2"))``."""

    def __init__(self, url: str | Transport, events: queue.Queue[DeviceEvent], *,
                 name: str = "shoe", deck: DeckMap, prefix: bytes = b"", suffix: bytes = b"",
                 aim: bool = True, no_read_text: str | None = NO_READ_TEXT,
                 baudrate: int = 9600, **runner_options: Any) -> None:
        super().__init__(url, events, name=name,
                         decoder=ScannerCodec(prefix=prefix, suffix=suffix, aim=aim),
                         baudrate=baudrate,
                         tracker_options={"deck": deck, "no_read_text": no_read_text},
                         **runner_options)

    def handle(self, message: object) -> None:
        if isinstance(message, ScannedCode):
            self.tracker.code(message)
        elif isinstance(message, Garbage):
            self.tracker.garbage(message)
