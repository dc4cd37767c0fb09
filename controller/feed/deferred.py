"""The modules the feed's libraries import and the feed never uses (:mod:`controller.deferred`).

paho-mqtt imports ``urllib.request`` when it is imported, for one purpose: reading proxy
settings from the environment, which it does only when PySocks is installed
(``Client._get_proxy``). ``urllib.request`` brings ``http.client``, ``email``, ``tempfile``,
``bz2`` and ``lzma`` with it: 2.3 MB of the feed's memory on the table (docs/feed.md,
"Memory"), for a path the feed does not take, since the table has no PySocks.

Only the feed's own program (``python -m controller.feed``) defers these: it is the one
process with a memory budget and no other use for them.
"""

from __future__ import annotations

from controller.deferred import DeferredModule, defer, load

UNUSED_BY_THE_FEED = ("urllib.request",)


def defer_unused_imports() -> None:
    for name in UNUSED_BY_THE_FEED:
        defer(name)


__all__ = ["UNUSED_BY_THE_FEED", "DeferredModule", "defer", "defer_unused_imports", "load"]
