"""The service lifecycle and ``tablectl run``: READY/STATUS/WATCHDOG/STOPPING on a real notify
socket, the control socket up while it runs, and clear refusals on a bad config."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main
from controller.cli import run as run_cli
from controller.service.lifecycle.app import Health, Service
from controller.service.config import ServiceConfig
from controller.service.control.server import ControlClient, RequestRefused, Peer
from controller.service.protocol import ErrorCode, Request
from controller.service.lifecycle.sdnotify import Notifier
from tests.controller.service.conftest import service_toml

ROOT = Path(__file__).resolve().parents[3]
FAST_WATCHDOG = {"WATCHDOG_USEC": "20000"}  # pings every 10 ms


def _datagrams_until(receiver: socket.socket, wanted: bytes) -> list[bytes]:
    """Datagrams up to and including the first that contains ``wanted`` (the fixture's timeout
    each)."""
    got = []
    while True:
        got.append(receiver.recv(4096))
        if wanted in got[-1]:
            return got


def test_service_reports_ready_watchdog_and_stopping(
        service_config: ServiceConfig, notify_socket: tuple[str, socket.socket]) -> None:
    """READY with a STATUS once the control socket is up, WATCHDOG pings, STOPPING at the end;
    the socket file goes with the service."""
    address, receiver = notify_socket
    service = Service(service_config, notifier=Notifier(address), environ=FAST_WATCHDOG)
    with service:
        first = receiver.recv(4096)
        # the configured device is absent here: the status line says so, the service runs
        assert first.startswith(b"READY=1\nSTATUS=table T1 idle, shuffler offline (cannot "
                                b"open /dev/table-shuffler")
        assert service.ready.wait(5)
        with ControlClient(service_config.control.socket) as client:
            status = client.request("round.status")
            assert (status["table"], status["state"]) == ("T1", "idle")
            client.request("round.open")
            with pytest.raises(RequestRefused) as caught:
                client.request("round.close")
        assert caught.value.code is ErrorCode.REFUSED
        assert "dealing device offline: shuffler" in caught.value.message
        assert receiver.recv(4096) == b"WATCHDOG=1"
    assert _datagrams_until(receiver, b"STOPPING=1")[-1] == b"STOPPING=1\nSTATUS=stopping"
    assert not service_config.control.socket.exists()


def test_a_hung_table_gets_no_watchdog(
        service_config: ServiceConfig, notify_socket: tuple[str, socket.socket]) -> None:
    """When the probe says the table is not alive, no WATCHDOG=1 is sent (systemd restarts
    us); the status says why."""
    address, receiver = notify_socket
    probed = threading.Event()
    calls = []

    def probe() -> Health:
        calls.append(1)
        if len(calls) >= 5:
            probed.set()
        return Health(len(calls) == 1, "dealing" if len(calls) == 1 else "table thread hung")

    with Service(service_config, notifier=Notifier(address), probe=probe,
                 environ=FAST_WATCHDOG):
        assert probed.wait(5)
    got = _datagrams_until(receiver, b"STOPPING=1")
    assert got[:3] == [b"READY=1\nSTATUS=dealing", b"WATCHDOG=1", b"STATUS=table thread hung"]
    assert got[3:] == [b"STOPPING=1\nSTATUS=stopping"]


def test_a_stuck_control_loop_gets_no_watchdog(
        service_config: ServiceConfig, notify_socket: tuple[str, socket.socket]) -> None:
    """The watchdog covers the control socket too (issue 11): while the control loop is stuck
    (here in a handler that does not return) no WATCHDOG=1 is sent, though the table is fine,
    and the status says why; pings resume when the loop does."""
    address, receiver = notify_socket
    release, entered = threading.Event(), threading.Event()

    def stuck(request: Request, peer: Peer) -> Mapping[str, Any]:
        entered.set()
        release.wait(10)
        return {}

    service = Service(service_config, handler=stuck, notifier=Notifier(address),
                      probe=lambda: Health(True, "dealing"), environ=FAST_WATCHDOG)
    with service:
        assert receiver.recv(4096) == b"READY=1\nSTATUS=dealing"
        assert receiver.recv(4096) == b"WATCHDOG=1"
        with ControlClient(service_config.control.socket) as client:
            client.send_line(b'{"id": 1, "verb": "round.status"}')
            assert entered.wait(5)
            got = _datagrams_until(receiver, b"control socket not answering")
            assert got[-1] == b"STATUS=dealing; control socket not answering"
            release.set()
            assert client.read_message()["ok"] is True
        assert _datagrams_until(receiver, b"WATCHDOG=1")[-1] == b"WATCHDOG=1"


def test_run_check_accepts_the_example(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """--check validates and says what it would run, exit 0 (the example's key file is
    staged here: --check reads it as run does; its socket group, which a test machine lacks
    and --check looks up as run does, is the process's own)."""
    key = tmp_path / "journal.key"
    key.write_text("ab" * 32)
    key.chmod(0o400)
    example = tmp_path / "tablectl.toml"
    example.write_text((ROOT / "systemd" / "tablectl.example.toml").read_text()
                       .replace("/etc/tablectl/journal.key", str(key))
                       .replace('socket_group = "tablectl-control"', 'socket_group = ""'))
    assert main(["run", "--check", "--config", str(example)]) == 0
    assert capsys.readouterr().out.startswith(f"config OK: {example}: table T07")


def test_run_refuses_a_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2 with one line naming the file, the key and the problem; nothing starts."""
    path = tmp_path / "tablectl.toml"
    path.write_text(service_toml(tmp_path).replace('url = "/dev/table-shuffler"',
                                                   'url = "/dev/table-shuffler"\nbaud = 9600'))
    assert main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"tablectl run: {path}: device.baud: unknown key (known keys here: " \
                  "kind, seed, url)\n"
    assert not (tmp_path / "control.sock").exists()


def test_no_config_with_table_hardware_refuses_the_bench(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The embedded bench config never runs where a real table device is attached."""
    device = tmp_path / "table-shuffler"
    device.touch()
    monkeypatch.setattr(run_cli, "HARDWARE_PATHS", (device,))
    assert main(["run", "--check"]) == 2
    assert f"table hardware is present ({device})" in capsys.readouterr().err


def _spawn(args: list[str], tmp_path: Path, address: str) -> subprocess.Popen[str]:
    env = dict(os.environ, NOTIFY_SOCKET=address, WATCHDOG_USEC="1000000",
               XDG_RUNTIME_DIR=str(tmp_path / "run"), XDG_STATE_HOME=str(tmp_path / "state"))
    return subprocess.Popen([sys.executable, "-m", "controller", *args], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("with_config", [True, False], ids=["config", "bench-default"])
def test_tablectl_run_as_systemd_would(tmp_path: Path, notify_socket: tuple[str, socket.socket],
                                       with_config: bool) -> None:
    """``tablectl run`` as a process: READY, the control socket answers, SIGTERM stops it
    cleanly (STOPPING, exit 0, socket removed)."""
    address, receiver = notify_socket
    if with_config:
        path = tmp_path / "tablectl.toml"
        path.write_text(service_toml(tmp_path))
        process = _spawn(["run", "--config", str(path)], tmp_path, address)
        control = tmp_path / "control.sock"
    else:
        process = _spawn(["run"], tmp_path, address)
        control = tmp_path / "run" / "tablectl" / "control.sock"
    try:
        assert receiver.recv(4096).startswith(b"READY=1\nSTATUS=table ")
        with ControlClient(control) as client:
            assert client.request("round.status")["state"] == "idle"
        process.send_signal(signal.SIGTERM)
        assert _datagrams_until(receiver, b"STOPPING=1")
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert not control.exists()
    if not with_config:
        assert "no --config: the simulated bench table" in err


def test_run_refuses_when_the_socket_path_is_taken(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A control socket path that is some other file: one clear line, exit 2, file untouched."""
    path = tmp_path / "tablectl.toml"
    path.write_text(service_toml(tmp_path))
    (tmp_path / "control.sock").write_text("not mine")
    assert main(["run", "--config", str(path)]) == 2
    assert capsys.readouterr().err == \
        f"tablectl run: control socket {tmp_path / 'control.sock'}: exists and is not a socket\n"
    assert (tmp_path / "control.sock").read_text() == "not mine"
