"""A supervisor's presence at the dealer's screen: who answered the PIN, until when.

A pit supervisor walks over, enters name and PIN on the dealer's screen, answers the hold and
walks away. The presence belongs to that screen's session (another screen, or the same dealer
on another device, gets nothing from it) and ends after ``idle_seconds`` without a supervisor
action, on the supervisor's logout, or when the session ends. Nothing here is trusted by the
table: the control socket judges each request in the role the web process names, within the
roles the service gives the web process's account (docs/service.md, "Delegation").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_IDLE_SECONDS = 120.0


@dataclass(frozen=True, slots=True)
class Presence:
    name: str
    until: float


class SupervisorPresence:
    """Session id -> the supervisor present there; thread-safe."""

    def __init__(self, idle_seconds: float = DEFAULT_IDLE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.idle_seconds = idle_seconds
        self._clock = clock
        self._present: dict[str, Presence] = {}
        self._lock = threading.Lock()

    def arrive(self, session_id: str, name: str) -> Presence:
        with self._lock:
            self._forget_expired()
            found = Presence(name, self._clock() + self.idle_seconds)
            self._present[session_id] = found
            return found

    def present(self, session_id: str, *, touch: bool = False) -> Presence | None:
        """The supervisor at this session's screen (``touch``: an action, so the idle time
        starts again)."""
        with self._lock:
            found = self._present.get(session_id)
            now = self._clock()
            if found is None or found.until <= now:
                self._present.pop(session_id, None)
                return None
            if touch:
                found = Presence(found.name, now + self.idle_seconds)
                self._present[session_id] = found
            return found

    def leave(self, session_id: str) -> None:
        with self._lock:
            self._present.pop(session_id, None)

    def describe(self, session_id: str) -> dict[str, object] | None:
        """``{"name", "expires_in"}`` for ``GET /dealer/state``; ``None`` when nobody is."""
        found = self.present(session_id)
        if found is None:
            return None
        return {"name": found.name, "expires_in": max(0, round(found.until - self._clock()))}

    def _forget_expired(self) -> None:
        now = self._clock()
        for key in [k for k, p in self._present.items() if p.until <= now]:
            del self._present[key]
