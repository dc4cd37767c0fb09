"""The floor page's one exception tree."""

from __future__ import annotations

from controller.feed.errors import FeedError


class FloorPageError(FeedError):
    """The floor page cannot start or answer: a setting, the database."""


class FloorPageConfigError(FloorPageError):
    """A setting of ``tablectl floor web`` is not usable (named in the message)."""
