"""The service's lifecycle: start the parts in order, report health to systemd, stop cleanly.

:class:`Service` is the seam where drivers -> table -> settlement -> journal will be wired (they
are being written alongside). Today it starts the control socket with a handler that answers
``round.status``/``wager.list`` and refuses commands as ``unavailable``, and one health thread
that sends READY, STATUS and WATCHDOG.

Health is a *probe*, not a timer: the health thread pings the watchdog only when ``probe()``
reports the table alive. Wired to the table, ``probe`` will put a no-op on the table thread's
queue and wait for it (bounded), so a hung table thread stops the pings and systemd restarts
the service (``WatchdogSec=``), after which the journal's recovery runs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from controller.service.config import ServiceConfig
from controller.service.control import AccessPolicy, ControlServer, Handler, Peer
from controller.service.errors import ServiceError
from controller.service.protocol import ErrorCode, Refusal, Request
from controller.service.sdnotify import Notifier, watchdog_interval

log = structlog.get_logger(__name__)

IDLE_HEALTH_SECONDS = 30.0
"""Health-loop period when systemd runs no watchdog (STATUS refresh only)."""


@dataclass(frozen=True, slots=True)
class Health:
    alive: bool
    status: str
    """One line for ``systemctl status``, e.g. "round 1234 dealing, shuffler online"."""


class UnwiredHandler:
    """The control handler until the table is wired: answers reads, refuses commands clearly."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config

    def __call__(self, request: Request, peer: Peer) -> Mapping[str, Any]:
        if request.verb == "round.status":
            return {"table": self.config.table_id, "game": self.config.game.value,
                    "state": "not_wired", "round": None,
                    "device": {"kind": self.config.device.kind.value,
                               "url": self.config.device.url}}
        if request.verb == "wager.list":
            return {"wagers": []}
        raise Refusal(ErrorCode.UNAVAILABLE,
                      f"{request.verb}: no table is wired into this service build yet",
                      request.id)


class Service:
    """``Service(config)``; ``start()``, then ``wait()`` (or your own loop), then ``stop()``."""

    def __init__(self, config: ServiceConfig, *, handler: Handler | None = None,
                 policy: AccessPolicy | None = None, notifier: Notifier | None = None,
                 probe: Callable[[], Health] | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.notifier = notifier or Notifier()
        control = config.control
        self.server = ControlServer(
            control.socket, handler or UnwiredHandler(config),
            policy or AccessPolicy(control.operators_group, control.surveillance_group),
            socket_group=control.socket_group,
            tcp=(control.tcp.host, control.tcp.port) if control.tcp else None)
        self.probe = probe or self._unwired_probe
        self.interval = watchdog_interval(environ) or IDLE_HEALTH_SECONDS
        self._stop = threading.Event()
        self._health = threading.Thread(target=self._health_loop, name="service-health",
                                        daemon=True)
        self.ready = threading.Event()
        """Set once READY=1 has been sent (start-up complete)."""

    def _unwired_probe(self) -> Health:
        return Health(True, f"table {self.config.table_id} ({self.config.game.value}): "
                            "control socket up, table not wired")

    def start(self) -> None:
        """Start the control socket, then the health thread that reports READY."""
        socket_dir = self.config.control.socket.parent
        if not socket_dir.exists():  # systemd's RuntimeDirectory= makes it; the bench does not
            socket_dir.mkdir(mode=0o700, parents=True)
        owner = socket_dir.stat().st_uid
        if owner not in (0, os.getuid()):  # e.g. a /tmp directory planted by another user
            raise ServiceError(f"control socket directory {socket_dir} belongs to uid {owner}, "
                               "not to this service; refusing to listen there")
        self.server.start()
        self._health.start()
        log.info("service started", table=self.config.table_id, config=self.config.source)

    def request_stop(self) -> None:
        """Ask :meth:`wait` to return; safe from a signal handler."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until :meth:`request_stop`; ``True`` if it was requested."""
        return self._stop.wait(timeout)

    def stop(self) -> None:
        self.notifier.stopping("stopping")
        self._stop.set()
        if self._health.is_alive():
            self._health.join()
        self.server.stop()
        log.info("service stopped", table=self.config.table_id)

    def __enter__(self) -> Service:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _health_loop(self) -> None:
        last_status: str | None = None
        first = True
        while first or not self._stop.wait(self.interval):
            try:
                health = self.probe()
            except Exception:
                log.exception("health probe failed")
                health = Health(False, "health probe failed")
            if first:
                self.notifier.ready(health.status)
                self.ready.set()
                first = False
                last_status = health.status
            elif health.status != last_status:
                self.notifier.status(health.status)
                last_status = health.status
            if health.alive:
                self.notifier.watchdog()
            else:
                log.error("table not alive: watchdog withheld", status=health.status)
