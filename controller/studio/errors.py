"""The studio package's exceptions: one tree, so the CLI turns any of them into one line."""

from __future__ import annotations

from controller.errors import TablectlError


class StudioError(TablectlError):
    """Base of every error the studio gateway and its reference client raise on purpose."""


class StudioConfigError(StudioError):
    """``studio.toml`` is missing, unreadable or names a bad value (the key is in the message)."""


class StudioRefusal(StudioError):
    """A request the gateway answers with an error: ``status`` is the HTTP status, ``code`` a
    stable word a game server can switch on, ``message`` one line for a person."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


class StudioClientError(StudioError):
    """The reference client could not talk to the gateway, or a settlement did not match."""
