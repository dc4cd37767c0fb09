"""Fixtures and helpers shared by the framed-device tests: a simulator served over a real pty or
a real TCP socket, and queue helpers that wait with timeouts (never sleep)."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from drivers.events import DeviceEvent
from firmware_sim.framed import FramedSimDevice
from testbed.serving import Served, serve
from tests.waiting import wait_for

WAIT = 5.0
E = TypeVar("E", bound=DeviceEvent)


def next_event(events: queue.Queue[DeviceEvent], kind: type[E], timeout: float = WAIT,
               seen: list[DeviceEvent] | None = None) -> E:
    """The next event of type ``kind``; others are appended to ``seen``. Fails on timeout
    (:func:`tests.waiting.wait_for`, typed for the caller)."""
    event = wait_for(events, kind, timeout=timeout, seen=seen)
    assert isinstance(event, kind)
    return event


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
