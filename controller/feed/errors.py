"""Errors of the floor feed and the floor consumer: one tree, each a :class:`TablectlError` so
the CLI prints one line (exit 2) instead of a traceback."""

from __future__ import annotations

from controller.errors import TablectlError


class FeedError(TablectlError, RuntimeError):
    """Base of the feed's and the floor's errors."""


class FeedConfigError(FeedError, ValueError):
    """A ``[feed]`` or ``[floor]`` section that cannot be used."""


class BrokerError(FeedError, ConnectionError):
    """The broker could not be reached or refused us (TLS, identity, ACL)."""


class CursorError(FeedError):
    """The cursor does not match the journal it points into (another table, a rewritten chain)."""


class KeyFileError(FeedError, ValueError):
    """A signing key or a public key that cannot be used (missing, readable by others, not
    Ed25519)."""


class SigningError(FeedError):
    """The feed could not sign a record (its crypto library failed)."""
