"""Shoe driver for the Bee-Tek shoe's ASCII output (9600 baud, 8N1).

``<Card:..>`` is a :class:`CardRead` (``burn=True`` from the ``[Manual Burn Cards]`` section),
``<Game>`` a :class:`NoRead`. Alarms map through :data:`ALARMS` (data, so a newly captured code
is one line): E3 card not read, E4 reversed and E5 exposed are :class:`FaultRaised`; E6 double
card is :class:`DoubleFeed`; an unknown alarm or a ``<W0x..>`` warning is a
:class:`DeviceWarning`. Bee-Tek alarms are momentary: the shoe sends no "cleared" message.
"""

from __future__ import annotations

import queue
from typing import Any

from drivers.events import DeviceEvent, DeviceWarning, DoubleFeed, Fault, FaultRaised
from drivers.shoe.beetek_codec import (
    BeeTekAlarm,
    BeeTekCard,
    BeeTekCodec,
    BeeTekNoRead,
    BeeTekWarning,
)
from drivers.shoe.codes import Garbage
from drivers.shoe.lines import LineShoe
from drivers.transport import Transport

ALARMS: dict[str, Fault | None] = {
    "E3": Fault.UNREADABLE_CARD,
    "E4": Fault.REVERSED_CARD,
    "E5": Fault.EXPOSED_CARD,
    "E6": None,  # double card: a DoubleFeed event rather than a fault bit
}
WARNINGS = {"W0x01": "shoe warning 0x01"}


class BeeTekShoe(LineShoe):
    """``BeeTekShoe("/dev/ttyUSB0", events)``; Bee-Tek shoes report rank and suit, no deck id."""

    def __init__(self, url: str | Transport, events: queue.Queue[DeviceEvent], *,
                 name: str = "shoe", baudrate: int = 9600, **runner_options: Any) -> None:
        super().__init__(url, events, name=name, decoder=BeeTekCodec(), baudrate=baudrate,
                         tracker_options={"deck": None, "no_read_text": None}, **runner_options)

    def handle(self, message: object) -> None:
        tracker = self.tracker
        if isinstance(message, BeeTekCard):
            tracker.card(message.card, burn=message.burn)
        elif isinstance(message, BeeTekNoRead):
            tracker.no_read()
        elif isinstance(message, BeeTekAlarm):
            self._alarm(message)
        elif isinstance(message, BeeTekWarning):
            self.emit(DeviceWarning(self.name, self.clock(), code=message.code,
                                    text=WARNINGS.get(message.code, "")))
        elif isinstance(message, Garbage):
            tracker.garbage(message)

    def _alarm(self, alarm: BeeTekAlarm) -> None:
        now = self.clock()
        detail = f"{alarm.code} {alarm.text}".strip()
        if alarm.code not in ALARMS:
            self.emit(DeviceWarning(self.name, now, code=alarm.code, text=alarm.text))
        elif (fault := ALARMS[alarm.code]) is None:
            self.emit(DoubleFeed(self.name, now))
        else:
            self.emit(FaultRaised(self.name, now, fault=fault, detail=detail))
