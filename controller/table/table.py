"""The table thread: one queue in, round events out, one thread owning all table state.

Device reader threads and the operator interface only ``put`` inputs on :attr:`Table.inputs`;
the table thread takes them one at a time and hands each to the :class:`RoundMachine`. Output
round events go to every subscriber, in order, on the table thread. Nothing here reads a clock
or a random source, so the same inputs always give the same outputs (the journal replays them).
No exception kills the thread: an input that fails is logged and refused, and the next is taken.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable

import structlog

from controller.settlement.model import TableMemory
from controller.table import events as ev
from controller.table.layout import TableLayout
from controller.table.machine import RoundMachine

log = structlog.get_logger("controller.table")

Subscriber = Callable[[ev.RoundEvent], None]
Tap = Callable[[object], None]
_STOP = object()


class Table:
    """A table: ``start()`` its thread, ``put()`` inputs, ``close()`` to stop and join."""

    def __init__(self, layout: TableLayout, subscribers: Iterable[Subscriber] = (),
                 memory: TableMemory = TableMemory()) -> None:
        self.layout = layout
        self.inputs: queue.Queue[object] = queue.Queue()
        self.subscribers: list[Subscriber] = list(subscribers)
        self.taps: list[Tap] = []
        self.machine = RoundMachine(layout, self._publish, memory)
        self._thread: threading.Thread | None = None

    def subscribe(self, subscriber: Subscriber) -> None:
        """Add a subscriber before :meth:`start` (the list is read by the table thread)."""
        self.subscribers.append(subscriber)

    def tap(self, tap: Tap) -> None:
        """Add, before :meth:`start`, a callable that sees every input just before the table
        thread handles it (the surveillance journal records inputs in handling order)."""
        self.taps.append(tap)

    def put(self, item: object) -> None:
        """Thread-safe: queue a command or device event for the table thread."""
        self.inputs.put(item)

    def _publish(self, event: ev.RoundEvent) -> None:
        for subscriber in self.subscribers:
            try:
                subscriber(event)
            except Exception:  # a broken display must not stop the table
                log.exception("subscriber failed", subscriber=repr(subscriber),
                              round_event=type(event).__name__)

    def process(self, item: object) -> None:
        """Handle one input on the calling thread (the table thread, or a test/replay)."""
        with structlog.contextvars.bound_contextvars(table=self.layout.table_id,
                                                     round=self.machine.number):
            try:
                self.machine.handle(item)
            except Exception:  # never let one input kill the table thread
                log.exception("input failed", input=type(item).__name__)
                self._publish(ev.CommandRefused(round=self.machine.number,
                                                command=type(item).__name__,
                                                reason="internal error; see the log"))

    def run(self) -> None:
        """The table thread's loop: until :meth:`close`, take one input and handle it."""
        while True:
            item = self.inputs.get()
            if item is _STOP:
                return
            for tap in self.taps:
                try:
                    tap(item)
                except Exception:  # a failing recorder must not stop the table
                    log.exception("input tap failed", tap=repr(tap), input=type(item).__name__)
            self.process(item)

    def start(self) -> Table:
        if self._thread is not None:
            raise RuntimeError("table already started")
        self._thread = threading.Thread(target=self.run, name=f"table-{self.layout.table_id}",
                                        daemon=True)
        self._thread.start()
        return self

    def close(self, timeout: float = 5.0) -> None:
        """Stop after the inputs already queued, and join the thread."""
        if self._thread is None:
            return
        self.inputs.put(_STOP)
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise RuntimeError("table thread did not stop")
        self._thread = None

    def __enter__(self) -> Table:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
