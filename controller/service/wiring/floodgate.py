"""Per-source flood limits on what the journal records: refused commands and link errors.

Every refused command is journaled (its input and the refusal) and every link error is
journaled (a ``LinkError`` input and the table's note of it): that is what surveillance reviews.
But one account sending refused commands in a loop, or one noisy serial line (a wrong baud
rate), could then fill the disk in hours (issue 24, finding 7: 786 MB in 10 s; a Bee-Tek line at
the wrong baud, about 3 GB an hour). So each source gets a fixed window
(:attr:`FloodLimits.window_seconds`, opened by its first counted event): the first
:attr:`FloodLimits.burst` of a kind in the window are journaled in full, the rest are counted,
and when the window ends one ``flood_summary`` record says how many were not journaled, the
first and last reason and when (:class:`FloodSummary`). Surveillance still sees that it
happened, and when; the disk sees at most ``burst`` events and one summary per source and
window.

A *source* is what cannot be chosen by the flooder: the account the kernel vouches for
(``uid 1001 alice``), not the ``actor`` text a request claims, and the device name for a link.
While an account is over its limit, its commands are refused without reaching the table or the
journal ("refused unheard", counted in the summary): a command the table would refuse cannot be
told from one it would take without handling it, and handling is what is journaled.

This module only counts and decides; :mod:`.tablethread` calls it on the table thread (which
owns the journal) and writes the summaries. No thread, no I/O; the clocks are seams.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from typing import Any

from controller.service.policy import FloodLimits

FLOOD_SUMMARY = "flood_summary"
"""Event type of the journal record that counts what a window did not journal in full."""
MAX_REASON_CHARS = 200
"""A reason kept in a summary is cut to this (it is code's text, but a device's may follow)."""


class FloodKind(str, Enum):
    """What is counted (the ``kind`` of a ``flood_summary``)."""

    COMMAND_REFUSED = "command_refused"
    LINK_ERROR = "link_error"
    """Bytes a device's link dropped (:class:`drivers.events.LinkError`)."""
    DEVICE_WARNING = "device_warning"
    """A device's non-fatal message (Bee-Tek ``<W0x01>``; what line noise can also spell)."""


@dataclass(frozen=True, slots=True)
class FloodSummary:
    """One window of one source in which some events were counted, not journaled."""

    kind: FloodKind
    source: str
    journaled: int
    """Journaled in full in this window (the burst)."""
    suppressed: int
    """Counted only: not journaled."""
    window_seconds: float
    opened_at: str
    """When the window opened (UTC, ISO 8601): its first counted event."""
    first_at: str
    """When the first event not journaled came (UTC)."""
    last_at: str
    first_reason: str
    last_reason: str
    dropped_bytes: int = 0
    """For link errors: the bytes the suppressed errors dropped."""

    def payload(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "source": self.source, "journaled": self.journaled,
                "suppressed": self.suppressed, "window_seconds": self.window_seconds,
                "opened_at": self.opened_at, "first_at": self.first_at,
                "last_at": self.last_at, "first_reason": self.first_reason,
                "last_reason": self.last_reason, "dropped_bytes": self.dropped_bytes}


@dataclass(slots=True)
class _Window:
    opened: float
    opened_wall: float
    journaled: int = 0
    suppressed: int = 0
    first_wall: float = 0.0
    last_wall: float = 0.0
    first_reason: str = ""
    last_reason: str = ""
    dropped: int = 0


@dataclass(slots=True)
class Floodgate:
    """Counts per (kind, source) and window; see the module doc. Table thread only."""

    limits: FloodLimits = FloodLimits()
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    _windows: dict[tuple[FloodKind, str], _Window] = field(default_factory=dict)
    _ended: list[FloodSummary] = field(default_factory=list)
    _retry_at: float = 0.0

    def throttled(self, kind: FloodKind, source: str) -> bool:
        """The source has had ``burst`` of ``kind`` journaled in its current window: the next
        one is counted (:meth:`suppressed`), not journaled."""
        window = self._window(kind, source, open_new=False)
        return window is not None and window.journaled >= self.limits.burst

    def counted(self, kind: FloodKind, source: str) -> None:
        """One of ``kind`` was journaled in full (opens the source's window if none is open)."""
        window = self._window(kind, source, open_new=True)
        assert window is not None
        window.journaled += 1

    def suppressed(self, kind: FloodKind, source: str, reason: str, dropped: int = 0) -> None:
        """One of ``kind`` was counted, not journaled."""
        window = self._window(kind, source, open_new=True)
        assert window is not None
        now, reason = self.wall(), reason[:MAX_REASON_CHARS]
        if not window.suppressed:
            window.first_wall, window.first_reason = now, reason
        window.suppressed += 1
        window.last_wall, window.last_reason = now, reason
        window.dropped += dropped

    def seconds_left(self, kind: FloodKind, source: str) -> float:
        """Until the source's current window ends (0 with none open)."""
        window = self._windows.get((kind, source))
        if window is None:
            return 0.0
        return max(0.0, window.opened + self.limits.window_seconds - self.clock())

    def next_due(self) -> float | None:
        """Seconds until the next summary is due (0: one is due now); None: none pending."""
        if self._ended:
            return max(0.0, self._retry_at - self.clock())
        ends = [w.opened + self.limits.window_seconds for w in self._windows.values()
                if w.suppressed]
        return max(0.0, min(ends) - self.clock()) if ends else None

    def due(self) -> list[FloodSummary]:
        """The summaries of the windows that have ended (each once); windows with nothing
        suppressed end silently (everything in them is journaled in full)."""
        now = self.clock()
        for key, window in list(self._windows.items()):
            if now >= window.opened + self.limits.window_seconds:
                del self._windows[key]
                self._close(key, window)
        if now < self._retry_at:  # the journal refused the last ones: not yet
            return []
        ended, self._ended = self._ended, []
        return ended

    def drain(self) -> list[FloodSummary]:
        """Every pending summary, ended or not (the service is stopping)."""
        for key, window in list(self._windows.items()):
            self._close(key, window)
        self._windows.clear()
        ended, self._ended = self._ended, []
        return ended

    def requeue(self, summaries: list[FloodSummary], retry_seconds: float) -> None:
        """Summaries the journal could not take (a full disk): due again in
        ``retry_seconds``, not at once, so a quiet table thread does not spin on them."""
        self._ended[:0] = summaries
        self._retry_at = self.clock() + retry_seconds

    def _window(self, kind: FloodKind, source: str, *, open_new: bool) -> _Window | None:
        key, now = (kind, source), self.clock()
        window = self._windows.get(key)
        if window is not None and now >= window.opened + self.limits.window_seconds:
            del self._windows[key]
            self._close(key, window)
            window = None
        if window is None and open_new:
            window = self._windows[key] = _Window(now, self.wall())
        return window

    def _close(self, key: tuple[FloodKind, str], window: _Window) -> None:
        if not window.suppressed:
            return
        kind, source = key
        self._ended.append(FloodSummary(
            kind=kind, source=source, journaled=window.journaled,
            suppressed=window.suppressed, window_seconds=self.limits.window_seconds,
            opened_at=_iso(window.opened_wall), first_at=_iso(window.first_wall),
            last_at=_iso(window.last_wall), first_reason=window.first_reason,
            last_reason=window.last_reason, dropped_bytes=window.dropped))


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")
