"""Errors of the service layer, all :class:`TablectlError` so the CLI prints one line, exit 2
(:class:`ResourceUnavailableError`: exit 75, which systemd retries)."""

from __future__ import annotations

from pathlib import Path

from controller.errors import TablectlError


class ConfigError(TablectlError, ValueError):
    """A configuration file that cannot be used; names the file, the key and the problem.

    ``key`` is the dotted path (``limits.tie.max``); it is ``None`` for problems of the file as
    a whole (unreadable, not TOML).
    """

    def __init__(self, source: str | Path, key: str | None, problem: str) -> None:
        self.source = str(source)
        self.key = key
        self.problem = problem
        where = f"{self.source}: {key}" if key else self.source
        super().__init__(f"{where}: {problem}")


class ServiceError(TablectlError, RuntimeError):
    """The service cannot start or run as configured (socket path in use, unknown group)."""


class ControlError(TablectlError, RuntimeError):
    """The control socket could not be reached, or answered something that is not protocol."""


class ResourceUnavailableError(ServiceError):
    """Something the service needs that may come back on its own: the journal's disk full,
    read-only or failing. Not a configuration error, so ``tablectl run`` exits with
    :data:`controller.service.lifecycle.backoff.EXIT_TEMPFAIL`, which systemd retries (exit 2 it
    does not)."""
