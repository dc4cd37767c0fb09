"""Queue helpers for driver tests: wait on the event queue with a timeout, never sleep."""

from __future__ import annotations

import queue
import time

from drivers.events import DeviceEvent
from tests.waiting import wait_for

__all__ = ["TIMEOUT", "assert_quiet", "online", "take", "wait_for"]

TIMEOUT = 30.0  # a bound for an event that is coming: generous on a loaded machine


def take(events: queue.Queue[DeviceEvent], count: int,
         timeout: float = TIMEOUT) -> list[DeviceEvent]:
    """The next ``count`` events, in order."""
    deadline = time.monotonic() + timeout
    out: list[DeviceEvent] = []
    while len(out) < count:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"only {len(out)} of {count} events within {timeout} s: {out}")
        try:
            out.append(events.get(timeout=remaining))
        except queue.Empty:
            continue
    return out


def assert_quiet(events: queue.Queue[DeviceEvent], window: float = 0.2) -> None:
    """No further event arrives within ``window`` (bounded wait on the queue, not a sleep)."""
    try:
        extra = events.get(timeout=window)
    except queue.Empty:
        return
    raise AssertionError(f"unexpected event {extra}")


def online(events: queue.Queue[DeviceEvent], sim: object, timeout: float = TIMEOUT) -> None:
    """The driver reported DeviceOnline and the simulator has its host attached."""
    from drivers.events import DeviceOnline

    wait_for(events, DeviceOnline, timeout=timeout)
    assert sim.wait_attached(timeout), "simulator never saw the host connect"
