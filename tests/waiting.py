"""The one way a test waits (issue 35): for a condition to hold, or for an item on a queue.

A test never sleeps to synchronise and never waits on a tight bound: on a busy 2-core machine
(CI beside other work) a thing that is coming can take seconds, so the default bound is
generous, and the wait ends as soon as the condition holds, so the bound costs nothing when the
test passes. A wait that runs out fails with what was awaited and the last value it saw, which
is what a reader of a failed run needs first.

``tests/test_layout.py`` keeps this the only module of ``tests/`` that defines such a helper.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from typing import TypeVar

WAIT_S = 60.0
"""The default bound: for something that is coming, on a loaded machine. Only a failing test
spends it."""
FIRST_PAUSE_S = 0.001
LONGEST_PAUSE_S = 0.1
"""Polling starts at a millisecond, so a condition that is about to hold is seen at once, and
doubles to a tenth of a second, so a long wait does not spin on a shared machine."""

T = TypeVar("T")
Item = TypeVar("Item")


class WaitTimeout(AssertionError):
    """A bounded wait ran out. An ``AssertionError``, so pytest reports it as the test's
    failure, with :attr:`what` was awaited and the :attr:`last` value seen."""

    def __init__(self, what: str, timeout: float, last: object) -> None:
        super().__init__(f"not within {timeout:g} s: {what} (last seen: {last!r})")
        self.what = what
        self.timeout = timeout
        self.last = last


def pauses(first: float = FIRST_PAUSE_S, longest: float = LONGEST_PAUSE_S) -> Callable[[], float]:
    """The pause before each next poll: ``first``, doubling up to ``longest``."""
    current = first / 2

    def next_pause() -> float:
        nonlocal current
        current = min(current * 2, longest)
        return current

    return next_pause


def wait_until(probe: Callable[[], T], what: str, *, timeout: float = WAIT_S,
               check: Callable[[T], bool] = bool) -> T:
    """Call ``probe`` until ``check`` passes its value (by default: until the value is truthy),
    and return that value; raise :class:`WaitTimeout` naming ``what`` and the last value after
    ``timeout`` seconds. ``probe`` may read state another thread or process changes (a file, a
    database, an attribute); an exception it raises is the test's failure, not a retry."""
    deadline = time.monotonic() + timeout
    next_pause = pauses()
    while True:
        value = probe()
        if check(value):
            return value
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WaitTimeout(what, timeout, value)
        time.sleep(min(next_pause(), remaining))


def wait_for(items: queue.Queue[Item], match: Callable[[Item], bool] | type,
             what: str | None = None, *, timeout: float = WAIT_S,
             seen: list[Item] | None = None) -> Item:
    """The next item of ``items`` that ``match`` accepts (a predicate, or a type the item must
    be an instance of); items taken on the way are appended to ``seen`` when given. Raises
    :class:`WaitTimeout` naming ``what`` (by default the type or the predicate) and the last
    item taken after ``timeout`` seconds."""
    if isinstance(match, type):
        kind = match
        what = what or f"a {kind.__name__}"

        def accepts(item: Item) -> bool:
            return isinstance(item, kind)
    else:
        accepts = match
        what = what or getattr(match, "__name__", repr(match))
    deadline = time.monotonic() + timeout
    last: Item | None = None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WaitTimeout(what, timeout, last)
        try:
            item = items.get(timeout=remaining)
        except queue.Empty:
            continue
        if accepts(item):
            return item
        last = item
        if seen is not None:
            seen.append(item)


def wait_draining(items: queue.Queue[Item], condition: Callable[[], bool], what: str, *,
                  timeout: float = WAIT_S, seen: list[Item] | None = None) -> None:
    """:func:`wait_until` ``condition``, first taking off ``items`` whatever came meanwhile
    (appended to ``seen`` when given): for a condition that a queue's events announce, so the
    queue is read while the test waits and the condition is judged after the events so far."""
    def after_the_items() -> bool:
        while True:
            try:
                item = items.get_nowait()
            except queue.Empty:
                return condition()
            if seen is not None:
                seen.append(item)

    wait_until(after_the_items, what, timeout=timeout)
