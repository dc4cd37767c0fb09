"""``python -m firmware_sim`` as a subprocess: first line says where to connect, then it serves
until terminated or stdin closes. Every process is terminated and reaped (no leaks)."""

from __future__ import annotations

import queue
import subprocess
import sys
from collections.abc import Iterator

import pytest

from drivers.events import CardRead, DeviceEvent, DeviceOnline
from drivers.shoe.framed import FramedShoe
from drivers.shuffler import Shuffler
from drivers.transport import SerialTransport
from tests.drivers.sim_fixtures import fixture_events, next_event  # noqa: F401 - fixture


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "firmware_sim", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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
    spawn.append(proc := _start("shoe", "--dialect", "framed", "--listen", "tcp:127.0.0.1:0"))
    _, where = _first_line(proc).split(" ", 1)
    with FramedShoe(f"socket://{where}", events):
        next_event(events, DeviceOnline)
        assert proc.stdin is not None
        proc.stdin.write("draw\ndraw\ndraw\n")
        proc.stdin.flush()
        assert [next_event(events, CardRead).index_in_shoe for _ in range(3)] == [1, 2, 3]


@pytest.mark.parametrize("dialect", ["scanner", "beetek"])
def test_other_dialects_autodraw(spawn: list[subprocess.Popen[str]], dialect: str) -> None:
    """The scanner and Bee-Tek shoes serve too, and --autodraw sends bytes on its own."""
    spawn.append(proc := _start("shoe", "--dialect", dialect, "--autodraw", "0.05"))
    kind, path = _first_line(proc).split(" ", 1)
    assert kind == "PTY"
    with SerialTransport(path, read_timeout=2.0) as transport:
        assert transport.read()


def test_stdin_eof_stops(spawn: list[subprocess.Popen[str]]) -> None:
    """Closing stdin ends the simulator with status 0."""
    spawn.append(proc := _start("shuffler"))
    assert _first_line(proc).startswith("PTY ")
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=5) == 0


def test_bad_fault_is_one_line(spawn: list[subprocess.Popen[str]]) -> None:
    """An unknown --fault is a usage error naming the fault, not a traceback."""
    spawn.append(proc := _start("shuffler", "--fault", "gremlin"))
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 2
    assert "gremlin" in err and "Traceback" not in err
