"""Lines of a child process's text stream, each waited for with a bound: the tests' one way to
read a line a process prints at a time of its own choosing.

``select()`` on a buffered text stream misses lines: the first ``readline()`` pulls every line
already written into Python's buffer, so a second line that arrived with the first is in the
buffer, not in the pipe, and ``select()`` waits for more bytes until its timeout (on a loaded
machine the two lines often arrive together). A thread that reads the stream line by line into
a queue has no such blind spot, and the wait is for the line itself.
"""

from __future__ import annotations

import queue
import threading
from typing import IO

LINE_SECONDS = 60.0
"""Generous: a bound for a line that is coming, not a measure of how fast it comes (a 2-core
machine running the suite beside other work takes seconds to start a Python process)."""


class LineReader:
    """``LineReader(stream)``; :meth:`line` is the next line (with its newline), or fails the
    test after ``seconds``. The thread ends at the stream's end (EOF is an empty line)."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True,
                                        name="test-line-reader")
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        try:
            for line in iter(stream.readline, ""):
                self._lines.put(line)
        except (OSError, ValueError):  # the stream was closed under us: the end
            pass
        self._lines.put("")

    def line(self, seconds: float = LINE_SECONDS) -> str:
        try:
            return self._lines.get(timeout=seconds)
        except queue.Empty:
            raise AssertionError(f"no line within {seconds} s") from None
