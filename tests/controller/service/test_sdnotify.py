"""sd_notify over a real datagram socket (a path in tmp_path, and the abstract namespace)."""

from __future__ import annotations

import os
import socket
import threading
import uuid

import pytest

from controller.service.lifecycle.sdnotify import Notifier, watchdog_interval


def test_ready_with_status(notify_socket: tuple[str, socket.socket]) -> None:
    """READY=1 and STATUS travel in one datagram, as sd_notify(3) sends them."""
    address, receiver = notify_socket
    assert Notifier(address).ready("round 1234 dealing, shuffler online")
    assert receiver.recv(4096) == b"READY=1\nSTATUS=round 1234 dealing, shuffler online"


def test_watchdog_status_and_stopping(notify_socket: tuple[str, socket.socket]) -> None:
    """Each notification is its own datagram in the order sent."""
    address, receiver = notify_socket
    notifier = Notifier(address)
    assert notifier.watchdog() and notifier.status("idle") and notifier.stopping()
    assert [receiver.recv(4096) for _ in range(3)] == [b"WATCHDOG=1", b"STATUS=idle",
                                                        b"STOPPING=1"]


def test_status_is_one_line(notify_socket: tuple[str, socket.socket]) -> None:
    """A newline in a status must not smuggle in a second assignment (e.g. READY=1)."""
    address, receiver = notify_socket
    Notifier(address).status("shoe offline\nREADY=1")
    assert receiver.recv(4096) == b"STATUS=shoe offline READY=1"


def test_abstract_namespace() -> None:
    """NOTIFY_SOCKET=@name is the abstract namespace (what systemd uses on newer versions)."""
    name = f"tablectl-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as receiver:
        receiver.bind("\0" + name)
        receiver.settimeout(60.0)
        assert Notifier("@" + name).ready()
        assert receiver.recv(4096) == b"READY=1"


def test_reads_notify_socket_from_the_environment(
        notify_socket: tuple[str, socket.socket], monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an explicit address the notifier uses $NOTIFY_SOCKET, as systemd sets it."""
    address, receiver = notify_socket
    monkeypatch.setenv("NOTIFY_SOCKET", address)
    notifier = Notifier()
    assert notifier.enabled and notifier.watchdog()
    assert receiver.recv(4096) == b"WATCHDOG=1"


def test_no_op_without_notify_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside systemd (a terminal, the bench) every call is a quiet no-op."""
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    notifier = Notifier()
    assert not notifier.enabled
    assert notifier.ready("x") is False and notifier.watchdog() is False


def test_a_vanished_socket_is_not_fatal(tmp_path: object) -> None:
    """If systemd's socket is gone the service keeps dealing: False, no exception."""
    assert Notifier(f"{tmp_path}/nobody-listens").watchdog() is False


@pytest.mark.parametrize(("environ", "expected"), [
    ({"WATCHDOG_USEC": "10000000"}, 5.0),
    ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": str(os.getpid())}, 5.0),
    ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"}, None),
    ({"WATCHDOG_USEC": "0"}, None),
    ({"WATCHDOG_USEC": "ten"}, None),
    ({}, None),
])
def test_watchdog_interval_is_half_the_period(environ: dict[str, str],
                                              expected: float | None) -> None:
    """Ping at half of WATCHDOG_USEC, and only when the watchdog is ours (WATCHDOG_PID)."""
    assert watchdog_interval(environ) == expected


def test_a_receiver_that_stopped_reading_never_blocks_the_sender(
        notify_socket: tuple[str, socket.socket]) -> None:
    """Issue 27: the service's stop hung in ``sendto`` because the benchmark read READY and
    nothing after it: once the receiver's queue was full every notification blocked its
    thread. Now a full queue loses the notification (``False``, logged) and the send returns."""
    address, _receiver = notify_socket  # never read from here on
    notifier = Notifier(address)
    results: list[bool] = []

    def flood() -> None:
        for _ in range(5000):  # far past the kernel's datagram queue (net.unix.max_dgram_qlen)
            results.append(notifier.status("round 1 dealing"))

    thread = threading.Thread(target=flood, name="notify-flood")
    thread.start()
    thread.join(timeout=60)
    blocked = thread.is_alive()
    if blocked:  # before the fix: unblock the sender by reading, then fail
        _receiver.settimeout(0.1)
        while thread.is_alive():
            try:
                _receiver.recv(4096)
            except TimeoutError:
                pass
    assert not blocked, "notify blocked on a receiver that does not read"
    assert results[0] is True and results[-1] is False
