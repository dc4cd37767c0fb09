"""``tablectl studio``: the gateway process, from its config to SIGTERM.

Started only where a studio is configured (its own unit, like ``tablectl feed``): the table
service itself opens no network listener. Prints ``listening HOST:PORT`` on stdout once the
socket is bound, so a supervisor (or a test) knows it may connect.

Before it listens, its ledger must take what it will append (:class:`Ledger` writes to its disk
at start): a ledger disk that is full, read-only or failing is one line naming the ledger and
the OS's error, a wait that backs off across restarts, then exit 75 (``EX_TEMPFAIL``), which
systemd retries, as ``tablectl run`` does for its journal's disk
(:mod:`controller.service.lifecycle.backoff`)."""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType

import structlog

from controller.service.lifecycle.backoff import EXIT_TEMPFAIL, StartBackoff
from controller.studio.config import StudioConfig
from controller.studio.gateway import Gateway
from controller.studio.ledger import Ledger, LedgerUnavailableError
from controller.studio.server import serve

log = structlog.get_logger(__name__)


def run_studio(config: StudioConfig) -> int:
    stop = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    backoff = StartBackoff.from_environ()
    try:
        ledger = Ledger(config.ledger)
    except LedgerUnavailableError as error:
        return _retry_later(backoff, error, stop)
    gateway = Gateway(config, ledger)
    server, thread = serve(config, gateway)
    gateway.start()
    backoff.reset()
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


def _retry_later(backoff: StartBackoff, error: LedgerUnavailableError,
                 stop: threading.Event) -> int:
    """The ledger's disk may come back: say so, wait (backing off across restarts when
    systemd gives a runtime directory; SIGTERM ends the wait) and exit
    :data:`EXIT_TEMPFAIL`, which the unit restarts (exit 2 it does not)."""
    delay = backoff.failed()
    count = backoff.failures()  # 0: no runtime directory to count in
    print(f"tablectl studio: {error}; exit {EXIT_TEMPFAIL} in {delay:g} s for systemd to "
          f"retry" + (f" (failure {count} in a row)" if count else ""), file=sys.stderr,
          flush=True)
    stop.wait(delay)
    return EXIT_TEMPFAIL
