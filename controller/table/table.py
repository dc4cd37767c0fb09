"""The table: the :class:`RoundMachine` and its subscribers, one input at a time.

:meth:`Table.process` hands one input (a command or a device event) to the machine on the calling
thread; output round events go to every subscriber, in order, on that thread. The table has no
thread or queue of its own: the service's table thread
(:mod:`controller.service.wiring.tablethread`) is the one loop that feeds it, through the
journal (:class:`~controller.journal.recorder.JournaledTable` records each input before the
table acts on it); replay and recovery (:mod:`controller.journal.replay`,
:mod:`~controller.journal.recovery`) feed recorded inputs the same way, synchronously. Nothing
here reads a clock or a random source, so the same inputs always give the same outputs (the
journal replays them). An input that fails is logged and refused; the next is taken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import structlog

from controller.settlement.model import TableMemory
from controller.table import events as ev
from controller.table.layout import TableLayout
from controller.table.machine import RoundMachine

log = structlog.get_logger("controller.table")

Subscriber = Callable[[ev.RoundEvent], None]


class Table:
    """A table: :meth:`process` one input at a time; round events go to the subscribers."""

    def __init__(self, layout: TableLayout, subscribers: Iterable[Subscriber] = (),
                 memory: TableMemory = TableMemory()) -> None:
        self.layout = layout
        self.subscribers: list[Subscriber] = list(subscribers)
        self.machine = RoundMachine(layout, self._publish, memory)

    def subscribe(self, subscriber: Subscriber) -> None:
        """Add a subscriber before the first input (the list is read on the processing
        thread)."""
        self.subscribers.append(subscriber)

    def _publish(self, event: ev.RoundEvent) -> None:
        for subscriber in self.subscribers:
            try:
                subscriber(event)
            except Exception:  # a broken display must not stop the table
                log.exception("subscriber failed", subscriber=repr(subscriber),
                              round_event=type(event).__name__)

    def process(self, item: object) -> None:
        """Handle one input on the calling thread (the table thread, through the journal; or
        replay, recovery, a test)."""
        with structlog.contextvars.bound_contextvars(table=self.layout.table_id,
                                                     round=self.machine.number):
            try:
                self.machine.handle(item)
            except Exception:  # never let one input kill the table thread
                log.exception("input failed", input=type(item).__name__)
                self._publish(ev.CommandRefused(round=self.machine.number,
                                                command=type(item).__name__,
                                                reason="internal error; see the log"))
