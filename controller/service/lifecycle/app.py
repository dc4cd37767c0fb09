"""The service's lifecycle: wire drivers -> table -> settlement -> journal, report health to
systemd, stop cleanly.

:meth:`Service.start` does, in order, and refuses to go on at the first problem (one line, no
traceback): load the HMAC key (least privilege, :mod:`controller.service.keyfile`); open the
journal; apply retention; **recover** the table from the journal
(:func:`controller.journal.recovery.recover`: replay, then the game's power-failure clause for an
interrupted round); start the table thread (:mod:`controller.service.wiring.tablethread`), the
device (a real driver, or a firmware_sim device on a pty for ``url = "sim"``,
:mod:`controller.service.wiring.devices`) and its operator (:mod:`controller.service.operator`);
then the control socket with the :class:`~controller.service.wiring.handler.TableHandler`; and only
then READY=1. Every round event is journaled first (JournaledTable), then published to ``watch``
connections.

Health is a *probe*, not a timer: the health thread pings the watchdog only when the table
thread passes a marker put on its queue, and the control loop answers a probe, each within a
bounded time, so a hung table thread or a stuck control socket stops the pings and systemd
restarts the service (``WatchdogSec=``), whose recovery continues the round.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

import structlog

from controller.service.config import ServiceConfig
from controller.service.control.server import AccessPolicy, ControlServer, Handler, Peer
from controller.service.errors import ServiceError
from controller.service.wiring.health import Health
from controller.roles import Role
from controller.service.protocol import ErrorCode, Refusal, Request
from controller.service.lifecycle.sdnotify import Notifier, watchdog_interval
from controller.service.visibility import redact_event

log = structlog.get_logger(__name__)

IDLE_HEALTH_SECONDS = 30.0
"""Health-loop period when systemd runs no watchdog (STATUS refresh only)."""


class UnwiredHandler:
    """A handler with no table (``Service(config, handler=UnwiredHandler(config))``, for tests
    of the lifecycle alone): answers reads, refuses commands clearly."""

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
                      f"{request.verb}: no table is wired into this service",
                      request.id)


def _starting(request: Request, peer: Peer) -> Mapping[str, Any]:
    raise Refusal(ErrorCode.UNAVAILABLE, f"{request.verb}: the service is starting (journal "
                  "recovery); try again in a moment", request.id)


class Service:
    """``Service(config)``; ``start()``, then ``wait()`` (or your own loop), then ``stop()``.

    With ``handler`` given the service runs that handler and wires no table (lifecycle tests);
    otherwise :meth:`start` wires the table
    (:class:`~controller.service.wiring.pipeline.Wiring`)."""

    def __init__(self, config: ServiceConfig, *, handler: Handler | None = None,
                 policy: AccessPolicy | None = None, notifier: Notifier | None = None,
                 probe: Callable[[], Health] | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self.config = config
        self.notifier = notifier or Notifier()
        control = config.control
        self._handler: Handler = handler or _starting
        self.wire = handler is None
        self.wiring: Any = None
        self.server = ControlServer(
            control.socket, self._dispatch,
            policy or AccessPolicy(control.operators_group, control.surveillance_group,
                                   supervisors_group=control.supervisors_group,
                                   web_group=control.web_group,
                                   web_roles=frozenset(Role.from_socket_name(r)
                                                       for r in control.web_roles),
                                   studio_group=control.studio_group),
            socket_group=control.socket_group, limits=control.limits)
        self._probe = probe
        self.interval = watchdog_interval(environ) or IDLE_HEALTH_SECONDS
        self.probe_seconds = max(0.5, min(self.interval / 2, 5.0))
        """How long the table thread may take to pass the liveness marker."""
        self._stop = threading.Event()
        self._health = threading.Thread(target=self._health_loop, name="service-health",
                                        daemon=True)
        self.ready = threading.Event()
        """Set once READY=1 has been sent (start-up complete)."""

    def _dispatch(self, request: Request, peer: Peer) -> Mapping[str, Any] | None:
        return self._handler(request, peer)

    def _publish(self, event: Mapping[str, Any]) -> None:
        """A round event to the watchers; a face-down card only to those who may see it."""
        self.server.publish(event, redacted=redact_event(event, self.config.rules))

    def probe(self) -> Health:
        """The table's health, and the control loop's: a stuck socket loop (nobody can reach
        the table) withholds the watchdog like a stuck table thread does."""
        if self._probe is not None:
            health = self._probe()
        elif self.wiring is not None:
            health = self.wiring.health(self.probe_seconds)
        else:
            health = Health(True, f"table {self.config.table_id} ({self.config.game.value}): "
                                  "control socket up, table not wired")
        if health.alive and not self.server.probe(self.probe_seconds):
            return Health(False, f"{health.status}; control socket not answering")
        return health

    def start(self) -> None:
        """Wire the table (recovery included), start the control socket, then the health
        thread that reports READY. On any failure what was started is stopped again."""
        socket_dir = self.config.control.socket.parent
        if not socket_dir.exists():  # systemd's RuntimeDirectory= makes it; the bench does not
            socket_dir.mkdir(mode=0o700, parents=True)
        owner = socket_dir.stat().st_uid
        if owner not in (0, os.getuid()):  # e.g. a /tmp directory planted by another user
            raise ServiceError(f"control socket directory {socket_dir} belongs to uid {owner}, "
                               "not to this service; refusing to listen there")
        # The socket first: it refuses a second service on the same table (which must never
        # open the same journal); until the table is wired, requests are "unavailable".
        self.server.start()
        if self.wire:
            # imports the table, the drivers and the simulators: deferred until wired
            from controller.service.wiring.pipeline import Wiring

            try:
                self.wiring = Wiring(self.config, self._publish)
                self.wiring.start()
            except BaseException:
                self.wiring = None
                self.server.stop()
                raise
            assert self.wiring.handler is not None
            self._handler = self.wiring.handler
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
        self._close_wiring()
        log.info("service stopped", table=self.config.table_id)

    def _close_wiring(self) -> None:
        if self.wiring is not None:
            self.wiring.close()
            self.wiring = None

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
                log.error("not alive: watchdog withheld", status=health.status)
