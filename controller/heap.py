"""The service's heap over months: glibc's malloc arenas, its trimming, and the collector.

Issue 27 measured the service's resident memory growing from 35 MB at READY to 41 MB after
1,000 rounds (``/proc/PID/smaps``): about 2 MB of it in glibc's per-thread malloc arenas. Every
thread that allocates gets an arena of its own at its first allocation (up to eight a core),
and each keeps its freed memory for its own thread, so a service with ten threads
holds ten sets of free lists, each with its own high-water mark. And cycles of objects that
outlive a round (a fresh ``transitions`` machine per round boundary) are freed only by a full
collection, which waits for the long-lived generation to grow by a quarter: with the 150,000
objects of start-up in that generation, that is a long wait.

So :func:`tune_for_service`, called by ``tablectl run`` before the service starts any thread:

* limits glibc to :data:`ARENAS` arena (``mallopt(M_ARENA_MAX)``): one set of free lists for
  the whole process, which the threads share under glibc's lock (the service's threads take
  turns on the GIL anyway);

and :class:`Housekeeper`, run by ``tablectl run``'s main thread (otherwise asleep until the
stop signal) every :data:`HOUSEKEEPING_SECONDS`:

* freezes the objects of start-up once (``gc.freeze``): they are never garbage, so the
  collector stops counting and walking them, and a full collection again comes after a
  quarter's growth of what the rounds left;
* hands free heap pages back to the kernel (``malloc_trim(0)``) when the heap holds at least
  :data:`TRIM_FREE_BYTES` unused (``mallinfo2``): glibc returns only the top of the heap by
  itself, never free pages below a live allocation.

Both are glibc's: on another C library (musl) they are skipped, and the service runs as before.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

ARENAS = 1
"""glibc malloc arenas for the whole service (see the module doc)."""
M_ARENA_MAX = -8
"""``mallopt`` parameter number of ``M_ARENA_MAX`` (``<malloc.h>``)."""
HOUSEKEEPING_SECONDS = 30.0
"""How often the main thread looks at the heap: 0.03 wake-ups a second."""
TRIM_FREE_BYTES = 1 << 20
"""Free bytes in the heap (``mallinfo2().fordblks``) from which a trim is worth its walk."""


class _Mallinfo2(ctypes.Structure):
    """``struct mallinfo2`` (glibc 2.33 and later): ``size_t`` fields."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


class HeapTuning(str, Enum):
    """What :func:`tune_for_service` could do here."""

    APPLIED = "applied"
    NOT_GLIBC = "not glibc"


@functools.cache
def _libc() -> ctypes.CDLL:
    """The C library already loaded into this process (no ``find_library``: it runs
    ``ldconfig`` in a subprocess), looked up once."""
    return ctypes.CDLL(None)


def _glibc_function(name: str) -> Callable[..., int] | None:
    try:
        function: Callable[..., int] = getattr(_libc(), name)
    except AttributeError:  # not glibc (musl has no mallopt, malloc_trim, mallinfo2)
        return None
    return function


def tune_for_service(arenas: int = ARENAS) -> HeapTuning:
    """Limit glibc to ``arenas`` malloc arenas; call before any thread is started (an arena a
    thread already has stays). ``mallopt`` returns 1 on success."""
    mallopt = _glibc_function("mallopt")
    if mallopt is None or mallopt(M_ARENA_MAX, arenas) != 1:
        return HeapTuning.NOT_GLIBC
    return HeapTuning.APPLIED


def heap_free_bytes() -> int | None:
    """Bytes free inside glibc's arenas (``mallinfo2().fordblks``), ``None`` without glibc."""
    mallinfo2 = _glibc_function("mallinfo2")
    if mallinfo2 is None:
        return None
    mallinfo2.restype = _Mallinfo2  # type: ignore[attr-defined]
    info: _Mallinfo2 = mallinfo2()
    return int(info.fordblks)


def malloc_trim() -> bool:
    """``malloc_trim(0)``: free pages of every arena back to the kernel; ``True`` if any were."""
    trim = _glibc_function("malloc_trim")
    return trim is not None and trim(0) == 1


@dataclass(frozen=True, slots=True)
class HousekeepingResult:
    """What one :meth:`Housekeeper.run` did."""

    froze: bool
    trimmed: bool
    free_bytes: int | None


class Housekeeper:
    """Freezes start-up's objects once, then trims the heap when worth it, at most once an
    ``interval`` (the clock is a seam for the tests); see the module doc."""

    def __init__(self, interval: float = HOUSEKEEPING_SECONDS,
                 threshold: int = TRIM_FREE_BYTES,
                 clock: Callable[[], float] = time.monotonic,
                 free_bytes: Callable[[], int | None] = heap_free_bytes,
                 trim: Callable[[], bool] = malloc_trim) -> None:
        self.interval, self.threshold = interval, threshold
        self._clock, self._free_bytes, self._trim = clock, free_bytes, trim
        self._last: float | None = None
        self.frozen = False
        self.trims = 0

    def run(self) -> HousekeepingResult | None:
        """Do what is due; ``None`` if called again within ``interval`` of the last run."""
        now = self._clock()
        if self._last is not None and now - self._last < self.interval:
            return None
        self._last = now
        froze = not self.frozen
        if froze:
            gc.collect()  # start-up's garbage first, so that only live objects are frozen
            gc.freeze()
            self.frozen = True
        free = self._free_bytes()
        trimmed = free is not None and free >= self.threshold and self._trim()
        self.trims += trimmed
        return HousekeepingResult(froze, trimmed, free)
