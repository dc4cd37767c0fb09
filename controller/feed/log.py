"""The feed's operational log: the same lines as the rest of tablectl (one JSON object per
line on stderr, with the ``<N>`` syslog priority under journald), written without structlog.

Why not structlog here: the feed runs on the table beside the table service with a memory
budget (docs/feed.md: under 25 MB RSS), and importing structlog costs about 4 MB (it loads
asyncio, inspect and the stdlib adapters). The feed writes a handful of lines (start, link
changes, the reason it stopped), so this small writer does the job. The surveillance journal
is not involved: the feed only reads it.
"""

from __future__ import annotations

import json
import sys
import threading
from datetime import datetime, timezone
from typing import Any

from controller.journald import SYSLOG_PRIORITY, under_journald

_RANK = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
LEVELS = tuple(name.upper() for name in _RANK)


class FeedLog:
    """``log.info("event", key=value, ...)``; lines below the configured level are dropped."""

    level = _RANK["warning"]
    journald: bool | None = None  # None: look at stderr on first use
    _lock = threading.Lock()

    def debug(self, event: str, **fields: Any) -> None:
        self._emit("debug", event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._emit("info", event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._emit("warning", event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._emit("error", event, fields)

    def _emit(self, level: str, event: str, fields: dict[str, Any]) -> None:
        if _RANK[level] < FeedLog.level:
            return
        if FeedLog.journald is None:
            FeedLog.journald = under_journald()
        line = json.dumps({**fields, "event": event, "level": level,
                           "timestamp": datetime.now(timezone.utc).isoformat()
                           .replace("+00:00", "Z")}, default=str)
        if FeedLog.journald:
            line = f"<{SYSLOG_PRIORITY[level]}>{line}"
        with FeedLog._lock:
            try:
                sys.stderr.write(line + "\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass  # a closed stderr must not stop the feed


def configure(level: str = "WARNING") -> None:
    """Set the lowest level written (``DEBUG``, ``INFO``, ``WARNING``, ``ERROR``)."""
    FeedLog.level = _RANK.get(level.lower(), _RANK["warning"])


log = FeedLog()
