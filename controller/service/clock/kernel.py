"""What the kernel says of its own wall clock: synchronised or not, and how far off it may be.

Surveillance holds the journal's times against camera footage, so a record's time is only as
good as the clock that stamped it. A Raspberry Pi has no battery clock (before the Pi 5, and
most Pi 5s run without one): after a power cut it boots with the time ``fake-hwclock`` saved at
shutdown and jumps when the network time arrives. The kernel knows whether a time daemon has
disciplined it: ``adjtimex(2)`` with ``modes = 0`` only reads (no privilege needed) and returns
the clock state (``TIME_ERROR`` while unsynchronised), the ``STA_UNSYNC`` status bit, and the
daemon's estimate of the maximum and the estimated error in microseconds.

``adjtimex`` is not in the standard library, so it is called through :mod:`ctypes` with the
``struct timex`` of ``<sys/timex.h>`` (``long`` fields, so the same declaration serves a 32-bit
and a 64-bit Pi). Which daemon disciplines the clock is what systemd can tell without D-Bus:
``systemd-timesyncd`` touches ``/run/systemd/timesync/synchronized`` once synchronised, and
chrony keeps its pid file under ``/run/chrony``.

:class:`ClockSource` is the seam the tests use to present a synchronised, unsynchronised,
stepped or badly bounded clock without changing this machine's clock.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

STA_UNSYNC = 0x0040
"""``status`` bit: the clock is not synchronised (``<sys/timex.h>``)."""
TIME_ERROR = 5
"""``adjtimex`` return value: the clock is not synchronised."""
BOOT_ID_PATH = Path("/proc/sys/kernel/random/boot_id")
TIMESYNCD_MARKER = Path("/run/systemd/timesync/synchronized")
CHRONY_PID_FILES = (Path("/run/chrony/chronyd.pid"), Path("/run/chronyd.pid"))
PAIR_ATTEMPTS = 5
"""How many times :func:`read_wall_and_mono` may read the pair for a tight one."""
PAIR_TIGHT_NS = 100_000
"""A pair read within 0.1 ms is taken at once."""


class _Timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


class _Timex(ctypes.Structure):
    """``struct timex`` (Linux, glibc): every field up to ``tai``, then the reserved padding."""

    _fields_ = [
        ("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
        ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
        ("constant", ctypes.c_long), ("precision", ctypes.c_long),
        ("tolerance", ctypes.c_long), ("time", _Timeval), ("tick", ctypes.c_long),
        ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long), ("shift", ctypes.c_int),
        ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
        ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int),
        ("_reserved", ctypes.c_int * 11),
    ]


class ClockUnavailable(OSError):
    """The kernel clock's state could not be read (no ``adjtimex`` in this libc, a seccomp
    filter): the clock then counts as unsynchronised, never as good."""


@dataclass(frozen=True, slots=True)
class ClockReading:
    """One look at the clocks: both at the same instant, and the kernel's verdict.

    ``max_error_us`` is the kernel's bound on how far the wall clock may be from true time
    (``maxerror``; it grows by 500 ppm while no daemon updates it), ``est_error_us`` the
    daemon's estimate. ``None`` where the kernel could not be asked."""

    wall_ns: int
    mono_ns: int
    synchronised: bool
    max_error_us: int | None
    est_error_us: int | None
    source: str
    """``systemd-timesyncd``, ``chrony``, or ``unknown``."""
    boot_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"wall_ns": self.wall_ns, "mono_ns": self.mono_ns,
                "synchronised": self.synchronised, "max_error_us": self.max_error_us,
                "est_error_us": self.est_error_us, "source": self.source,
                "boot_id": self.boot_id}


class ClockSource(Protocol):
    def read(self) -> ClockReading: ...


@functools.cache
def _adjtimex() -> Any:
    """libc's ``adjtimex``, looked up once: ``find_library`` runs ``ldconfig -p`` (and more) in
    subprocesses, and the clock monitor asked every second, which was most of the idle
    service's wake-ups and CPU (issue 27). A lookup that fails is not cached: raised each
    time."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name, use_errno=True).adjtimex
    except (OSError, AttributeError) as error:
        raise ClockUnavailable(f"adjtimex is not available: {error}") from error


def read_wall_and_mono(wall: Callable[[], int] = time.time_ns,
                       mono: Callable[[], int] = time.monotonic_ns) -> tuple[int, int]:
    """The wall clock and the monotonic clock at one instant, as near as can be read.

    Read back to back, the two could be a preemption apart: on a loaded machine another thread
    took the interpreter, or the kernel the CPU, between them, and the monitor saw the wall
    clock "step" by that delay (-27.6 ms, then +27.6 ms a second later: issue 27's loaded
    runs), a false step in surveillance's log. So the wall clock is read between two monotonic
    reads, and the pair with the tightest bracket of :data:`PAIR_ATTEMPTS` is kept (the first
    within :data:`PAIR_TIGHT_NS`), its monotonic time the bracket's middle."""
    best: tuple[int, int, int] | None = None
    for _ in range(PAIR_ATTEMPTS):
        before = mono()
        now = wall()
        after = mono()
        width = after - before
        if best is None or width < best[0]:
            best = (width, now, before + width // 2)
        if width <= PAIR_TIGHT_NS:
            break
    assert best is not None
    return best[1], best[2]


def read_adjtimex() -> tuple[int, int, int, int]:
    """``(state, status, maxerror_us, esterror_us)`` from a read-only ``adjtimex`` call."""
    adjtimex = _adjtimex()
    timex = _Timex()  # modes = 0: read only
    state = adjtimex(ctypes.byref(timex))
    if state < 0:
        errno = ctypes.get_errno()
        raise ClockUnavailable(errno, f"adjtimex failed (errno {errno})")
    return int(state), int(timex.status), int(timex.maxerror), int(timex.esterror)


def time_source(timesyncd_marker: Path = TIMESYNCD_MARKER,
                chrony_pid_files: tuple[Path, ...] = CHRONY_PID_FILES) -> str:
    """The daemon that disciplines the clock, as far as systemd's files tell."""
    if timesyncd_marker.exists():
        return "systemd-timesyncd"
    if any(path.exists() for path in chrony_pid_files):
        return "chrony"
    return "unknown"


def boot_id(path: Path = BOOT_ID_PATH) -> str:
    """This boot's id: monotonic times are comparable only within one boot."""
    try:
        return path.read_text(encoding="ascii").strip()
    except OSError:
        return "unknown"


class KernelClock:
    """The real clock source: ``time_ns``/``monotonic_ns`` read back to back, then
    ``adjtimex``. The boot id is read once (it does not change while we run)."""

    def __init__(self) -> None:
        self.boot_id = boot_id()

    def read(self) -> ClockReading:
        wall, mono = read_wall_and_mono()
        try:
            state, status, max_error, est_error = read_adjtimex()
        except ClockUnavailable:
            return ClockReading(wall, mono, False, None, None, time_source(), self.boot_id)
        synchronised = state != TIME_ERROR and not status & STA_UNSYNC
        return ClockReading(wall, mono, synchronised, max_error, est_error, time_source(),
                            self.boot_id)
