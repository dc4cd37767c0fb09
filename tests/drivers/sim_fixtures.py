"""Fixtures and helpers shared by the framed-device tests: a simulator served over a real pty or
a real TCP socket, and queue helpers that wait with timeouts (never sleep)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from drivers.events import DeviceEvent
from firmware_sim.framed import FramedSimDevice, bind_server
from firmware_sim.serve import PtyServer, TcpServer

WAIT = 5.0
E = TypeVar("E", bound=DeviceEvent)


@dataclass
class Served:
    """A simulator behind a byte server, and the URL a driver opens."""

    sim: FramedSimDevice
    server: PtyServer | TcpServer
    url: str


def serve(sim: FramedSimDevice, kind: str, tmp_path: Path) -> Served:
    if kind == "pty":
        server: PtyServer | TcpServer = PtyServer(sim, link=tmp_path / "device")
        url = str(tmp_path / "device")
    else:
        server = TcpServer(sim)
        url = server.url
    bind_server(sim, server)
    server.start()
    return Served(sim, server, url)


def next_event(events: queue.Queue[DeviceEvent], kind: type[E], timeout: float = WAIT,
               seen: list[DeviceEvent] | None = None) -> E:
    """The next event of type ``kind``; others are appended to ``seen``. Fails on timeout."""
    while True:
        try:
            event = events.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no {kind.__name__} within {timeout} s (saw {seen})")
        if isinstance(event, kind):
            return event
        if seen is not None:
            seen.append(event)


def wait_until(condition: Callable[[], bool], timeout: float = WAIT) -> bool:
    """Poll ``condition`` (bounded) for state that no event announces, such as what the
    simulator still holds unacknowledged; ``True`` once it holds, ``False`` at the deadline."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not condition():
        if time.monotonic() > deadline:
            return False
        pause.wait(0.01)
    return True


def drain(events: queue.Queue[DeviceEvent]) -> list[DeviceEvent]:
    out = []
    while True:
        try:
            out.append(events.get_nowait())
        except queue.Empty:
            return out


@pytest.fixture(name="events")
def fixture_events() -> queue.Queue[DeviceEvent]:
    return queue.Queue()


@pytest.fixture(name="served")
def fixture_served(sim: FramedSimDevice, transport_kind: str, tmp_path: Path
                   ) -> Iterator[Served]:
    """The test module's ``sim`` fixture, served over a pty or a TCP socket."""
    served = serve(sim, transport_kind, tmp_path)
    yield served
    served.server.close()


@pytest.fixture(name="transport_kind", params=["pty", "tcp"])
def fixture_transport_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)
