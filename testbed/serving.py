"""A framed simulator behind a byte server (a pty or TCP), and the URL a driver opens: what the
driver tests and the conformance kit's bench both start."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from firmware_sim.framed import FramedSimDevice, bind_server
from firmware_sim.serve import PtyServer, TcpServer


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
