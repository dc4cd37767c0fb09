"""The framed driver asks IDENTIFY on each link-up and holds the device's events until the answer
(drivers/framed/identify.py): the identity is handed on first, then the events in their order.
A real simulator on a real pty."""

from __future__ import annotations

import queue
from pathlib import Path

from drivers.events import DeviceEvent, DeviceIdentity, DeviceOnline
from drivers.framed.messages import MsgType, Nak, NakReason
from drivers.shuffler import Shuffler
from firmware_sim.shuffler import IDENTITY, ShufflerSim
from tests.drivers.sim_fixtures import next_event, serve
from tests.waiting import wait_until

FAST = {"backoff": (0.02, 0.2), "attempt_timeout": 0.2}


class RefusingShuffler(ShufflerSim):
    """An older firmware: IDENTIFY is NAKed UNKNOWN; everything else as the simulator does."""

    asked = 0

    def _frame(self, seq: int, type_: int, frame: object) -> None:
        if type_ == MsgType.IDENTIFY:
            self.asked += 1
            self._reply(seq, type_, Nak(NakReason.UNKNOWN))
            return
        super()._frame(seq, type_, frame)


def test_the_identity_is_handed_on_before_the_online_report(tmp_path: Path) -> None:
    """The serial the simulator was built with, handed on once, ahead of DeviceOnline."""
    served = serve(ShufflerSim(seed=1, serial="SN-77"), "pty", tmp_path)
    events: queue.Queue[object] = queue.Queue()
    driver = Shuffler(served.url, events,  # type: ignore[arg-type]
                      on_identity=events.put, **FAST)
    try:
        driver.start()
        first = events.get(timeout=10.0)
        assert isinstance(first, DeviceIdentity) and first.serial == "SN-77"
        assert first.model == IDENTITY.model
        online = events.get(timeout=10.0)  # held until the identity went first
        assert isinstance(online, DeviceOnline) and online.identity is None
        assert driver.identity == first
    finally:
        driver.close()
        served.server.close()


def test_a_refused_identify_is_not_retried_and_the_events_go_on(tmp_path: Path) -> None:
    """NAK UNKNOWN is an answer: one try, nothing handed on, the device online all the same."""
    sim = RefusingShuffler(seed=1)
    served = serve(sim, "pty", tmp_path)
    events: queue.Queue[DeviceEvent] = queue.Queue()
    handed: list[DeviceIdentity] = []
    driver = Shuffler(served.url, events, on_identity=handed.append, **FAST)
    try:
        driver.start()
        next_event(events, DeviceOnline, timeout=10.0)
        assert driver.identifier is not None
        wait_until(lambda: driver.identifier.completed >= 1,  # type: ignore[union-attr]
                   "the identification completed")
        assert driver.identifier.failures == 1 and handed == []
        assert sim.asked == 1
    finally:
        driver.close()
        served.server.close()
