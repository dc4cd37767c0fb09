"""The checks every state-changing request passes: same origin, and the session's CSRF token.

SameSite cookies are not enough: another port on the same host is the same *site*, so a page
served there would send the dealer's cookie with its request. The browser's ``Origin`` header
names the page that sent the request and a page cannot forge it; it must be this app's own
origin (scheme, host and port). Without ``Origin`` the ``Referer``'s origin must match; with
neither the request is refused (our pages are served with ``Referrer-Policy: same-origin``, so
a browser sends both to us). The CSRF token (per session, on every page as ``<meta
name="csrf-token">``) comes back as header ``X-CSRF-Token`` (or, from a plain form, field
``csrf_token``): a page elsewhere cannot read it.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from urllib.parse import urlsplit

CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf_token"


class GuardCode(str, Enum):
    """Why a request was refused (the ``code`` of the JSON error)."""

    ORIGIN = "origin"
    CSRF = "csrf"


@dataclass(frozen=True, slots=True)
class GuardRefusal:
    code: GuardCode
    message: str


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of a URL, lower-cased; ``None`` for ``null`` or garbage."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower()


def origin_refusal(headers: Mapping[str, str], own_origin: str) -> GuardRefusal | None:
    """Why the request does not come from one of our pages (``None``: it does)."""
    sent = headers.get("origin")
    if sent is not None:
        if origin_of(sent) != own_origin.lower():
            return GuardRefusal(GuardCode.ORIGIN, f"refused: the request comes from {sent!r}, "
                                f"not from this screen ({own_origin})")
        return None
    referer = headers.get("referer")
    if referer is None:
        return GuardRefusal(GuardCode.ORIGIN, "refused: the request names no Origin or Referer "
                            "(send it from this app's page)")
    if origin_of(referer) != own_origin.lower():
        return GuardRefusal(GuardCode.ORIGIN, "refused: the request's Referer is not this "
                            f"screen ({own_origin})")
    return None


def csrf_refusal(sent: str | None, expected: str) -> GuardRefusal | None:
    """Why the token sent does not match the session's (compared in constant time)."""
    if not expected or not sent or not hmac.compare_digest(sent.encode(), expected.encode()):
        return GuardRefusal(GuardCode.CSRF, "refused: missing or wrong CSRF token (reload the "
                            "page)")
    return None
