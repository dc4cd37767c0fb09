"""The byte transport and the reader-thread runner, against real ptys and TCP sockets."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from drivers.errors import DeviceDisconnected, OpenFailed
from drivers.events import DeviceEvent, DeviceOffline, DeviceOnline, LinkError
from drivers.runner import DeviceRunner
from drivers.transport import SerialTransport
from firmware_sim.serve import PtyServer, TcpServer

WAIT = 5.0


class EchoDevice:
    """A SimDevice that answers every chunk upper-cased."""

    def __init__(self) -> None:
        self.send: Callable[[bytes], None] | None = None

    def attach(self, send: Callable[[bytes], None]) -> None:
        self.send = send

    def receive(self, data: bytes) -> None:
        if self.send is not None:
            self.send(data.upper())

    def tick(self, now: float) -> None:
        pass

    def detach(self) -> None:
        self.send = None


class Recorder(DeviceRunner):
    """Forwards bytes as tuples; can be told to blow up in a hook."""

    explode = False

    def on_bytes(self, data: bytes) -> None:
        if self.explode:
            raise RuntimeError("boom")
        self.emit(DeviceEvent(self.name))  # marker
        self.received.put(data)

    received: queue.Queue[bytes]


def _next(events: queue.Queue[DeviceEvent], kind: type) -> DeviceEvent:
    while True:
        event = events.get(timeout=WAIT)
        if isinstance(event, kind):
            return event


@pytest.fixture(name="events")
def fixture_events() -> queue.Queue[DeviceEvent]:
    return queue.Queue()


@pytest.fixture(name="server", params=["pty", "tcp"])
def fixture_server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PtyServer | TcpServer]:
    if request.param == "pty":
        server: PtyServer | TcpServer = PtyServer(EchoDevice(), link=tmp_path / "dev")
    else:
        server = TcpServer(EchoDevice())
    with server:
        yield server


def _url(server: PtyServer | TcpServer) -> str:
    return str(server.link) if isinstance(server, PtyServer) else server.url


@pytest.fixture(name="runner")
def fixture_runner(server: PtyServer | TcpServer,
                   events: queue.Queue[DeviceEvent]) -> Iterator[Recorder]:
    runner = Recorder("echo", SerialTransport(_url(server)), events, backoff=(0.05, 0.2))
    runner.received = queue.Queue()
    with runner:
        yield runner


def test_open_failure_is_open_failed() -> None:
    """Opening a port that does not exist raises OpenFailed naming the URL, chained to the cause."""
    transport = SerialTransport("/dev/does-not-exist-tablectl")
    with pytest.raises(OpenFailed, match="does-not-exist") as info:
        transport.open()
    assert info.value.__cause__ is not None
    assert not transport.is_open


def test_read_timeout_is_not_disconnect(server: PtyServer | TcpServer) -> None:
    """A read with nothing to read returns b'' after the timeout; the link stays open."""
    transport = SerialTransport(_url(server), read_timeout=0.02)
    with transport:
        assert transport.read() == b""
        assert transport.is_open
    transport.close()  # idempotent
    assert not transport.is_open


def test_write_after_close_is_disconnect(server: PtyServer | TcpServer) -> None:
    """Writing to a closed transport raises DeviceDisconnected, not a pyserial error."""
    transport = SerialTransport(_url(server))
    transport.open()
    transport.close()
    with pytest.raises(DeviceDisconnected):
        transport.write(b"x")


def test_runner_online_and_echo(runner: Recorder, events: queue.Queue[DeviceEvent]) -> None:
    """The runner reports the device online, writes, and hands received bytes to on_bytes."""
    assert isinstance(_next(events, DeviceOnline), DeviceOnline)
    runner.write(b"hello")
    got = b""
    while len(got) < 5:
        got += runner.received.get(timeout=WAIT)
    assert got == b"HELLO"


def test_unplug_reports_offline_once_then_online(server: PtyServer | TcpServer, runner: Recorder,
                                                 events: queue.Queue[DeviceEvent]) -> None:
    """Unplug closes the handle and reports offline once; replug reconnects with backoff."""
    _next(events, DeviceOnline)
    runner.write(b"a")  # a round trip proves the server has accepted us before we unplug
    assert runner.received.get(timeout=WAIT) == b"A"
    server.unplug()
    offline = _next(events, DeviceOffline)
    assert offline.device == "echo"
    server.replug()
    _next(events, DeviceOnline)
    runner.write(b"again")
    got = b""
    while len(got) < 5:
        got += runner.received.get(timeout=WAIT)
    assert got == b"AGAIN"
    seen = []
    while not events.empty():
        seen.append(events.get_nowait())
    assert not any(isinstance(e, DeviceOffline) for e in seen)


def test_absent_device_reports_offline_once(events: queue.Queue[DeviceEvent],
                                            tmp_path: Path) -> None:
    """A device absent at start is reported offline once, not once per retry."""
    retried = threading.Event()
    attempts = []

    class Counting(Recorder):
        def on_disconnected(self, reason: str) -> None:
            attempts.append(reason)
            if len(attempts) >= 4:
                retried.set()
            super().on_disconnected(reason)

    runner = Counting("ghost", SerialTransport(str(tmp_path / "nothing")), events,
                      backoff=(0.01, 0.02))
    with runner:
        assert retried.wait(WAIT)
    assert isinstance(events.get_nowait(), DeviceOffline)
    assert events.empty()


def test_hook_exception_becomes_link_error(runner: Recorder,
                                           events: queue.Queue[DeviceEvent]) -> None:
    """An exception in a hook is logged and emitted as LinkError; the reader keeps running."""
    _next(events, DeviceOnline)
    runner.explode = True
    runner.write(b"x")
    error = _next(events, LinkError)
    assert "boom" in error.reason
    runner.explode = False
    runner.write(b"y")
    assert runner.received.get(timeout=WAIT) == b"Y"
    assert runner.running


def test_close_is_idempotent(runner: Recorder) -> None:
    """close() twice is harmless and leaves no thread."""
    runner.close()
    runner.close()
    assert not runner.running
    assert not runner.transport.is_open


def test_bad_backoff_is_config_error(events: queue.Queue[DeviceEvent]) -> None:
    """A backoff whose first delay exceeds the ceiling is refused with a clear error."""
    from drivers.errors import DriverConfigError

    with pytest.raises(DriverConfigError, match="backoff"):
        Recorder("x", SerialTransport("loop://"), events, backoff=(2.0, 0.1))


def test_unexpected_open_error_keeps_the_reader_alive(events: queue.Queue[DeviceEvent]) -> None:
    """A transport whose open() raises something outside the drivers' error tree is reported
    offline and retried with backoff; the reader thread does not die of it."""
    attempts = threading.Semaphore(0)

    class Broken(SerialTransport):
        def open(self) -> None:
            attempts.release()
            raise RuntimeError("transport bug")

    runner = Recorder("broken", Broken("loop://"), events, backoff=(0.01, 0.02))
    with runner:
        for _ in range(3):
            assert attempts.acquire(timeout=WAIT), "the reader stopped retrying"
        assert runner.running
    offline = events.get(timeout=WAIT)
    assert isinstance(offline, DeviceOffline) and "transport bug" in offline.reason
