"""Latency from the last byte of a frame written into a pty to the typed event on the queue.

The serial line is the bottleneck we want: one CARD frame is 14 bytes, about 1.2 ms on the wire
at 115200 baud, so our decode path should stay well under that (goal: p99 < 1 ms). We write one
framed ``CARD`` event at a time into the pty master, timestamp right after ``os.write`` returns,
and compare with the ``at`` stamp the driver puts on the ``CardRead`` just before it is queued
(same clock, ``time.perf_counter``). Like a device, it first sends a heartbeat naming its boot
(the link takes events only from a known boot). The host's ``RESYNC`` and ``EVENT_ACK`` frames are
drained from the master so the pty buffer never fills.
"""

from __future__ import annotations

import os
import queue
import statistics
import time
import tty

from controller.games.cards import FULL_DECK
from drivers.events import CardRead, DeviceEvent
from drivers.framed.codec import encode_message
from drivers.framed.event_messages import CardMsg
from drivers.framed.messages import DeviceState, Heartbeat
from drivers.shoe.framed import FramedShoe


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure_latency(events: int = 10000) -> dict[str, float]:
    """Return p50/p99/max latency in milliseconds over ``events`` CardRead events."""
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    path = os.ttyname(slave)
    out: queue.Queue[DeviceEvent] = queue.Queue()
    latencies: list[float] = []
    shoe = FramedShoe(path, out, clock=time.perf_counter)
    try:
        shoe.start()
        if not shoe.connected.wait(5):
            raise RuntimeError(f"benchmark could not open {path}: {shoe.last_error}")
        os.write(master, encode_message(0, Heartbeat(0x5EED, 0, DeviceState.IDLE, 0)))
        for i in range(events + 100):  # the first 100 warm up caches and the thread
            frame = encode_message(0, CardMsg(i % 0xFFFF + 1, i % 52 + 1, FULL_DECK[i % 52]))
            os.write(master, frame)
            written = time.perf_counter()
            while True:
                event = out.get(timeout=5)
                if isinstance(event, CardRead):
                    break
            if i >= 100:
                latencies.append(event.at - written)
            os.set_blocking(master, False)
            try:
                while os.read(master, 4096):
                    pass
            except BlockingIOError:
                pass
            os.set_blocking(master, True)
    finally:
        shoe.close()
        os.close(master)
        os.close(slave)
    ms = [1000.0 * v for v in latencies]
    return {
        "events": float(len(ms)),
        "p50_ms": _percentile(ms, 0.50),
        "p99_ms": _percentile(ms, 0.99),
        "max_ms": max(ms),
        "mean_ms": statistics.fmean(ms),
    }


if __name__ == "__main__":
    from controller.logsetup import configure_logging

    configure_logging("WARNING")
    result = measure_latency()
    print(f"pty -> CardRead latency over {int(result['events'])} events: "
          f"p50 {result['p50_ms']:.3f} ms, p99 {result['p99_ms']:.3f} ms, "
          f"max {result['max_ms']:.3f} ms")
