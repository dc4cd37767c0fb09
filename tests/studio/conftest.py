"""The studio's real parts for the tests: a PKI made by openssl, the table service (LIVE-3P,
a simulated shoe on a pty) as ``tablectl run``, the gateway as ``tablectl studio`` and the
reference client as ``tablectl studio-client``, each a separate process (``processes`` kills
and reports any left running), and a raw HTTPS caller for the refusals."""

from __future__ import annotations

import http.client
import json
import selectors
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from testbed.floorlab import free_port
from controller.service.control.client import ControlClient
from tests.feed_e2e.broker import make_pki
from tests.service_e2e.conftest import Processes, ServiceProcess, config_toml
from tests.service_e2e.conftest import fixture_processes as fixture_processes  # noqa: F401

GAME = "live-three-pictures"
START_SECONDS = 30.0
IDENTITIES = ["gs1", "gs2", "intruder"]
"""gs1 and gs2 are the table's game servers; intruder has a certificate from the same CA but
is not in ``studio.clients``."""


@pytest.fixture(name="pki", scope="session")
def fixture_pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pki(tmp_path_factory.mktemp("studio-pki"), IDENTITIES)


@pytest.fixture(name="foreign_pki", scope="session")
def fixture_foreign_pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Another CA, whose ``gs1`` certificate the gateway must not accept."""
    return make_pki(tmp_path_factory.mktemp("foreign-pki"), ["gs1"])


def read_line(process: subprocess.Popen[str], seconds: float = START_SECONDS) -> str:
    """The process's next stdout line, waiting at most ``seconds``."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(seconds):
            raise AssertionError(f"no output within {seconds} s")
    return process.stdout.readline()


@dataclass
class Studio:
    """A running service and gateway."""

    service: ServiceProcess
    gateway: subprocess.Popen[str]
    port: int
    pki: Path
    ledger: Path
    journal: Path

    def control(self) -> ControlClient:
        return self.service.client()

    def call(self, method: str, path: str, body: Any = None, *, identity: str = "gs1",
             pki: Path | None = None, raw: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        """One HTTPS request as ``identity`` (its certificate from ``pki``); the answer must be
        JSON (a refusal of the HTTP layer too)."""
        pki = pki or self.pki
        context = ssl.create_default_context(cafile=str(self.pki / "ca.pem"))
        if identity:
            context.load_cert_chain(pki / f"{identity}.pem", pki / f"{identity}.key")
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, context=context,
                                                 timeout=60)
        try:
            data = raw if raw is not None else (None if body is None
                                                else json.dumps(body).encode())
            connection.request(method, path, body=data,
                               headers={"Content-Type": "application/json", **(headers or {})})
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    def ledger_records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.ledger.read_text().splitlines() if line]

    def client_args(self, *extra: str, identity: str = "gs1") -> list[str]:
        return ["studio-client", "--url", f"https://127.0.0.1:{self.port}",
                "--cert", str(self.pki / f"{identity}.pem"),
                "--key", str(self.pki / f"{identity}.key"),
                "--ca", str(self.pki / "ca.pem"), *extra]


def studio_toml(tmp: Path, pki: Path, port: int, max_batch: int) -> str:
    return (f'[studio]\nlisten = "127.0.0.1"\nport = {port}\n'
            f'certificate = "{pki / "server.pem"}"\nprivate_key = "{pki / "server.key"}"\n'
            f'client_ca = "{pki / "ca.pem"}"\nclients = ["gs1", "gs2"]\n'
            f'control_socket = "{tmp / "control.sock"}"\n'
            f'ledger = "{tmp / "studio" / "ledger.jsonl"}"\nmax_batch = {max_batch}\n')


def start_studio(processes: Processes, tmp: Path, pki: Path, max_batch: int = 500, *,
                 table_settles: bool = True, tables: str = "") -> Studio:
    """The service and the gateway; ``table_settles``: the studio configuration, the table
    settles with the last card (``[table] settle_on_deal_complete``); False: the gateway
    sends ``round.settle`` as for a table without it. ``tables``: more of the service's
    config (whole sections, such as ``[limits.win]``)."""
    text = config_toml(tmp, GAME, extra='hmac_key_file = ""\n' + tables)
    if table_settles:
        text = text.replace(f'game = "{GAME}"\n',
                            f'game = "{GAME}"\nsettle_on_deal_complete = true\n', 1)
    service = processes.service(text)
    service.wait_ready()
    port = free_port()
    (tmp / "studio.toml").write_text(studio_toml(tmp, pki, port, max_batch))
    gateway = processes.spawn(["studio", "--config", str(tmp / "studio.toml")])
    line = read_line(gateway)
    assert line.startswith("listening 127.0.0.1:"), line
    return Studio(service, gateway, port, pki, tmp / "studio" / "ledger.jsonl",
                  tmp / "journal")


@pytest.fixture(name="studio")
def fixture_studio(processes: Processes, tmp_path: Path, pki: Path,
                   request: pytest.FixtureRequest) -> Iterator[Studio]:
    """Indirect parameter ``"gateway settles"``: a table without settle_on_deal_complete;
    ``"limits"``: the win bet limited to 100-100,000."""
    param = getattr(request, "param", "")
    studio = start_studio(processes, tmp_path, pki, max_batch=100,
                          table_settles=param != "gateway settles",
                          tables="\n[limits.win]\nmin = 100\nmax = 100000\n"
                          if param == "limits" else "")
    yield studio
    studio.gateway.terminate()
    studio.gateway.communicate(timeout=30)
    studio.service.terminate()
