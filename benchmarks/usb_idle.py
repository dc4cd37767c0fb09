"""Idle cost of the USB readers: reads (USB wake-ups) per second and CPU of an idle table.

A reader blocked in an interrupt or bulk read wakes once per read timeout when nothing arrives.
The HID scanner and the USB bulk link read with 50 ms timeouts before issue 10, 500 ms since
(a read still returns at the first report or packet, so latency does not change). This runs each
reader, idle, against the in-process pyusb backend for ``--seconds`` and counts the reads the
simulated device served (instrumented by subclassing it) and the process CPU they cost, for both
timeouts side by side.

Run: ``python benchmarks/usb_idle.py [--seconds 5] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import queue
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.logsetup import configure_logging  # noqa: E402
from drivers.decks import DeckMap  # noqa: E402
from drivers.events import DeviceEvent, DeviceOnline  # noqa: E402
from drivers.shoe.hid import HidScannerShoe  # noqa: E402
from drivers.shuffler import Shuffler  # noqa: E402
from drivers.usb_bulk import UsbBulkTransport  # noqa: E402
from firmware_sim.shuffler import ShufflerSim  # noqa: E402
from firmware_sim.usb.backend import SimUsbBackend  # noqa: E402
from firmware_sim.usb.bulk import BulkFramedUsbDevice  # noqa: E402
from firmware_sim.usb.hid_scanner import HidScannerSim  # noqa: E402


class _CountingHid(HidScannerSim):
    reads = 0

    def poll_in(self, endpoint: int, size: int, timeout_ms: int) -> bytes:
        self.reads += 1
        return super().poll_in(endpoint, size, timeout_ms)


class _CountingBulk(BulkFramedUsbDevice):
    reads = 0

    def poll_in(self, endpoint: int, size: int, timeout_ms: int) -> bytes:
        self.reads += 1
        return super().poll_in(endpoint, size, timeout_ms)


def _wait_online(events: queue.Queue[DeviceEvent]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if isinstance(events.get(timeout=10), DeviceOnline):
            return
    raise RuntimeError("reader never came online")


def _measure(device: Any, seconds: float) -> dict[str, float]:
    start_reads, cpu, wall = device.reads, time.process_time(), time.monotonic()
    time.sleep(seconds)  # the thing measured is what an idle table does while nobody acts
    wall = time.monotonic() - wall
    return {"reads_per_s": round((device.reads - start_reads) / wall, 1),
            "cpu_ms_per_s": round((time.process_time() - cpu) * 1000 / wall, 2)}


def hid_idle(timeout_ms: int, seconds: float) -> dict[str, float]:
    sim = _CountingHid(seed=1)
    events: queue.Queue[DeviceEvent] = queue.Queue()
    shoe = HidScannerShoe(events, vendor_id=sim.vendor_id, product_id=sim.product_id,
                          backend=SimUsbBackend([sim]), deck=DeckMap.load("generic-code128"),
                          read_timeout_ms=timeout_ms)
    shoe.start()
    try:
        _wait_online(events)
        return _measure(sim, seconds)
    finally:
        shoe.close()
        sim.close()


def bulk_idle(timeout_s: float, seconds: float) -> dict[str, float]:
    device = _CountingBulk(ShufflerSim(seed=1))
    backend = SimUsbBackend([device])
    events: queue.Queue[DeviceEvent] = queue.Queue()
    transport = UsbBulkTransport(device.vendor_id, device.product_id, backend=backend,
                                 read_timeout=timeout_s)
    with Shuffler(transport, events):
        _wait_online(events)
        result = _measure(device, seconds)
    device.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    configure_logging("WARNING")
    rows = {
        "hid 50 ms (before)": hid_idle(50, args.seconds),
        "hid 500 ms (now)": hid_idle(500, args.seconds),
        "bulk 50 ms (before)": bulk_idle(0.05, args.seconds),
        "bulk 500 ms (now)": bulk_idle(0.5, args.seconds),
    }
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"{'reader, read timeout':24} {'reads/s':>8} {'CPU ms/s':>9}")
        for name, row in rows.items():
            print(f"{name:24} {row['reads_per_s']:8} {row['cpu_ms_per_s']:9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
