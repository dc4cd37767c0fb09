"""The daily retention pass: a service that runs for months still lets old journal files go.

Start-up applies retention once (:mod:`.pipeline`); a table that is never restarted would
otherwise keep every file for ever, until the SD card is full and the journal can no longer
write, which stops the table. So :class:`RetentionTimer` applies it again every
``interval`` seconds (a day) on its own thread, for as long as the service runs.

A pass is :func:`controller.journal.retention.apply_retention`: it holds the writer's lock
only to read which file is being written and to append its checkpoint (its scan, deletions and
directory fsync run beside the table's appends, never on the file being written), journals the
checkpoint before it deletes, and ages files by the writer's own clock. A pass that fails is
logged and changes nothing else: the service goes on, and so does the next pass. Why a thread
of its own and not the health loop: a pass deletes and fsyncs files, and the health loop must
keep pinging the watchdog meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import structlog

from controller.journal.errors import JournalError
from controller.journal.retention import RetentionResult, apply_retention
from controller.journal.writer import JournalWriter

log = structlog.get_logger(__name__)

RETENTION_INTERVAL_SECONDS = 24 * 60 * 60.0
"""A pass a day: retention is counted in days (``journal.retention_days``)."""

Apply = Callable[..., RetentionResult]
Outcome = RetentionResult | Exception


class RetentionTimer:
    """``RetentionTimer(writer, keep_days=N)``; :meth:`start`, :meth:`close`.

    ``interval`` (seconds between passes), ``apply`` (the pass) and ``on_pass`` (called with
    each pass's result or exception, on the timer's thread) are seams for the tests."""

    def __init__(self, writer: JournalWriter, *, keep_days: int,
                 interval: float = RETENTION_INTERVAL_SECONDS, apply: Apply = apply_retention,
                 on_pass: Callable[[Outcome], None] | None = None) -> None:
        if interval <= 0:
            raise ValueError(f"retention interval must be positive, got {interval}")
        self.writer = writer
        self.keep_days = keep_days
        self.interval = interval
        self._apply = apply
        self._on_pass = on_pass
        self.passes = 0
        self.last_error = ""
        """Why the last pass failed ("" when it did not)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="journal-retention", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        """Stop; a pass in progress is finished first."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.run_pass()

    def run_pass(self) -> RetentionResult | None:
        """One pass now; the result, or ``None`` when it failed (logged, never raised)."""
        outcome: Outcome
        try:
            outcome = self._apply(self.writer, keep_days=self.keep_days)
        except JournalError as error:  # e.g. a file that cannot be deleted: it stays
            outcome = error
            log.error("journal retention failed", error=str(error), keep_days=self.keep_days)
        except Exception as error:  # a bug: logged in full, and the service goes on
            outcome = error
            log.exception("journal retention failed", error=repr(error),
                          keep_days=self.keep_days)
        else:
            if outcome.deleted:
                log.info("journal retention", deleted=[path.name for path in outcome.deleted],
                         keep_days=self.keep_days)
        self.passes += 1
        self.last_error = str(outcome) if isinstance(outcome, Exception) else ""
        if self._on_pass is not None:
            self._on_pass(outcome)
        return None if isinstance(outcome, Exception) else outcome

    def status(self) -> dict[str, Any]:
        return {"retention_days": self.keep_days, "passes": self.passes,
                "last_error": self.last_error or None}
