"""The device the config names: a real path the service may not use is refused with one line
naming ``device.url``, before anything starts; and the in-process simulator of ``url = "sim"``
keeps an idle table quiet (a wake-up a second, not twenty) while still beating every second."""

from __future__ import annotations

import itertools
import os
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.service.config import DeviceConfig, DeviceKind
from controller.service.wiring.devices import DealingDevice, check_device_path, open_device
from controller.service.errors import ServiceError
from drivers.events import DeviceEvent, DeviceOnline
from firmware_sim.framed import HEARTBEAT_SECONDS
from firmware_sim.serve import BUSY_SECONDS

WAIT_SECONDS = 10.0
IDLE_BEATS = 3
"""Heartbeats watched once the simulator's link has gone idle."""


def _shuffler(url: str) -> DeviceConfig:
    return DeviceConfig(kind=DeviceKind.SHUFFLER, url=url)


def test_a_device_the_service_may_not_open_is_refused() -> None:
    """A character device without read and write access for the service's user is a
    deployment mistake (udev group, mode) no retry fixes: one line naming device.url. The
    check asks ``os.access`` through a seam, because these tests run as root, for whom it
    always says yes (tests/service_e2e runs the service as nobody against a real device)."""
    asked: list[tuple[str, int]] = []

    def denied(path: str, mode: int) -> bool:
        asked.append((path, mode))
        return False

    with pytest.raises(ServiceError) as caught:
        check_device_path(_shuffler("/dev/null"), access=denied)
    assert asked == [("/dev/null", os.R_OK | os.W_OK)]
    assert str(caught.value).startswith("device.url /dev/null: permission denied: the "
                                        "service's user needs read and write access")
    assert "\n" not in str(caught.value)


def test_a_device_the_service_may_open_is_accepted() -> None:
    """Read and write access to a character device: nothing to refuse."""
    check_device_path(_shuffler("/dev/null"), access=lambda path, mode: True)


def test_a_path_that_is_no_device_is_refused(tmp_path: Path) -> None:
    """A regular file is not a serial port, whatever its permissions."""
    plain = tmp_path / "table-shuffler"
    plain.write_text("")
    with pytest.raises(ServiceError, match="not a character device"):
        check_device_path(_shuffler(str(plain)))


@pytest.mark.parametrize("url", ["sim", "socket://127.0.0.1:7000", "/nonexistent/tablectl-dev"])
def test_what_is_not_a_present_path_is_left_to_the_driver(url: str) -> None:
    """The simulator and a TCP bridge have no path; an absent path may be a USB device not yet
    plugged in (the driver reports it offline and retries)."""
    check_device_path(_shuffler(url), access=lambda path, mode: False)


@pytest.fixture(name="events")
def fixture_events() -> queue.Queue[DeviceEvent]:
    return queue.Queue()


@pytest.fixture(name="sim_shuffler")
def fixture_sim_shuffler(events: queue.Queue[DeviceEvent]) -> Iterator[DealingDevice]:
    """The service's simulated shuffler (``url = "sim"``), started, and online."""
    device = open_device(_shuffler("sim"), events)
    device.start()
    try:
        while not isinstance(events.get(timeout=WAIT_SECONDS), DeviceOnline):
            pass
        yield device
    finally:
        device.close()


def _wakeups(name: str) -> int:
    """How often the thread ``name`` has blocked and woken (its voluntary context switches)."""
    (thread,) = [t for t in threading.enumerate() if t.name == name]
    status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
    return int(status.split("voluntary_ctxt_switches:")[1].split()[0])


def test_an_idle_simulated_device_wakes_once_a_heartbeat(sim_shuffler: DealingDevice) -> None:
    """Idle, the simulator's byte server ticks once per heartbeat (not every 50 ms) and the
    driver's reader wakes for the heartbeat and its read timeout (not every 50 ms), yet the
    heartbeat still comes every second: the link's silence supervision depends on it."""
    server, driver = sim_shuffler.server, sim_shuffler.driver
    sent: queue.Queue[float] = queue.Queue()

    def record(chunk: bytes) -> list[bytes]:
        sent.put(time.monotonic())
        return [chunk]

    server.set_manipulator(record)
    idle_from = time.monotonic() + BUSY_SECONDS
    beat = sent.get(timeout=WAIT_SECONDS)
    while beat < idle_from:  # the link is busy for a while after the driver connected
        beat = sent.get(timeout=WAIT_SECONDS)
    sim_before, reader_before = _wakeups("sim-shuffler"), _wakeups("device-shuffler")
    beats = [beat] + [sent.get(timeout=WAIT_SECONDS) for _ in range(IDLE_BEATS)]
    seconds = beats[-1] - beats[0]
    sim_rate = (_wakeups("sim-shuffler") - sim_before) / seconds
    reader_rate = (_wakeups("device-shuffler") - reader_before) / seconds
    gaps = [later - earlier for earlier, later in itertools.pairwise(beats)]
    assert all(HEARTBEAT_SECONDS * 0.9 <= gap < HEARTBEAT_SECONDS * 1.5 for gap in gaps), gaps
    # 20 a second with the fixed 50 ms tick; idle it is the heartbeat's 1, and on a loaded
    # machine the GIL's hand-offs add voluntary switches (3.3 seen with the suite beside it)
    assert sim_rate <= 6.0, sim_rate
    assert reader_rate <= 6.0, reader_rate  # 20 a second with a 50 ms read timeout
    assert driver.online
