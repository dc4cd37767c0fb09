"""The controller's exception tree.

Every error a user can provoke (a bad card token, a malformed settlement request, a wager outside
the table limits) is a :class:`TablectlError`, so the CLI can turn it into one clear line and a
non-zero exit instead of a traceback. Each subclass names one kind of problem.
"""

from __future__ import annotations


class TablectlError(Exception):
    """Base of every error the controller raises on purpose."""


class CardError(TablectlError, ValueError):
    """A card token that is not a card, or a card that cannot be where it is (single deck)."""


class HandError(TablectlError, ValueError):
    """A hand that is not exactly three distinct cards."""


class UnknownGameError(TablectlError, LookupError):
    """A game id that names none of the five rule sets."""


class WagerError(TablectlError, ValueError):
    """A wager that the rule set does not allow (unknown bet, bad position, bad amount)."""


class RequestError(TablectlError, ValueError):
    """A settlement request whose structure is wrong (missing field, wrong type)."""
