"""The framed card-reading shoe: our framed link, shoe events (docs/protocols.md, "Framed shoe").

Emits :class:`CardRead` (with the shoe's event id deduplicated by the link and the card's index in
the shoe), :class:`NoRead`, :class:`DoubleFeed`, :class:`ForeignCard`,
:class:`FaultRaised`/:class:`FaultCleared` for ``LID_OPEN``, and :class:`ButtonPressed`.
"""

from __future__ import annotations

import queue
from typing import Any

from drivers.events import DeviceEvent
from drivers.framed.device import FramedDevice
from drivers.transport import Transport


class FramedShoe(FramedDevice):
    """``FramedShoe(url_or_transport, events)``; identify() and status() as for the shuffler."""

    def __init__(self, target: str | Transport, events: queue.Queue[DeviceEvent], *,
                 name: str = "shoe", **options: Any) -> None:
        super().__init__(target, events, name=name, **options)
