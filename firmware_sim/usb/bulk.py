"""The simulated shuffler as a raw USB device: vendor class 0xFF, bulk OUT 0x01, bulk IN 0x81.

The bytes on the endpoints are exactly the framed link's (docs/protocols.md); the USB side only
packetises them. A small tick thread runs the device's timers (heartbeat, shuffle, hand) while
it is plugged; :meth:`close` stops it. ``disconnect`` unplugs from the backend and plugs back.
"""

from __future__ import annotations

import threading

from firmware_sim.framed import FramedSimDevice
from firmware_sim.serve import TICK_SECONDS
from firmware_sim.usb.backend import SimUsbBackend, SimUsbDevice
from firmware_sim.usb.descriptors import ConfigurationSpec, EndpointSpec, InterfaceSpec, Transfer

EP_OUT = 0x01
EP_IN = 0x81
PACKET = 64


class BulkFramedUsbDevice(SimUsbDevice):
    """Exposes ``sim`` (a :class:`FramedSimDevice`) over a bulk endpoint pair."""

    vendor_id = 0x1209
    product_id = 0x5348  # "SH"
    manufacturer = "Tablectl Sim"
    product = "HF-3 shuffler (USB bulk)"
    serial = "SIM-HF3-USB1"
    device_class = 0x00
    initial_configuration = 0  # raw vendor device: nobody configures it before we do
    configurations = (
        ConfigurationSpec(1, (InterfaceSpec(
            0, 0xFF, (EndpointSpec(EP_OUT, Transfer.BULK, PACKET),
                      EndpointSpec(EP_IN, Transfer.BULK, PACKET)),
            name="framed link"),)),
    )

    def __init__(self, sim: FramedSimDevice) -> None:
        super().__init__()
        self.sim = sim
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._gen = 0
        sim.unplug_hook = self._unplug_for
        self._replugger: threading.Thread | None = None

    # data path --------------------------------------------------------------------------------
    def _send(self, data: bytes) -> None:
        for start in range(0, len(data), PACKET):
            self.queue_in(EP_IN, data[start:start + PACKET])

    def on_out(self, endpoint: int, data: bytes) -> None:
        if endpoint == EP_OUT:
            self.sim.receive(data)

    # plugging ---------------------------------------------------------------------------------
    def on_plug(self) -> None:
        self.sim.attach(self._send)
        if self._ticker is None:
            self._stop.clear()
            self._ticker = threading.Thread(target=self._tick, name="sim-usb-tick", daemon=True)
            self._ticker.start()

    def on_unplug(self) -> None:
        self.sim.detach()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            if self.backend is not None and self.backend.is_plugged(self):
                self.sim.tick(self.sim.clock())

    def _unplug_for(self, seconds: float) -> None:
        backend = self.backend
        if backend is None:
            return

        def run() -> None:
            backend.unplug(self)
            if not self._stop.wait(seconds):
                backend.plug(self)

        self._replugger = threading.Thread(target=run, name="sim-usb-replug", daemon=True)
        self._replugger.start()

    def close(self) -> None:
        """Stop the timers (and a pending replug)."""
        self._stop.set()
        for thread in (self._ticker, self._replugger):
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout=2.0)
        self._ticker = self._replugger = None


def serve_usb(sim: FramedSimDevice) -> tuple[SimUsbBackend, BulkFramedUsbDevice]:
    """A backend with ``sim`` plugged in as a bulk device; close the device when done."""
    device = BulkFramedUsbDevice(sim)
    return SimUsbBackend([device]), device
