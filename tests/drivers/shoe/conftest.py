"""Fixtures serving a simulated shoe over a real pty (stable symlink) or a TCP socket."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from drivers.events import DeviceEvent
from firmware_sim.serve import PtyServer, TcpServer

FAST_BACKOFF = (0.05, 0.2)


@dataclass
class Served:
    server: PtyServer | TcpServer
    url: str


@pytest.fixture(name="events")
def fixture_events() -> queue.Queue[DeviceEvent]:
    return queue.Queue()


@pytest.fixture(name="link", params=["pty", "tcp"])
def fixture_link(request: pytest.FixtureRequest) -> str:
    """Every serial-dialect driver test runs over a real pty and over TCP (``socket://``)."""
    return request.param


@pytest.fixture(name="serve")
def fixture_serve(link, tmp_path) -> Iterator:
    """``serve(sim)`` starts a server for ``sim`` and returns its URL; closed after the test."""
    started: list[tuple[object, PtyServer | TcpServer]] = []

    def _serve(sim) -> Served:
        if link == "pty":
            server: PtyServer | TcpServer = PtyServer(sim, link=tmp_path / "shoe")
            url = str(tmp_path / "shoe")
        else:
            server = TcpServer(sim)
            url = server.url
        server.start()
        sim.bind_link(server)
        started.append((sim, server))
        return Served(server, url)

    yield _serve
    for sim, server in started:
        sim.close()
        server.close()
