"""Modules that the feed's libraries import and the feed never uses, loaded only when used.

paho-mqtt imports ``urllib.request`` when it is imported, for one purpose: reading proxy
settings from the environment, which it does only when PySocks is installed
(``Client._get_proxy``). ``urllib.request`` brings ``http.client``, ``email``, ``tempfile``,
``bz2`` and ``lzma`` with it: 2.3 MB of the feed's memory on the table (docs/feed.md,
"Memory"), for a path the feed does not take, since the table has no PySocks.

A deferred module is a stand-in in ``sys.modules``: the first attribute asked of it imports the
real module (which then takes its place in ``sys.modules`` and on its package) and answers from
it. Code that does use the module behaves as before, only later. The standard
``importlib.util.LazyLoader`` cannot do this on Python 3.11: an ``import`` statement reads the
module's ``__spec__``, which makes LazyLoader run the module at once.

Only the feed's own program (``python -m controller.feed``) defers anything: it is the one
process with a memory budget and no other use for these modules.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types

UNUSED_BY_THE_FEED = ("urllib.request",)

_loading = threading.Lock()


class DeferredModule(types.ModuleType):
    """Stands for a module not imported yet; any attribute not set on it loads the module."""

    def __getattr__(self, attribute: str) -> object:
        return getattr(load(self.__name__), attribute)


def load(name: str) -> types.ModuleType:
    """The real module ``name``, imported now if only its stand-in was there."""
    with _loading:  # paho's thread and ours may ask at once: import once
        if isinstance(sys.modules.get(name), DeferredModule):
            del sys.modules[name]
        return importlib.import_module(name)


def defer(name: str) -> None:
    """Put a stand-in for ``name`` in ``sys.modules`` and on its package, unless it is loaded."""
    if name in sys.modules:
        return
    stand_in = DeferredModule(name)
    package, _, child = name.rpartition(".")
    sys.modules[name] = stand_in
    if package:
        setattr(importlib.import_module(package), child, stand_in)


def defer_unused_imports() -> None:
    for name in UNUSED_BY_THE_FEED:
        defer(name)
