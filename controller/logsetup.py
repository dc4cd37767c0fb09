"""Operational logging, configured once in the entry point (structlog).

This is the operator's log, not the surveillance journal. On a terminal it is rendered for
humans; otherwise (under systemd, in CI) as one JSON object per line. Threads do not inherit
context variables, so device threads pass ``device=`` explicitly.
"""

from __future__ import annotations

import logging
import sys

import structlog


class _CurrentStderr:
    """A file that writes to whatever ``sys.stderr`` is at the moment of writing.

    structlog binds its output file at configuration time and caches loggers; if that file is
    later replaced and closed (pytest's capture, a re-exec'd daemon), every cached logger would
    raise on write. Looking ``sys.stderr`` up per write avoids that.
    """

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: str = "WARNING", *, json: bool | None = None) -> None:
    """Configure structlog for the process. ``json=None`` picks JSON when stderr is no TTY."""
    use_json = (not sys.stderr.isatty()) if json is None else json
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if use_json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level.upper(), logging.WARNING)
        ),
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )
