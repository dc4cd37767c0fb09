"""The service as systemd runs it: ``python -m controller run --config <tmp toml>`` as a
subprocess, simulated devices (``url = "sim"``: firmware_sim on real ptys), a tmp journal and a
tmp control socket, READY read from a NOTIFY_SOCKET the test binds.

Nothing sleeps to synchronise: READY is a datagram, a deal is the DealComplete event on a
``watch`` connection, an exit is ``wait(timeout)``. Every process a test starts is registered
with the ``processes`` fixture, which kills what is still running and fails the test if it had
to (a service left behind would keep its pty and socket)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from controller.service.client import ControlClient

ROOT = Path(__file__).resolve().parents[2]
READY_SECONDS = 15.0
EVENT_SECONDS = 10.0

GAMES: dict[str, dict[str, str]] = {
    # game -> [device] table; each dealing path of the sim mode is exercised once
    "rws-nc-three-pictures": {"kind": "shuffler"},
    "mbs-three-pictures": {"kind": "shoe", "dialect": "framed"},
    "mbs-royal-three-pictures": {"kind": "shoe", "dialect": "scanner"},
    "rws-three-card-poker": {"kind": "shuffler"},
    "live-three-pictures": {"kind": "live", "dialect": "beetek"},
}
WAGERS: dict[str, list[tuple[str, str, int]]] = {
    "rws-nc-three-pictures": [("1", "main", 500), ("2", "main", 1000), ("2", "tie", 500)],
    "mbs-three-pictures": [("1", "main", 500), ("3", "main", 500)],
    "mbs-royal-three-pictures": [("1", "main", 500), ("2", "main", 500)],
    "rws-three-card-poker": [("1", "ante", 500), ("2", "ante", 1000), ("2", "pair_plus", 500),
                             ("4", "pair_plus", 500)],
    "live-three-pictures": [("p1", "win", 500), ("p2", "lose", 500), ("p3", "win", 1000)],
}


def config_toml(tmp: Path, game: str, *, device: dict[str, str] | None = None,
                extra: str = "") -> str:
    device = device or {**GAMES[game], "url": "sim"}
    lines = [f'{k} = "{v}"' for k, v in device.items()]
    return (f'[table]\nid = "E2E-1"\ngame = "{game}"\n\n[device]\n' + "\n".join(lines)
            + f'\n\n[journal]\ndirectory = "{tmp / "journal"}"\ndurability = "money"\n'
            + extra
            + f'\n[control]\nsocket = "{tmp / "control.sock"}"\nsocket_group = ""\n')


@dataclass
class ServiceProcess:
    """One ``tablectl run`` subprocess and its notify socket."""

    config: Path
    socket: Path
    notify: socket.socket
    process: subprocess.Popen[str]
    datagrams: list[bytes] = field(default_factory=list)

    def wait_ready(self) -> bytes:
        """The READY datagram (it carries the first STATUS)."""
        self.notify.settimeout(READY_SECONDS)
        while True:
            try:
                data = self.notify.recv(4096)
            except TimeoutError:
                raise AssertionError(f"no READY within {READY_SECONDS} s; stderr: "
                                     f"{self.stop_and_stderr()}") from None
            self.datagrams.append(data)
            if data.startswith(b"READY=1"):
                return data

    def client(self) -> ControlClient:
        return ControlClient(self.socket, timeout=EVENT_SECONDS).connect()

    def terminate(self, timeout: float = 15.0) -> tuple[int, str]:
        """SIGTERM, as systemd stops it; the exit status and stderr."""
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=timeout)
        return self.process.returncode, err

    def stop_and_stderr(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
        _, err = self.process.communicate(timeout=15)
        return err


class Processes:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.started: list[subprocess.Popen[str]] = []
        self.sockets: list[socket.socket] = []

    def spawn(self, args: list[str], **env: str) -> subprocess.Popen[str]:
        process = subprocess.Popen([sys.executable, "-m", "controller", *args], cwd=ROOT,
                                   env={**os.environ, **env}, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        self.started.append(process)
        return process

    def service(self, toml: str, name: str = "tablectl.toml") -> ServiceProcess:
        config = self.tmp / name
        config.write_text(toml)
        notify_path = self.tmp / f"notify-{len(self.sockets)}"
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        notify.bind(str(notify_path))
        self.sockets.append(notify)
        process = self.spawn(["run", "--config", str(config)], NOTIFY_SOCKET=str(notify_path))
        return ServiceProcess(config, self.tmp / "control.sock", notify, process)

    def cli(self, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
        process = self.spawn(list(args))
        out, err = process.communicate(timeout=timeout)
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)

    def close(self) -> list[str]:
        left = []
        for process in self.started:
            if process.poll() is None:
                left.append(" ".join(map(str, process.args)))
                process.kill()
            process.communicate(timeout=15)
        for sock in self.sockets:
            sock.close()
        return left


@pytest.fixture(name="processes")
def fixture_processes(tmp_path: Path) -> Iterator[Processes]:
    processes = Processes(tmp_path)
    try:
        yield processes
    finally:
        left = processes.close()
    if left:
        pytest.fail(f"test left processes running (killed): {left}", pytrace=False)


def wait_for(events: Iterator[dict[str, Any]], *types: str) -> dict[str, Any]:
    """The next watched event of one of ``types`` (the client's timeout bounds the wait)."""
    for event in events:
        if event["type"] in types:
            return event
    raise AssertionError(f"watch ended before {types}")
