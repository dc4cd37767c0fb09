"""``python -m firmware_sim`` as a subprocess: first line says where to connect, then it serves
until SIGINT or SIGTERM, with or without stdin. Every process is terminated and reaped (no leaks)."""

from __future__ import annotations

import os
import queue
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from drivers.decks import DeckMap
from controller.games.cards import parse_card
from drivers.events import CardRead, DeviceEvent, DeviceOnline, NoRead
from drivers.shoe.framed import FramedShoe
from drivers.shoe.scanner import ScannerShoe
from drivers.shuffler import Shuffler
from drivers.transport import SerialTransport
from tests.drivers.sim_fixtures import fixture_events, next_event  # noqa: F401 - fixture


STDERR_WAIT = 60.0  # a bound for a line that is coming, generous for a loaded machine


def _start(*args: str, stdin: int = subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "firmware_sim", *args], stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stderr_line(proc: subprocess.Popen[str], timeout: float = STDERR_WAIT) -> str:
    """The next line on stderr, waiting at most ``timeout`` (select, not a sleep)."""
    assert proc.stderr is not None
    ready, _, _ = select.select([proc.stderr], [], [], timeout)
    assert ready, f"nothing on stderr within {timeout} s"
    return proc.stderr.readline().strip()


def _stderr_lines(proc: subprocess.Popen[str], count: int,
                  timeout: float = STDERR_WAIT) -> list[str]:
    """The next ``count`` lines on stderr, read from its descriptor (lines that arrive together
    would sit in the text stream's buffer, where ``select`` does not see them), within
    ``timeout`` in all. Only for a stream not yet read through its buffer."""
    assert proc.stderr is not None
    fd, text, deadline = proc.stderr.fileno(), b"", time.monotonic() + timeout
    while text.count(b"\n") < count:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"{len(text.splitlines())} of {count} lines on stderr within {timeout} s"
        text += os.read(fd, 4096)
    return [line.strip() for line in text.decode().splitlines()[:count]]


def _terminate_cleanly(proc: subprocess.Popen[str]) -> None:
    """SIGTERM ends the simulator with status 0 and no traceback."""
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    assert proc.stderr is not None
    assert "Traceback" not in proc.stderr.read()


@pytest.fixture(name="spawn")
def fixture_spawn() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()


@contextmanager
def _framed_shoe_over_tcp(spawn: list[subprocess.Popen[str]], events: queue.Queue[DeviceEvent]
                          ) -> Iterator[subprocess.Popen[str]]:
    """A `shoe --dialect framed` subprocess on TCP with a FramedShoe driver online on it."""
    spawn.append(proc := _start("shoe", "--dialect", "framed", "--listen", "tcp:127.0.0.1:0"))
    _, where = _first_line(proc).split(" ", 1)
    with FramedShoe(f"socket://{where}", events):
        next_event(events, DeviceOnline)
        assert proc.stdin is not None
        yield proc


def _first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.readline().strip()


def test_shuffler_pty(spawn: list[subprocess.Popen[str]],
                      events: queue.Queue[DeviceEvent]) -> None:
    """`shuffler --listen pty` prints PTY <path> first; the driver identifies it there."""
    spawn.append(proc := _start("shuffler", "--listen", "pty", "--seed", "1"))
    kind, path = _first_line(proc).split(" ", 1)
    assert kind == "PTY"
    with Shuffler(path, events) as shuffler:
        next_event(events, DeviceOnline)
        assert shuffler.identify().model.startswith("HF-3")


def test_shoe_tcp_draw_from_stdin(spawn: list[subprocess.Popen[str]],
                                  events: queue.Queue[DeviceEvent]) -> None:
    """`shoe --listen tcp:127.0.0.1:0` prints TCP host:port; each `draw` line deals a card."""
    spawn.append(proc := _start("shoe", "--dialect", "framed", "--listen", "tcp:127.0.0.1:0"))
    kind, where = _first_line(proc).split(" ", 1)
    assert kind == "TCP"
    with FramedShoe(f"socket://{where}", events):
        next_event(events, DeviceOnline)
        assert proc.stdin is not None
        proc.stdin.write("draw\n")
        proc.stdin.flush()
        assert next_event(events, CardRead).index_in_shoe == 1


def test_several_draw_lines_at_once_each_deal(spawn: list[subprocess.Popen[str]],
                                              events: queue.Queue[DeviceEvent]) -> None:
    """Three `draw` lines written in one go deal three cards, in order: none is lost in a
    read buffer while the simulator waits for more input."""
    with _framed_shoe_over_tcp(spawn, events) as proc:
        assert proc.stdin is not None
        proc.stdin.write("draw\ndraw\ndraw\n")
        proc.stdin.flush()
        assert [next_event(events, CardRead).index_in_shoe for _ in range(3)] == [1, 2, 3]


