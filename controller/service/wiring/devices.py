"""The dealing device the config names: a real driver, or a simulated device on a real pty.

``device.url = "sim"`` starts the simulator of the configured kind and dialect in this process,
served over a real pty, and points the *real* driver at the pty: every byte still crosses the
framing, the link and the driver, exactly as on the table. The simulator is found by name in
the ``tablectl.simulators`` entry points (``firmware_sim`` registers it: the service imports no
simulator, :mod:`firmware_sim.registry`). The simulators run with zero shuffle and dispense
times and no automatic hand-taking: the service's device operator
(:mod:`controller.service.operator`) takes the same path as for a real device, and the person
at the table is :class:`~.simdealer.SimulatedDealer` (it lifts each presented hand, and
shuffles and draws from a simulated shoe). Idle, the byte server ticks once a second, in step
with the simulator's heartbeat, not 20 times: an idle table must not keep the Pi awake. A
framed simulator answers the driver's ``RESYNC`` at once (heartbeat, backlog, ACK), so READY
does not wait for the server's next tick.

A framed device (the shuffler, the framed shoe) is asked ``IDENTIFY`` by its driver on every
link-up and after every reboot; a new identity is recorded (``device_identified``) ahead of
everything the device reports after it (:func:`recorded`, drivers/framed/identify.py).

A real device path is checked before anything starts: a path the service may not open is a
deployment mistake (udev group, ``DeviceAllow=``) that no retry will fix, so it is refused with
one line naming ``device.url``. A path that does not exist (yet) is not refused: a USB device
may be plugged in later; the driver reports it offline and retries with backoff, and the status
line says so.
"""

from __future__ import annotations

import os
import queue
import random
import stat
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

import structlog

from controller.journal.recorder import DeviceIdentified
from controller.service.config import DeviceConfig, DeviceKind, ShoeDialect
from controller.service.errors import ServiceError
from drivers.events import DeviceIdentity

log = structlog.get_logger(__name__)

SIM_BACKOFF = (0.02, 0.2)
"""Reconnect backoff for the simulated devices (a pty never needs the hardware's 2 s)."""


def sim_jitter(seed: int | None) -> Callable[[], float] | None:
    """The jitter of a simulated device's backoffs: from its seed when it has one (so a seeded
    table reconnects at the same pace every run, ``tablectl bench --seed``), else the
    process's own random stream. Only the pace: what a reconnect journals never depends on it."""
    if seed is None:
        return None
    return random.Random(f"{seed}:backoff").random


@dataclass(slots=True)
class DealingDevice:
    """The opened device: its driver, and for ``sim`` the simulator and its pty server."""

    name: str
    """The device name its events carry (``shuffler`` or ``shoe``)."""
    config: DeviceConfig
    driver: Any
    sim: Any = None
    server: Any = None
    scratch: Any = None
    """For ``sim``: the directory of the pty's stable link (a replugged simulator comes back
    on a new pty; the link follows it, as a udev by-id link follows a real device)."""

    @property
    def acknowledger(self) -> Any:
        """The driver, when it leaves event acknowledgement to the journal (the framed
        shuffler and shoe, opened with ``deferred_ack``); ``None`` for the barcode dialects."""
        return self.driver if getattr(self.driver, "deferred_ack", False) else None

    @property
    def simulated(self) -> bool:
        return self.sim is not None

    @property
    def where(self) -> str:
        return f"sim on {self.server.path}" if self.server is not None else self.config.url

    def start(self) -> None:
        if self.server is not None:
            self.server.start()
        self.driver.start()
        log.info("device started", device=self.name, url=self.where)

    def close(self) -> None:
        """Stop the driver first (no reads from a closed pty), then the simulator."""
        for step in (self.driver.close, getattr(self.sim, "close", None),
                     getattr(self.server, "close", None)):
            if step is None:
                continue
            try:
                step()
            except Exception:  # closing must go on: one failure must not leak the rest
                log.exception("device close failed", device=self.name)
        if self.scratch is not None:
            self.scratch.cleanup()


def device_name(config: DeviceConfig) -> str:
    return "shuffler" if config.kind is DeviceKind.SHUFFLER else "shoe"


