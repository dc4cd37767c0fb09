"""The web process's exception tree: every error a user or an operator can cause is one line."""

from __future__ import annotations

from controller.errors import TablectlError


class WebError(TablectlError):
    """Base of the web process's errors."""


class WebConfigError(WebError, ValueError):
    """A web config that would be unsafe or cannot work (remote without TLS, a missing file)."""


class AccountsError(WebError, ValueError):
    """An accounts file line that is not ``name:role:hash``, or an unknown role."""


class ExportError(WebError, ValueError):
    """An export file that is not one, or that the journal does not vouch for."""
