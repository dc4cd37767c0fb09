"""Ask a framed device who it is each time its link comes up, and after each reboot.

The floor pools a shuffler's evidence by its serial number (docs/game-protection.md, "One
machine across tables"), so the table must record which machine is at it, and record it again
when a different machine is swapped in: after a reconnect (unplugged, another one plugged in)
or a reboot (a new boot id on the same port). :class:`LinkIdentifier` does that on its own
thread, never on the reader thread (whose replies :meth:`FramedLink.request` waits for) and never
on the table's:

* the reader thread calls :meth:`LinkIdentifier.begin` when the link is up and when the device
  rebooted; from then on every event the driver emits is *held*, in order;
* the identifier's thread asks ``IDENTIFY`` (each try is one bounded :meth:`request`, with the
  link's own retries), up to :data:`IDENTIFY_ATTEMPTS` tries, backing off between them;
* when the device answers with an identity different from the last one handed on, the identity
  is handed on first (``on_identity``), and only then the held events, so the journal records
  the machine before anything that machine did after the link came up (its resent backlog and
  the DeviceOnline that lets "No more bets" through included);
* a device that never answers (or refuses ``IDENTIFY``: not retried, a refusal is an answer)
  is logged as ``device_identify_failed`` and its held events go on unchanged: the table carries
  on with the machine it knew. The hold lasts at most the tries' bound (a few seconds), and the
  table thread is never the one waiting.

Why a separate record and not the identity inside ``DeviceOnline``: a reboot reports no new
online, and an identity learned on an earlier connection may be another machine's; the service
records it as ``device_identified`` (controller/journal/recorder.py, ``DeviceIdentified``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from drivers.backoff import ExponentialBackoff
from drivers.errors import CommandRejected, DeviceDisconnected, DriverError
from drivers.events import DeviceEvent, DeviceIdentity

log = structlog.get_logger(__name__)

IDENTIFY_ATTEMPTS = 3
"""Tries per link-up (each already retried by the link): a device that misses three is
logged and the table goes on without its identity."""
IDENTIFY_BACKOFF = (0.25, 1.0)
"""Seconds between tries: first, then doubled up to the second."""
JOIN_SECONDS = 2.0

Identify = Callable[[], DeviceIdentity]
Deliver = Callable[[DeviceEvent], None]
OnIdentity = Callable[[DeviceIdentity], None]


class LinkIdentifier:
    """``LinkIdentifier(name, identify, deliver, on_identity)``; ``start()``, then ``stop()``
    before the link closes and ``join()`` after.

    ``identify`` is the device's blocking ``identify()``; ``deliver`` puts an event on the
    table's queue (the runner's own ``emit``); ``on_identity`` records an identity, called
    with this object's lock held so that nothing the device emits can overtake it."""

    def __init__(self, name: str, identify: Identify, deliver: Deliver,
                 on_identity: OnIdentity, *, attempts: int = IDENTIFY_ATTEMPTS,
                 backoff: tuple[float, float] = IDENTIFY_BACKOFF,
                 jitter: Callable[[], float] | None = None) -> None:
        self.name = name
        self._identify = identify
        self._deliver = deliver
        self._on_identity = on_identity
        self.attempts = attempts
        self.backoff = backoff
        self.waits = ExponentialBackoff(*backoff) if jitter is None else \
            ExponentialBackoff(*backoff, random=jitter)
        """Between tries: doubling from ``backoff[0]``, jittered (``drivers.backoff``; from
        ``jitter`` when given, as the link's own reopen waits are)."""
        self.reported: DeviceIdentity | None = None
        """The identity last handed on: the same machine again is not recorded again."""
        self.failures = 0
        """Link-ups whose identity could not be learned (for status and tests)."""
        self.completed = 0
        """Identifications finished, answered or given up (a test waits on it)."""
        self._lock = threading.Lock()
        self._held: list[DeviceEvent] = []
        self._holding = False
        self._wanted = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._reason = ""

    # life cycle -------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name=f"identify-{self.name}",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop asking (before the link closes); :meth:`join` after the link is closed."""
        self._stop.set()
        self._wanted.set()

    def join(self) -> None:
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=JOIN_SECONDS)
            if thread.is_alive():
                log.warning("identify_thread_did_not_stop", device=self.name)
        self._thread = None
        self._release()  # whatever is still held goes on (closing: the table reads no more)

    # the reader thread ------------------------------------------------------------------------
    def begin(self, reason: str) -> None:
        """The link came up or the device rebooted: hold events until it is identified."""
        with self._lock:
            self._holding = True
            self._reason = reason
            self._wanted.set()  # under the lock: a release in progress sees it

    def hold(self, event: DeviceEvent) -> bool:
        """``True`` when ``event`` is held (an identification is under way)."""
        with self._lock:
            if not self._holding:
                return False
            self._held.append(event)
            return True

    # the identifier's thread ------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            self._wanted.wait()
            if self._stop.is_set():
                return
            self._wanted.clear()
            try:
                identity, error = self._ask()
            except Exception as bug:  # noqa: BLE001 - held events must never stay held
                log.exception("identify_failed_unexpectedly", device=self.name)
                identity, error = None, repr(bug)
            if not self._release(identity, final=False):
                continue  # the link came up again or rebooted meanwhile: ask that machine
            if self._stop.is_set():
                return
            if identity is None:
                self.failures += 1
                log.warning("device_identify_failed", device=self.name, reason=error,
                            after=self._reason)
            self.completed += 1

    def _ask(self) -> tuple[DeviceIdentity | None, str]:
        error = "not asked"
        for attempt in range(self.attempts):
            # before try n (n >= 2): first * 2 ** (n - 1), at most the cap, jittered
            if attempt and self._stop.wait(self.waits.delay(attempt + 1)):
                return None, "closed"
            try:
                return self._identify(), ""
            except DeviceDisconnected as lost:  # asked again when the link is back
                return None, str(lost)
            except CommandRejected as refused:  # an answer: this device cannot say
                return None, str(refused)
            except DriverError as failed:
                error = str(failed)
                log.info("identify_retry", device=self.name, attempt=attempt + 1, error=error)
        return None, error

    def _release(self, identity: DeviceIdentity | None = None, *, final: bool = True) -> bool:
        """Hand on ``identity`` (when new) and then the held events; ``False`` (nothing done)
        when not ``final`` and another link-up or reboot asked again meanwhile: the identity
        learned may be the machine before it."""
        with self._lock:
            if not final and self._wanted.is_set() and not self._stop.is_set():
                return False
            if identity is not None and identity != self.reported:
                log.info("device_identified", device=self.name, serial=identity.serial,
                         model=identity.model, firmware=identity.firmware_version)
                self.reported = identity
                self._on_identity(identity)
            held, self._held, self._holding = self._held, [], False
            for event in held:
                self._deliver(event)
        return True
