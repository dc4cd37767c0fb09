"""Dealing-shoe drivers, one per dialect, all emitting the same :mod:`drivers.events`.

``open_shoe(dialect, url, events, **options)`` is the one entry point the service and the CLI
use: ``framed`` (our framed protocol), ``scanner`` (plain serial barcode scanner), ``beetek``
(Bee-Tek ASCII) and ``hid`` (USB keyboard-mode scanner, url ``usb:VID:PID[:SERIAL]``). The
caller starts the returned driver. Byte formats: ``docs/protocols-shoes.md``.
"""

from __future__ import annotations

import queue
from enum import Enum
from typing import Any

from drivers.errors import DriverConfigError
from drivers.events import DeviceEvent


class ShoeDialect(str, Enum):
    """The shoe's byte format (``device.dialect`` in the service's config)."""

    FRAMED = "framed"
    SCANNER = "scanner"
    BEETEK = "beetek"
    HID = "hid"

    @property
    def marks_burns(self) -> bool:
        """The shoe marks a burn card as a burn: the framed protocol's CARD flag bit 0 and the
        Bee-Tek's ``[Manual Burn Cards]`` section do; a barcode scanner (serial or HID) reads
        only the card (docs/protocols-shoes.md)."""
        return self in (ShoeDialect.FRAMED, ShoeDialect.BEETEK)

    @property
    def reads_barcodes(self) -> bool:
        """The shoe reads barcodes, which a deck map turns into cards (``device.deck``)."""
        return self in (ShoeDialect.SCANNER, ShoeDialect.HID)


def open_shoe(dialect: ShoeDialect | str, url: str, events: queue.Queue[DeviceEvent],
              **options: Any) -> Any:
    """Build (not start) the shoe driver for ``dialect``; DriverConfigError names a bad dialect."""
    try:
        kind = ShoeDialect(dialect)
    except ValueError as error:
        known = ", ".join(d.value for d in ShoeDialect)
        raise DriverConfigError(f"unknown shoe dialect {dialect!r}; known dialects: "
                                f"{known}") from error
    if kind.reads_barcodes:
        deck = options.get("deck", "generic-code128")
        if not hasattr(deck, "lookup"):
            from drivers.decks import DeckMap

            options["deck"] = DeckMap.load(deck)
    if kind is ShoeDialect.FRAMED:
        from drivers.shoe.framed import FramedShoe  # written alongside the shuffler link

        return FramedShoe(url, events, **options)
    if kind is ShoeDialect.SCANNER:
        from drivers.shoe.scanner import ScannerShoe

        return ScannerShoe(url, events, **options)
    if kind is ShoeDialect.BEETEK:
        from drivers.shoe.beetek import BeeTekShoe

        return BeeTekShoe(url, events, **options)
    from drivers.shoe.hid import HidScannerShoe, parse_usb_url

    vendor_id, product_id, serial = parse_usb_url(url)
    return HidScannerShoe(events, vendor_id=vendor_id, product_id=product_id,
                          serial=options.pop("serial", serial), **options)
