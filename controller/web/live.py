"""Following the live table through the control socket, for the dealer's screen.

One thread subscribes with ``watch`` and, on every round event, asks ``round.status`` on a second
connection and publishes the dealer view (:func:`controller.web.dealer.dealer_view`) to every
open page (server-sent events). The follower sends only read verbs (the dealer's own commands
go through ``POST /dealer/command``), and the table never waits for it (the service drops a
watcher that falls behind). What the status does not carry (a fold, an option, the results)
it keeps from the events as :class:`controller.web.dealer.RoundNotes`.
When the service is not there the view says so and the thread retries with a bounded backoff
(0.2 s doubling to 5 s, jittered: :mod:`drivers.backoff`); a repeated failure is logged once,
with its count when it ends.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import structlog

from controller.service.control.client import ControlClient, RequestRefused
from drivers.backoff import ExponentialBackoff
from controller.service.protocol import ErrorCode
from controller.service.errors import ControlError
from controller.errors import TablectlError
from controller.web.dealer import DEFAULT_CHIPS, RoundNotes, dealer_view

log = structlog.get_logger(__name__)
BACKOFF_FIRST = 0.2
BACKOFF_MAX = 5.0
RECONNECT = ExponentialBackoff(BACKOFF_FIRST, BACKOFF_MAX)
"""Waits between tries to follow the table, jittered: every screen a service restart dropped
does not come back in the same instant (``drivers.backoff``)."""
STATUS_TIMEOUT = 2.0
MAX_SUBSCRIBERS = 256
"""Every open page together (each is a queue of at most QUEUE_DEPTH views and a coroutine)."""
MAX_PER_SESSION = 8
"""One login's open pages: a screen and its reloads. A session past it is refused, no other."""
MAX_PER_ACCOUNT = 24
"""One account's pages over its sessions (auth caps an account's sessions too)."""
QUEUE_DEPTH = 4
STATUS_AS: tuple[dict[str, str], ...] = ({"name": "dealer screen", "role": "supervisor"},
                                         {"name": "dealer screen", "role": "operator"})
"""Whom the follower reads ``round.status`` for (delegation: docs/service.md), first that the
socket allows. The screen offers every command the table accepts now, a dealer's and (behind a
PIN) a supervisor's, and ``waits`` is cut to the reader's role: read in the web process's own
surveillance role it would offer none. Where ``control.web_roles`` leaves the supervisor out, a
dealer's reading still gives the dealer's buttons. Either hides the dealer's face-down hand."""


class StreamLimit(str, Enum):
    """Which cap turned a page's stream away."""

    SESSION = "session"
    ACCOUNT = "account"
    TOTAL = "total"


