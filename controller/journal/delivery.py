"""Numbered device events and the journal: acknowledged only once recorded, recorded only once.

A framed device (shuffler, framed shoe) resends every event until the host acknowledges it
(docs/protocols.md). If the host acknowledged on receipt, a controller killed between the
acknowledgement and the journal's record would lose the event for good: a dispensed hand that
neither the device nor the journal remembers. So the drivers are built with
``deferred_ack=True`` and the journal acknowledges instead, through :class:`Delivery`:

* after the input record is written (and, for a numbered event, fsynced under the ``money``
  policy), :meth:`Delivery.recorded` acknowledges it: from then on the journal holds it;
* when the record could not be written, :meth:`Delivery.not_recorded` lets the device's next
  resend through again, so the event is retried rather than dropped;
* after a restart the device resends what it still holds. An event whose record made it to the
  journal before the kill but whose acknowledgement did not is recognised by its origin (device,
  boot id, event id) in :class:`DeliveredWindow`, rebuilt from the journal by the replay, and is
  acknowledged again without being acted on twice. An event whose record did not make it is new
  to the journal: it is recorded and the table acts on it, after recovery has ruled on the round.

Events without an origin (the barcode shoes, the controller's own restart notices) pass through
untouched: their dialects have no acknowledgement to defer.
"""

from __future__ import annotations

from collections.abc import Iterable

import structlog

from drivers import events as dev
from drivers.window import RecentWindow

log = structlog.get_logger(__name__)

WINDOW = 4096
"""How many recorded origins are remembered: far more than a device can hold unacknowledged
(a device resends a handful at most; event ids wrap only after 65,535)."""

Key = tuple[str, int, int]
"""(device name, boot id, event id)."""


def origin_key(event: object) -> Key | None:
    """The identity of a numbered event from a known boot; ``None`` for anything else (an
    event from an unknown boot cannot be told apart from a later boot's, so it is never
    dropped as a copy)."""
    if not isinstance(event, dev.DeviceEvent):
        return None
    origin = event.origin
    if origin is None or origin.boot_id is None:
        return None
    return event.device, origin.boot_id, origin.event_id


class DeliveredWindow(RecentWindow[Key]):
    """The origins of the last :data:`WINDOW` numbered events the journal holds."""

    __slots__ = ()

    def __init__(self, keys: Iterable[Key] = ()) -> None:
        super().__init__(WINDOW, keys)

    def see(self, event: object) -> None:
        """Remember ``event``'s origin, when it has one (the replay feeds every input)."""
        key = origin_key(event)
        if key is not None:
            self.add(key)


class Delivery:
    """The journal's side of deferred acknowledgement; runs on the table thread only."""

    def __init__(self, delivered: DeliveredWindow | None = None) -> None:
        self.delivered = delivered if delivered is not None else DeliveredWindow()
        self._links: dict[str, dev.EventAcknowledger] = {}
        self.repeats = 0

    def attach(self, device: str, link: dev.EventAcknowledger) -> None:
        """Route the acknowledgements of ``device``'s events to ``link`` (its driver)."""
        self._links[device] = link

    def already_recorded(self, event: object) -> bool:
        key = origin_key(event)
        return key is not None and key in self.delivered

    def recorded(self, event: dev.DeviceEvent) -> None:
        """The journal holds ``event``: remember it and acknowledge it to its device."""
        key = origin_key(event)
        if key is not None:
            self.delivered.add(key)
        link = self._links.get(event.device)
        if link is not None and event.origin is not None:
            link.acknowledge(event.origin)

    def repeated(self, event: dev.DeviceEvent) -> None:
        """A resend of an event the journal already holds: its acknowledgement was lost (the
        controller stopped in between). Acknowledge it again; the table does not see it."""
        self.repeats += 1
        log.info("device resent an event the journal holds; acknowledged, not acted on again",
                 device=event.device, input=type(event).__name__,
                 event_id=event.origin.event_id if event.origin else None)
        self.recorded(event)

    def not_recorded(self, event: dev.DeviceEvent) -> None:
        """The journal could not take ``event``: let the device's next resend through."""
        link = self._links.get(event.device)
        if link is not None and event.origin is not None:
            link.redeliver(event.origin)
