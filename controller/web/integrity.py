"""The journal's integrity at a glance: the real verifier, run in the background.

At start (and every hour) the whole journal is verified (:func:`controller.journal.verify.verify`,
with the HMAC key when this process may read it) in a child interpreter, so its memory goes
with the child; every second in between, in this process, only what was added, from the last
verified record (the verifier's incremental ``since`` mark). The console shows the last report: verified
up to which record, HMAC checked or not, and the first damage with its place. The index is
brought level on the same thread, so one thread reads the journal and none of it blocks a page.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import sqlite3
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import structlog

from controller.journal.errors import JournalError
from controller.journal.head import Mark
from controller.journal.verify import VerifyReport, verify
from controller.web.index import JournalIndex

log = structlog.get_logger(__name__)
POLL_SECONDS = 1.0
FULL_CHECK_SECONDS = 3600.0
"""A full re-check every hour: an edit behind the incremental mark is found within that."""


@dataclass(frozen=True, slots=True)
class Integrity:
    """The last verification, as the console shows it."""

    checked_at: float | None
    report: VerifyReport | None
    error: str | None
    """The check could not run (unreadable file): not damage, but not proof either."""

    @property
    def verified_to(self) -> int | None:
        return None if self.report is None else self.report.last_seq


class JournalWatcher:
    """One background thread: verify the journal and bring the index level, again and again."""

    def __init__(self, journal_dir: Path, index: JournalIndex, key: bytes | None,
                 poll: float = POLL_SECONDS) -> None:
        self.journal_dir = journal_dir
        self.index = index
        self.key = key
        self.poll = poll
        self.integrity = Integrity(None, None, None)
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._mark: Mark | None = None
        self._full_at = 0.0
        self._thread = threading.Thread(target=self._run, name="web-journal", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def step(self) -> None:
        """One pass: index, then verify (incrementally when the last pass was intact)."""
        try:
            self.index.update()
        except (OSError, JournalError, sqlite3.Error) as error:
            log.warning("journal index update failed", error=str(error))
        full = self._mark is None or time.monotonic() - self._full_at > FULL_CHECK_SECONDS
        try:
            report = _verify_apart([self.journal_dir], self.key) if full else \
                verify([self.journal_dir], hmac_key=self.key, since=self._mark)
        except (OSError, JournalError) as error:
            self.integrity = Integrity(time.time(), self.integrity.report, str(error))
            return
        if full:
            self._full_at = time.monotonic()
        if report.ok and report.mark is not None:
            self._mark = report.mark
        elif not report.ok:
            self._mark = None
        previous = self.integrity.report
        if previous is not None and report.ok and not full and previous.first_seq is not None:
            report = _carry_start(report, previous)
        self.integrity = Integrity(time.time(), report, None)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except Exception as error:  # noqa: BLE001 (a bug must not stop the checks)
                log.exception("journal check failed")
                self.integrity = Integrity(time.time(), self.integrity.report,
                                           f"the check failed: {error}")
            _give_back_memory()
            self.ready.set()
            self._stop.wait(self.poll)


def _verify_apart(paths: list[Path], key: bytes | None) -> VerifyReport:
    """The full check in a child interpreter: the verifier holds a whole journal file (64 MiB)
    and an entry per line while it checks it, and that heap, once freed, would stay this
    process's resident memory for good (fragmented). The child returns only the report."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        return pool.apply(verify, (paths,), {"hmac_key": key})


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


_LIBC = _libc()


def _give_back_memory() -> None:
    """Return the heap that a pass freed to the system (glibc ``malloc_trim``): reading a
    journal file allocates and frees tens of megabytes, which glibc would otherwise keep as
    this process's resident memory (docs/web.md, "Measured"). Elsewhere: nothing to do."""
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is not None:
        trim(0)


def _carry_start(report: VerifyReport, previous: VerifyReport) -> VerifyReport:
    """An incremental report counts from the mark; the console shows the whole span."""
    return replace(report, first_seq=previous.first_seq, anchor=previous.anchor,
                   records=previous.records + max(0, report.records - 1))
