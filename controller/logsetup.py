"""Operational logging, configured once in the entry point (structlog).

This is the operator's log, not the surveillance journal. It always goes to stderr, so a
command's output on stdout is never mixed with log lines. Its form depends on where stderr goes:

* a terminal: rendered for humans (no colour when ``NO_COLOR`` is set, https://no-color.org);
  a live status line (the bench's progress, :func:`status_line`) is cleared before a log line
  and redrawn after it, so the two never share a line;
* journald (``JOURNAL_STREAM`` names our stderr, as systemd sets it): one JSON object per line
  behind the ``<N>`` syslog priority prefix that journald reads from a stream (sd-daemon(3)),
  so ``journalctl -p warning`` filters;
* anything else (a file, a pipe, CI): one JSON object per line.

Threads do not inherit context variables, so device threads pass ``device=`` explicitly.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Any

import structlog

from controller.journald import SYSLOG_PRIORITY, under_journald

_CLEAR_LINE = "\r\x1b[K"


class _Stderr:
    """A file that writes to whatever ``sys.stderr`` is at the moment of writing, and keeps a
    live status line out of the way of log lines.

    structlog binds its output file at configuration time and caches loggers; if that file is
    later replaced and closed (pytest's capture, a re-exec'd daemon), every cached logger would
    raise on write. Looking ``sys.stderr`` up per write avoids that.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.status = ""
        self.cleared = False

    def write(self, text: str) -> int:
        with self.lock:
            err = sys.stderr
            if self.status and not self.cleared:
                err.write(_CLEAR_LINE)
                self.cleared = True
            written = err.write(text)
            if self.cleared and text.endswith("\n"):
                err.write(self.status)
                self.cleared = False
            return written

    def flush(self) -> None:
        sys.stderr.flush()

    def show(self, text: str, final: bool) -> None:
        with self.lock:
            sys.stderr.write(_CLEAR_LINE + text + ("\n" if final else ""))
            sys.stderr.flush()
            self.status = "" if final else text
            self.cleared = False


_STDERR = _Stderr()


def status_line(text: str, *, final: bool = False) -> None:
    """Show ``text`` as the live status line on a terminal's stderr (replacing the last one);
    ``final`` ends it with a newline. Log lines written meanwhile clear it and redraw it."""
    _STDERR.show(text, final)


def _syslog_prefix(logger: Any, method_name: str, rendered: Any) -> Any:
    """After the renderer: ``<N>`` before the line, N the syslog priority of its level."""
    return f"<{SYSLOG_PRIORITY.get(method_name, 6)}>{rendered}"


def configure_logging(level: str = "WARNING", *, json: bool | None = None,
                      journald: bool | None = None) -> None:
    """Configure structlog for the process. ``json=None`` picks JSON when stderr is no TTY;
    ``journald=None`` adds the priority prefix when stderr is the journal (see module doc)."""
    use_json = (not sys.stderr.isatty()) if json is None else json
    use_prefix = under_journald() if journald is None else journald
    colors = not os.environ.get("NO_COLOR")
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if use_json
        else structlog.dev.ConsoleRenderer(colors=colors)
    )
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        renderer,
    ]
    if use_prefix:
        processors.append(_syslog_prefix)
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level.upper(), logging.WARNING)
        ),
        logger_factory=structlog.PrintLoggerFactory(file=_STDERR),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )
