"""The one error of the selfcheck package: a file or key that cannot be used at all."""

from __future__ import annotations

from controller.errors import TablectlError


class SelfCheckError(TablectlError, ValueError):
    """A manifest, signature or key file that cannot be read or parsed; one line naming it.
    (A manifest that reads fine but does not match is a verdict, not an error.)"""
