"""Scenarios for a shoe that only talks (scanner, Bee-Tek, USB HID: docs/protocols-shoes.md).

These dialects have no commands, sequence numbers or acknowledgements to check, so the kit
checks what they allow: the port opens and the shoe comes online; left alone it reports no
card (a reader never produces a card it was not shown); a card drawn by a person is reported
once, as a card of the configured deck.
"""

from __future__ import annotations

import queue
from typing import Any

from drivers.conformance.session import (
    Action, Bench, Nonconformance, Operator, Scenario, Unanswered,
)
from drivers.events import CardRead, DeviceEvent, DeviceOnline, ForeignCard, LinkError, NoRead

CONNECT_SECONDS = 5.0
QUIET_SECONDS = 2.0
EVENT_SECONDS = 30.0
CLAUSE = "shoes"  # docs/protocols-shoes.md, "Common to every dialect"
_REPORTS = (CardRead, NoRead, ForeignCard)


class ReaderSession(Bench):
    """A started shoe driver and the queue its events arrive on."""

    def __init__(self, driver: Any, events: queue.Queue[DeviceEvent],
                 operator: Operator) -> None:
        super().__init__(operator)
        self.driver = driver
        self.events = events
        self.heard = False
        self.seen: list[DeviceEvent] = []
        """Every event the kit has taken, so a row can be judged on all it saw."""
        self._row_start = 0

    def prepare(self) -> str:
        self._row_start = len(self.seen)
        return ""

    def breach(self, since: int | None = None) -> Nonconformance | None:
        """Bytes the dialect's format does not allow (docs/protocols-shoes.md: printable
        ASCII lines of at most 80 bytes, the Bee-Tek's bodies, the HID report's keys), seen
        by the driver as a ``LinkError`` during the row: the talk-only dialects' field check
        (the kit sees their bytes only through the driver)."""
        for event in self.seen[self._row_start if since is None else since:]:
            if isinstance(event, LinkError):
                return Nonconformance(CLAUSE, f"the shoe sent bytes its dialect does not "
                                              f"allow: {event.reason}, {event.dropped} bytes "
                                              "dropped (docs/protocols-shoes.md gives each "
                                              "dialect's format)")
        return None

    def take(self, seconds: float) -> list[DeviceEvent]:
        """Every event during ``seconds``."""
        out: list[DeviceEvent] = []
        try:
            while True:
                out.append(self.events.get(timeout=seconds))
                seconds = 0.05  # drain what follows closely, then stop
        except queue.Empty:
            pass
        self.heard = self.heard or bool(out)
        self.seen.extend(out)
        return out

    def next(self, kinds: tuple[type[DeviceEvent], ...], seconds: float) -> DeviceEvent | None:
        try:
            while True:
                event = self.events.get(timeout=seconds)
                self.heard = True
                self.seen.append(event)
                if isinstance(event, kinds):
                    return event
        except queue.Empty:
            return None


def connects(s: ReaderSession) -> str:
    connected = getattr(s.driver, "connected", None)
    if connected is not None and not connected.wait(CONNECT_SECONDS):
        raise Unanswered(CLAUSE, f"the port did not open within {CONNECT_SECONDS:g} s: "
                                 f"{getattr(s.driver, 'last_error', '') or 'no answer'}")
    s.next((DeviceOnline,), 0.5)
    return "online"


def quiet(s: ReaderSession) -> str:
    reports = [e for e in s.take(QUIET_SECONDS) if isinstance(e, _REPORTS)]
    if reports:
        raise Nonconformance(CLAUSE, f"{type(reports[0]).__name__} with no card drawn: a "
                                     "reader must never produce a card it was not shown")
    return f"no card reported in {QUIET_SECONDS:g} s with nothing drawn"


def card(s: ReaderSession) -> str:
    s.physical(Action.DRAW_CARD)
    first = s.next(_REPORTS, EVENT_SECONDS)
    if first is None:
        raise Nonconformance(CLAUSE, f"no card reported within {EVENT_SECONDS:g} s of the draw")
    if not isinstance(first, CardRead):
        raise Nonconformance(CLAUSE, f"the drawn card was reported as {type(first).__name__} "
                                     "(is the deck map right?)")
    again = [e for e in s.take(1.0) if isinstance(e, _REPORTS)]
    if again:
        raise Nonconformance(CLAUSE, f"one card drawn, {1 + len(again)} reports")
    return f"{first.card.code} at index {first.index_in_shoe}"


SCENARIOS = (
    Scenario("connects", "the port opens, the shoe comes online", CLAUSE, connects),
    Scenario("quiet", "nothing drawn: no card reported", CLAUSE, quiet),
    Scenario("card", "a drawn card: one CardRead of the deck", CLAUSE, card, Action.DRAW_CARD),
)