def check_device_path(config: DeviceConfig, *,
                      access: Callable[[str, int], bool] = os.access) -> None:
    """Refuse a device path the service cannot open (permissions); see the module doc.
    ``access`` is :func:`os.access` (a seam: the tests run as root, for whom it always says
    yes)."""
    url = config.url
    if not url.startswith("/"):
        return
    try:
        info = os.stat(url)
    except FileNotFoundError:
        log.warning("device path not present; the driver keeps retrying", url=url)
        return
    except OSError as error:
        raise ServiceError(f"device.url {url}: {error.strerror or error}") from error
    if not stat.S_ISCHR(info.st_mode):
        raise ServiceError(f"device.url {url}: not a character device (a serial port or USB "
                           "adapter)")
    if not access(url, os.R_OK | os.W_OK):
        raise ServiceError(f"device.url {url}: permission denied: the service's user needs "
                           "read and write access (udev group tablectl-devices, mode 0660; "
                           "see systemd/99-tablectl.rules)")


def open_device(config: DeviceConfig, events: queue.Queue[Any]) -> DealingDevice:
    """Build (not start) the configured device; ``events`` is the table's input queue."""
    name = device_name(config)
    if config.simulated:
        return _simulated(config, name, events)
    check_device_path(config)
    if config.kind is DeviceKind.SHUFFLER:
        from drivers.shuffler import Shuffler

        return DealingDevice(name, config, Shuffler(config.url, events, name=name,
                                                    deferred_ack=True,
                                                    on_identity=recorded(name, events)))
    from drivers.shoe import open_shoe

    assert config.dialect is not None
    options: dict[str, Any] = {"name": name, **_framed(config.dialect, name, events)}
    if config.deck is not None:
        options["deck"] = config.deck
    return DealingDevice(name, config, open_shoe(config.dialect.value, config.url, events,
                                                 **options))


def _framed(dialect: ShoeDialect, name: str, events: queue.Queue[Any]) -> dict[str, Any]:
    """Framed devices number their events and resend them until acknowledged: the journal
    acknowledges them once recorded (controller/journal/delivery.py); and they answer
    ``IDENTIFY``, recorded when it changes (:func:`recorded`). The barcode dialects have
    neither."""
    if dialect is not ShoeDialect.FRAMED:
        return {}
    return {"deferred_ack": True, "on_identity": recorded(name, events)}


def recorded(name: str, events: queue.Queue[Any]) -> Callable[[DeviceIdentity], None]:
    """What a framed driver does with a new identity: put it on the table's queue, where the
    journal records it as ``device_identified`` ahead of the events the driver holds back
    until then (drivers/framed/identify.py): the floor pools a shuffler's evidence by the
    serial recorded before its cards."""
    def put(identity: DeviceIdentity) -> None:
        events.put(DeviceIdentified(name, identity))
    return put


SIMULATORS = "tablectl.simulators"
"""The entry-point group where a simulator package registers what opens a simulated device on a
pty (``firmware_sim`` registers ``pty``: pyproject.toml). The service imports no simulator."""


def _pty_simulator() -> Callable[..., Any]:
    found = entry_points(group=SIMULATORS, name="pty")
    if not found:
        raise ServiceError("device.url 'sim': no simulator is installed (the firmware_sim "
                           f"package registers one in the {SIMULATORS!r} entry points); "
                           "reinstall tablectl")
    return next(iter(found)).load()


def _simulated(config: DeviceConfig, name: str, events: queue.Queue[Any]) -> DealingDevice:
    """The simulator of the configured kind and dialect on a pty (found by name, see
    :data:`SIMULATORS`), and the *real* driver on that pty, opened as for a real device."""
    dialect = config.dialect
    try:
        endpoint = _pty_simulator()(config.kind.value, dialect.value if dialect else None,
                                    name=name, seed=config.seed, deck=config.deck,
                                    shuffle_model=config.shuffle_model)
    except ValueError as error:  # the registry's SimulatorUnavailable
        raise ServiceError(f"device.url {config.url!r}: {error}") from error
    try:
        if config.kind is DeviceKind.SHUFFLER:
            from drivers.shuffler import Shuffler

            driver: Any = Shuffler(endpoint.link, events, name=name, backoff=SIM_BACKOFF,
                                   jitter=sim_jitter(config.seed), deferred_ack=True,
                                   on_identity=recorded(name, events))
        else:
            from drivers.shoe import open_shoe

            assert dialect is not None
            options: dict[str, Any] = {"name": name, "backoff": SIM_BACKOFF,
                                       "jitter": sim_jitter(config.seed),
                                       **_framed(dialect, name, events)}
            if dialect is ShoeDialect.SCANNER:
                options["deck"] = config.deck or "generic-code128"
            driver = open_shoe(dialect.value, endpoint.link, events, **options)
    except BaseException:
        endpoint.close()
        raise
    return DealingDevice(name, config, driver, endpoint.sim, endpoint.server, endpoint.scratch)
