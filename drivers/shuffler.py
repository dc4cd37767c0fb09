"""The hand-forming card shuffler on the framed link (docs/protocols.md, "Shuffler").

Commands block until the device answers and raise from the drivers tree:
:class:`DriverTimeoutError` (no answer after the retries), :class:`CommandRejected` carrying the
:class:`NakReason`, :class:`DeviceFault` (rejected because a fault is active, or the device
rebooted under the command). What the machine does *afterwards* arrives as events on the queue:
:class:`ShuffleDone`, :class:`CardSetDispensed`, :class:`HandTaken`, :class:`FaultRaised`,
:class:`FaultCleared`, plus the link's online/offline/rebooted.

No command returns the undealt cards or their order; the protocol has no way to ask.
"""

from __future__ import annotations

import queue
from typing import Any

from drivers.events import DeviceEvent
from drivers.framed.device import DeviceStatus, FramedDevice, Meters
from drivers.framed.messages import ClearFault, DispenseHand, EndRound, Shuffle
from drivers.transport import Transport

__all__ = ["DeviceStatus", "Meters", "Shuffler"]


class Shuffler(FramedDevice):
    """``Shuffler(url_or_transport, events)``; use as a context manager or start()/close()."""

    def __init__(self, target: str | Transport, events: queue.Queue[DeviceEvent], *,
                 name: str = "shuffler", **options: Any) -> None:
        super().__init__(target, events, name=name, **options)

    def shuffle(self) -> None:
        """Start shuffling the deck; :class:`ShuffleDone` follows with counted vs expected.
        Accepted in idle; a device MAY refuse it with BAD_STATE in any other state, so end the
        previous round first (docs/protocols.md 5.2)."""
        self._command(Shuffle())

    def dispense_hand(self) -> None:
        """Form and present one hand; :class:`CardSetDispensed` follows, then
        :class:`HandTaken` when the dealer removes it. A retried command never dispenses twice."""
        self._command(DispenseHand())

    def end_round(self) -> None:
        """Close the round (send it at the end of every round, settled, voided or abandoned):
        the remaining cards, and a presented hand, are collected; the device is idle and needs
        a new shuffle. Refused BUSY while the mechanism moves, and while a fault is active
        (a :class:`DeviceFault`: clear it first) (docs/protocols.md 5.7)."""
        self._command(EndRound())

    def clear_fault(self) -> None:
        """Clear the faults whose cause is gone (jam, door shut): ACK, then one
        :class:`FaultCleared` each; a fault whose cause persists stays (docs/protocols.md
        5.5). Older firmware sends FaultCleared before the ACK: either order is accepted."""
        self._command(ClearFault())