class Broadcast:
    """The latest view and the pages waiting for the next one (asyncio queues, bounded: a page
    that does not read loses old views, never blocks the follower). Streams are capped per
    session, per account and in total, so one login opening pages in a loop fills only its
    own share (an earlier single global cap let one dealer's 64 streams turn every other
    screen away)."""

    def __init__(self) -> None:
        self.latest: dict[str, Any] = dealer_view(None, problem="starting")
        self._queues: dict[asyncio.Queue[dict[str, Any]], tuple[str, str]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def subscribe(self, session: str = "", account: str = ""
                  ) -> asyncio.Queue[dict[str, Any]] | StreamLimit:
        """A queue for one page of ``session`` (of ``account``), or the cap it would pass."""
        with self._lock:
            owners = list(self._queues.values())
            if sum(1 for s, _ in owners if s == session) >= MAX_PER_SESSION:
                return StreamLimit.SESSION
            if sum(1 for _, a in owners if a == account) >= MAX_PER_ACCOUNT:
                return StreamLimit.ACCOUNT
            if len(owners) >= MAX_SUBSCRIBERS:
                return StreamLimit.TOTAL
            self._loop = asyncio.get_running_loop()
            queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_DEPTH)
            self._queues[queue] = (session, account)
            return queue

    def unsubscribe(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        with self._lock:
            self._queues.pop(queue, None)

    def streams_of(self, session: str) -> int:
        with self._lock:
            return sum(1 for s, _ in self._queues.values() if s == session)

    def publish(self, view: dict[str, Any]) -> None:
        """From any thread."""
        self.latest = view
        with self._lock:
            loop, queues = self._loop, list(self._queues)
        if loop is None or loop.is_closed():
            return
        for queue in queues:
            loop.call_soon_threadsafe(_put_latest, queue, view)


def _put_latest(queue: asyncio.Queue[dict[str, Any]], view: dict[str, Any]) -> None:
    if queue.full():
        queue.get_nowait()
    queue.put_nowait(view)


class TableFollower:
    """The thread that keeps :class:`Broadcast` current from the control socket."""

    def __init__(self, socket_path: Path, broadcast: Broadcast,
                 client: Callable[..., ControlClient] = ControlClient,
                 chips: Sequence[int] = DEFAULT_CHIPS) -> None:
        self.socket_path = socket_path
        self.broadcast = broadcast
        self.chips = tuple(chips)
        self._client = client
        self._stop = threading.Event()
        self._watcher: ControlClient | None = None
        self._notes = RoundNotes()
        self._status_as: list[dict[str, str]] = list(STATUS_AS)
        self._failures = 0
        self._thread = threading.Thread(target=self._run, name="web-follow", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        watcher = self._watcher
        if watcher is not None:
            watcher.interrupt()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        retries = RECONNECT.retries()
        while not self._stop.is_set():
            try:
                self._follow()
                retries.reset()
                pause = RECONNECT.delay(1)  # the watch ended: follow again after the first wait
            except (ControlError, TablectlError, OSError) as error:
                self._failed(str(error))
                pause = retries.failed()
            except Exception as error:  # noqa: BLE001 (a bug must not stop the screen)
                log.exception("following the table failed")
                self._failed(f"internal error: {error}")
                pause = retries.failed()
            if self._stop.wait(pause):
                break

    def _failed(self, problem: str) -> None:
        self._failures += 1
        if self._failures == 1:
            log.warning("table service not reachable", socket=str(self.socket_path),
                        problem=problem)
        self.broadcast.publish(dealer_view(None, problem=problem, chips=self.chips))

    def _follow(self) -> None:
        with self._client(self.socket_path, timeout=None) as watcher:
            self._watcher = watcher
            try:
                events = watcher.watch()
                if self._failures:
                    log.info("table service reachable again", failures=self._failures)
                    self._failures = 0
                self._show()
                for event in events:
                    if self._stop.is_set():
                        return
                    self._note(event)  # a DeviceStatus line notes nothing, shows afresh
                    self._show()
            finally:
                self._watcher = None
        raise ControlError("the table service closed the connection")

    def _note(self, event: dict[str, Any]) -> None:
        """Folds the event into the round's notes (plays, folds, options, removed hands,
        results: what ``round.status`` does not carry)."""
        self._notes = self._notes.noted(event)

    def _show(self) -> None:
        """A fresh connection per status: one idle between events would be closed by the
        service's idle limit (docs/service.md), and a Unix connect costs microseconds."""
        with self._client(self.socket_path, timeout=STATUS_TIMEOUT) as status:
            answer = self._status(status)
        self.broadcast.publish(dealer_view(answer, notes=self._notes, chips=self.chips))

    def _status(self, client: ControlClient) -> dict[str, Any]:
        """``round.status`` for the first person the socket lets this process act for; when it
        lets it act for none, in its own role (logged once: the screen then offers nothing)."""
        while self._status_as:
            try:
                return client.request("round.status", acting_for=self._status_as[0])
            except RequestRefused as refused:
                if refused.code not in (ErrorCode.FORBIDDEN, ErrorCode.MALFORMED):
                    raise
                dropped = self._status_as.pop(0)
                log.warning("the table's status cannot be read for this role (control.web_group,"
                            " control.web_roles)", role=dropped["role"], problem=refused.message,
                            next=self._status_as[0]["role"] if self._status_as else "own role")
        return client.request("round.status")
