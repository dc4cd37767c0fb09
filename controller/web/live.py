"""Following the live table through the control socket, for the dealer's screen.

One thread subscribes with ``watch`` and, on every round event, asks ``round.status`` on a second
connection and publishes the dealer view (:func:`controller.web.dealer.dealer_view`) to every
open page (server-sent events). Only read verbs are sent: nothing here can change the table,
and the table never waits for this process (the service drops a watcher that falls behind).
When the service is not there the view says so and the thread retries with a bounded backoff
(0.2 s doubling to 5 s); a repeated failure is logged once, with its count when it ends.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import structlog

from controller.service.client import ControlClient
from controller.service.errors import ControlError
from controller.errors import TablectlError
from controller.web.dealer import dealer_view

log = structlog.get_logger(__name__)
BACKOFF_FIRST = 0.2
BACKOFF_MAX = 5.0
STATUS_TIMEOUT = 2.0
MAX_SUBSCRIBERS = 256
"""Every open page together (each is a queue of at most QUEUE_DEPTH views and a coroutine)."""
MAX_PER_SESSION = 8
"""One login's open pages: a screen and its reloads. A session past it is refused, no other."""
MAX_PER_ACCOUNT = 24
"""One account's pages over its sessions (auth caps an account's sessions too)."""
QUEUE_DEPTH = 4
_END_EVENTS = frozenset({"RoundSettled", "RoundVoided"})


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
                 client: Callable[..., ControlClient] = ControlClient) -> None:
        self.socket_path = socket_path
        self.broadcast = broadcast
        self._client = client
        self._stop = threading.Event()
        self._watcher: ControlClient | None = None
        self._results: tuple[Any, list[dict[str, Any]]] = (None, [])
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
        pause = BACKOFF_FIRST
        while not self._stop.is_set():
            try:
                self._follow()
                pause = BACKOFF_FIRST
            except (ControlError, TablectlError, OSError) as error:
                self._failed(str(error))
            except Exception as error:  # noqa: BLE001 (a bug must not stop the screen)
                log.exception("following the table failed")
                self._failed(f"internal error: {error}")
            if self._stop.wait(pause):
                break
            pause = min(pause * 2, BACKOFF_MAX)

    def _failed(self, problem: str) -> None:
        self._failures += 1
        if self._failures == 1:
            log.warning("table service not reachable", socket=str(self.socket_path),
                        problem=problem)
        self.broadcast.publish(dealer_view(None, problem=problem))

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
                    self._note(event)
                    self._show()
            finally:
                self._watcher = None
        raise ControlError("the table service closed the connection")

    def _note(self, event: dict[str, Any]) -> None:
        if event.get("type") in _END_EVENTS:
            settlement = event.get("settlement") or {}
            results = settlement.get("results") if isinstance(settlement, dict) else None
            self._results = (event.get("round"), [
                {"wager": r.get("wager_id"), "outcome": r.get("outcome"), "net": r.get("net"),
                 "rule": r.get("rule")} for r in results or [] if isinstance(r, dict)])

    def _show(self) -> None:
        """A fresh connection per status: one idle between events would be closed by the
        service's idle limit (docs/service.md), and a Unix connect costs microseconds."""
        with self._client(self.socket_path, timeout=STATUS_TIMEOUT) as status:
            answer = status.request("round.status")
        view = dealer_view(answer)
        if view["state"] in ("settled", "voided") and self._results[0] == answer.get("round"):
            view["results"] = self._results[1]
        self.broadcast.publish(view)
