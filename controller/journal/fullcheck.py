"""The full journal check as its own low-priority process, for the running service's
background check (:mod:`controller.journal.background`).

``python -m controller.journal.fullcheck DIRECTORY SEQ HASH``, the HMAC key as hex on the first
line of stdin (an empty line: no key). It verifies the whole chain of ``DIRECTORY`` up to the
record ``SEQ`` with ``HASH`` (what the service's writer had appended when it started the check:
:func:`~controller.journal.verify.verify`'s ``until``) and prints one JSON line: the report
(``report``, as ``tablectl journal verify --json``) and ``seconds``.

Why a process and not a thread of the service: the check is minutes of hashing on a journal of
millions of records, and a thread would take the GIL from the table thread for all of it. The
process lowers its own priority first (``nice`` 19), so the table's threads keep the CPU, and it
never outlives the service: it exits as soon as its stdin, held open by the service, closes
(the service stopped or died). The key goes through the pipe, not the command line, which other
users can read in ``/proc``.
"""

from __future__ import annotations

import json
import os
import select
import sys
import threading
import time
from pathlib import Path

from controller.journal.errors import JournalIOError
from controller.journal.verify import verify

NICENESS = 19
"""The lowest CPU priority: the checker runs on what the table leaves."""
EXIT_USAGE = 2
EXIT_ORPHANED = 3
"""Stdin closed before the check ended: the service that started it is gone."""


def _lower_priority() -> None:
    """CPU priority ``nice`` 19 and, where the kernel has it, idle I/O priority (the checker
    reads gigabytes; the journal's own fsyncs must not wait behind it)."""
    try:  # absolute, not os.nice's increment: the service itself runs at Nice=-10
        os.setpriority(os.PRIO_PROCESS, 0, NICENESS)
    except OSError:
        pass
    try:  # ioprio_set(IOPRIO_WHO_PROCESS, self, IOPRIO_CLASS_IDLE << 13); Linux only
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        syscall_number = {"x86_64": 251, "aarch64": 30, "armv7l": 314}.get(os.uname().machine)
        if syscall_number is not None:
            libc.syscall(syscall_number, 1, 0, 3 << 13)
    except (OSError, AttributeError):
        pass


def _exit_when_orphaned() -> None:
    """Read stdin to its end, then leave at once: the service closed it (stopped or died)."""
    try:
        while sys.stdin.buffer.read(4096):
            pass
    except (OSError, ValueError):
        pass
    os._exit(EXIT_ORPHANED)


def _orphaned() -> bool:
    """Stdin is at its end now (the service closed it), whether or not the watch has read
    that yet: nothing but the end can make it readable, the service writes only the key. So a
    check that ends as its service goes is never reported to nobody, on a loaded machine as on
    an idle one."""
    try:
        readable, _, _ = select.select([sys.stdin.buffer], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[1].isdigit():
        print("usage: python -m controller.journal.fullcheck DIRECTORY SEQ HASH "
              "(HMAC key hex on stdin)", file=sys.stderr)
        return EXIT_USAGE
    directory, seq, hash_ = Path(argv[0]), int(argv[1]), argv[2]
    _lower_priority()
    key_line = sys.stdin.buffer.readline().strip()
    key = bytes.fromhex(key_line.decode("ascii")) if key_line else None
    threading.Thread(target=_exit_when_orphaned, name="orphan-watch", daemon=True).start()
    started = time.monotonic()
    try:
        report = verify([directory], hmac_key=key, until=(seq, hash_))
    except JournalIOError as error:  # a file unreadable, or deleted by retention meanwhile
        if _orphaned():
            return EXIT_ORPHANED
        print(json.dumps({"error": str(error),
                          "seconds": round(time.monotonic() - started, 3)}), flush=True)
        return 0
    if _orphaned():
        return EXIT_ORPHANED
    print(json.dumps({"report": report.to_dict(), "nice": os.getpriority(os.PRIO_PROCESS, 0),
                      "seconds": round(time.monotonic() - started, 3)}), flush=True)
    return 0


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    # not sys.exit: the orphan watch is blocked reading stdin, which an interpreter shutting
    # down cannot finalise (it aborts)
    os._exit(status)