def test_each_card_out_is_said_a_no_read_included(spawn: list[subprocess.Popen[str]],
                                                  events: queue.Queue[DeviceEvent]) -> None:
    """Each ``draw`` says on stderr which card came out (``dealt QH``), and a card that passed
    the reader unread too: the person at the bench has no card in the hand, and the supervisor
    enters that one (issue 36's no-read). The cards read are the ones said; the unread one is
    said and never read."""
    with _framed_shoe_over_tcp(spawn, events) as proc:
        assert proc.stdin is not None
        proc.stdin.write("draw\nfault noread\ndraw\ndraw\n")
        proc.stdin.flush()
        said = _stderr_lines(proc, 3)
        assert all(line.startswith("firmware_sim: dealt ") for line in said), said
        first, unread, third = (parse_card(line.split()[-1]) for line in said)
        assert next_event(events, CardRead).card == first
        assert next_event(events, NoRead).index_in_shoe == 2
        assert next_event(events, CardRead).card == third
        assert len({first, unread, third}) == 3


@pytest.mark.parametrize("dialect", ["scanner", "beetek"])
def test_other_dialects_autodraw(spawn: list[subprocess.Popen[str]], dialect: str) -> None:
    """The scanner and Bee-Tek shoes serve too, and --autodraw sends bytes on its own."""
    spawn.append(proc := _start("shoe", "--dialect", dialect, "--autodraw", "0.05"))
    kind, path = _first_line(proc).split(" ", 1)
    assert kind == "PTY"
    with SerialTransport(path, read_timeout=2.0) as transport:
        assert transport.read()


def test_shuffler_outlives_devnull_stdin(spawn: list[subprocess.Popen[str]],
                                         events: queue.Queue[DeviceEvent]) -> None:
    """Started with stdin on /dev/null (a script's background job, a service manager), the
    shuffler says once that stdin is closed, keeps serving on its pty, and SIGTERM ends it with
    status 0."""
    spawn.append(proc := _start("shuffler", "--listen", "pty", "--seed", "1",
                                stdin=subprocess.DEVNULL))
    kind, path = _first_line(proc).split(" ", 1)
    assert kind == "PTY"
    assert "stdin closed" in _stderr_line(proc)  # EOF already seen: what follows is after it
    with Shuffler(path, events) as shuffler:
        next_event(events, DeviceOnline)
        assert shuffler.identify().model.startswith("HF-3")
    assert proc.poll() is None
    _terminate_cleanly(proc)


def test_shoe_outlives_devnull_stdin(spawn: list[subprocess.Popen[str]],
                                     events: queue.Queue[DeviceEvent]) -> None:
    """A scanner shoe with stdin on /dev/null serves its pty after stdin's end: the driver
    reads autodrawn cards from it; SIGTERM then ends it with status 0."""
    spawn.append(proc := _start("shoe", "--dialect", "scanner", "--listen", "pty",
                                "--autodraw", "0.05", "--seed", "3", stdin=subprocess.DEVNULL))
    kind, path = _first_line(proc).split(" ", 1)
    assert kind == "PTY"
    assert "stdin closed" in _stderr_line(proc)
    with ScannerShoe(path, events, deck=DeckMap.load("generic-code128")):
        next_event(events, DeviceOnline)
        first, second = next_event(events, CardRead), next_event(events, CardRead)
        assert second.index_in_shoe == first.index_in_shoe + 1
    assert proc.poll() is None
    _terminate_cleanly(proc)


def test_stdin_closed_later_keeps_serving(spawn: list[subprocess.Popen[str]],
                                         events: queue.Queue[DeviceEvent]) -> None:
    """Commands on stdin are optional: closing stdin after a last `draw` (no newline) deals
    that card and the shoe still serves; SIGINT ends it with status 0."""
    with _framed_shoe_over_tcp(spawn, events) as proc:
        assert proc.stdin is not None
        proc.stdin.write("draw")
        proc.stdin.close()
        assert next_event(events, CardRead).index_in_shoe == 1
        assert "stdin closed" in _stderr_line(proc)
        assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 0


def test_bad_fault_is_one_line(spawn: list[subprocess.Popen[str]]) -> None:
    """An unknown --fault is a usage error naming the fault, not a traceback."""
    spawn.append(proc := _start("shuffler", "--fault", "gremlin"))
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 2
    assert "gremlin" in err and "Traceback" not in err
