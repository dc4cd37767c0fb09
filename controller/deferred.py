"""Modules that a process's libraries import and the process never uses, loaded only when used.

A deferred module is a stand-in in ``sys.modules``: the first attribute asked of it imports the
real module (which then takes its place in ``sys.modules`` and on its package) and answers from
it. Code that does use the module behaves as before, only later. The standard
``importlib.util.LazyLoader`` cannot do this on Python 3.11: an ``import`` statement reads the
module's ``__spec__``, which makes LazyLoader run the module at once.

Only a program with a memory budget defers anything, and only before the library that imports
the module is imported: the floor feed (``urllib.request``, :mod:`controller.feed.deferred`)
and the table service (``asyncio``, which structlog imports for the async logging methods the
service never calls: ``controller.cli.DEFERRED_BY_THE_SERVICE``).
"""

from __future__ import annotations

import importlib
import sys
import threading
import types

_loading = threading.Lock()


class DeferredModule(types.ModuleType):
    """Stands for a module not imported yet; any attribute not set on it loads the module."""

    def __getattr__(self, attribute: str) -> object:
        return getattr(load(self.__name__), attribute)


def load(name: str) -> types.ModuleType:
    """The real module ``name``, imported now if only its stand-in was there."""
    with _loading:  # two threads may ask at once: import once
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
