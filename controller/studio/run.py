"""``tablectl studio``: the gateway process, from its config to SIGTERM.

Started only where a studio is configured (its own unit, like ``tablectl feed``): the table
service itself opens no network listener. Prints ``listening HOST:PORT`` on stdout once the
socket is bound, so a supervisor (or a test) knows it may connect."""

from __future__ import annotations

import signal
import threading
from types import FrameType

import structlog

from controller.studio.config import StudioConfig
from controller.studio.gateway import Gateway
from controller.studio.ledger import Ledger
from controller.studio.server import serve

log = structlog.get_logger(__name__)


def run_studio(config: StudioConfig) -> int:
    ledger = Ledger(config.ledger)
    gateway = Gateway(config, ledger)
    stop = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    server, thread = serve(config, gateway)
    gateway.start()
    host, port = server.server_address[:2]
    print(f"listening {host}:{port}", flush=True)
    log.info("studio_listening", host=host, port=port, clients=sorted(config.clients))
    try:
        stop.wait()
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()
        gateway.stop()
        ledger.close()
    return 0
