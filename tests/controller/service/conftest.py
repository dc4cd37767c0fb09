"""Fixtures for the service tests: configs written to real files, real sockets in tmp_path."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.journal.policy import Durability
from controller.journal.recovery import recover
from controller.journal.writer import JournalWriter
from controller.service.config import ServiceConfig, parse_config
from controller.service.control.server import Peer
from controller.service.lifecycle.app import Service
from controller.service.protocol import Request, Role
from controller.service.wiring.tablethread import TableThread
from controller.table.layout import TableLayout

DEALER = Peer(10, 1001, 1001, Role.DEALER)
SUPERVISOR = Peer(11, 1002, 1002, Role.SUPERVISOR)
ALLOW_CLOCK = '\n[clock]\nunsynchronised = "allow"\n'
"""Tests not about the clock open rounds whatever this machine's clock says (CI machines are
often unsynchronised); the clock tests set their own policy."""

MINIMAL = """\
[table]
id = "T1"
game = "rws-nc-three-pictures"

[device]
kind = "shuffler"
url = "/dev/table-shuffler"

[journal]
directory = "/var/lib/tablectl/journal"
"""


def service_toml(tmp: Path) -> str:
    """A valid config whose socket and journal live under ``tmp`` and whose socket keeps the
    process's own group (tests cannot create system groups)."""
    return MINIMAL.replace("/var/lib/tablectl/journal", str(tmp / "journal")) + (
        f'\n[control]\nsocket = "{tmp / "control.sock"}"\nsocket_group = ""\n' + ALLOW_CLOCK)


@pytest.fixture(name="service_config")
def fixture_service_config(tmp_path: Path) -> ServiceConfig:
    return parse_config(service_toml(tmp_path), source=str(tmp_path / "tablectl.toml"))


@pytest.fixture(name="notify_socket")
def fixture_notify_socket(tmp_path: Path) -> Iterator[tuple[str, socket.socket]]:
    """A real datagram socket standing in for systemd's NOTIFY_SOCKET: (address, receiver)."""
    path = tmp_path / "notify"
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(str(path))
    receiver.settimeout(60.0)  # generous: a loaded machine starts a service slowly
    try:
        yield str(path), receiver
    finally:
        receiver.close()


@pytest.fixture(name="table")
def fixture_table(tmp_path: Path) -> Iterator[TableThread]:
    """An RWS-NC3P table thread on a fresh tmp journal (not started)."""
    writer = JournalWriter(tmp_path / "journal", table_id="T1", durability=Durability.NONE)
    journaled, _ = recover(writer, TableLayout.for_game("rws-nc-three-pictures"))
    table = TableThread(journaled)
    yield table
    table.close()
    writer.close()


class InProcessService:
    """The wired service in-process (``Service``, as ``tablectl run`` builds it); requests go
    straight to its handler as a given peer."""

    def __init__(self, config: ServiceConfig) -> None:
        self.service = Service(config)

    def __enter__(self) -> InProcessService:
        self.service.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.service.stop()

    def ask(self, verb: str, peer: object = DEALER, **args: object) -> dict[str, Any]:
        return dict(self.service.wiring.handler(Request(1, verb, args), peer))


def voided_sessions(config: ServiceConfig, rounds: int = 1) -> None:
    """One session of the service: ``rounds`` rounds opened and voided by the supervisor."""
    with InProcessService(config) as running:
        for _ in range(rounds):
            running.ask("round.open")
            running.ask("supervisor.void", SUPERVISOR, reason="test round")
