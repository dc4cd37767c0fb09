"""The running service's full journal check, in the background (issue 27: "the full check
available on demand and in the background").

The start-up check reads only what came after the verified mark (:mod:`.startup`), so READY
does not grow with the journal; what lies behind the mark (a middle file altered, a record
rewritten after it was verified) is found by the full check. :class:`BackgroundCheck` runs it
after READY and then every ``every`` seconds, each time as a separate process at the lowest
priority (:mod:`.fullcheck`: a thread would take the GIL from the table thread for minutes),
one at a time, killed when the service stops. Its outcome goes to ``on_outcome`` (the service
journals it as ``journal_check`` and raises a break as the start-up check does); a checker that
crashed, was killed or printed nothing usable is an outcome too (``failed``), logged, and the
next try is at the next interval: never a tight loop.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any

import structlog

from controller.journal.policy import JournalEvent
from controller.journal.writer import JournalWriter

log = structlog.get_logger(__name__)

OUTPUT_LIMIT = 1 << 20
"""Bytes of the checker's output kept: its one JSON line, or the tail of a crash."""
KILL_WAIT_SECONDS = 30.0
"""How long a stop waits for a killed checker to be reaped (it cannot ignore SIGKILL)."""


class CheckOutcome(str, Enum):
    """What one background check concluded (``outcome`` of the ``journal_check`` record)."""

    OK = "ok"
    """The whole chain intact up to the record the writer had appended when it began."""
    DAMAGED = "damaged"
    """A break: ``problem`` names the first (kind, file, line, seq, detail)."""
    UNCHECKED = "unchecked"
    """Intact as far as it could be checked, but not everything was (``unchecked``)."""
    FAILED = "failed"
    """The checker did not conclude: crashed, killed, or a file vanished under it (retention);
    not damage. Tried again at the next interval."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One background check: what ``journal_check`` records and ``round.status`` shows."""

    outcome: CheckOutcome
    started: str
    """UTC, ISO 8601."""
    seconds: float
    until_seq: int
    records: int = 0
    files: int = 0
    first_seq: int | None = None
    last_seq: int | None = None
    problem: dict[str, Any] | None = None
    unchecked: tuple[str, ...] = field(default=())
    error: str | None = None
    nice: int | None = None
    """The checker's CPU priority as it ran (19 unless the sandbox refused ``setpriority``)."""

    def to_json(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "started": self.started,
                "seconds": self.seconds, "until_seq": self.until_seq,
                "records": self.records, "files": self.files, "first_seq": self.first_seq,
                "last_seq": self.last_seq, "problem": self.problem,
                "unchecked": list(self.unchecked), "error": self.error, "nice": self.nice}


def parse_output(output: bytes, returncode: int, *, started: str, seconds: float,
                 until_seq: int) -> CheckResult:
    """The checker's last output line as a :class:`CheckResult`; anything else is ``failed``
    with the exit status and the output's tail (a traceback's last line names the cause)."""
    lines = output.decode("utf-8", "replace").strip().splitlines()
    body: Any = None
    if lines:
        try:
            body = json.loads(lines[-1])
        except ValueError:
            body = None
    if returncode != 0 or not isinstance(body, dict):
        tail = lines[-1][:300] if lines else "no output"
        return CheckResult(CheckOutcome.FAILED, started, seconds, until_seq,
                           error=f"checker exit status {returncode}: {tail}")
    if "error" in body:
        return CheckResult(CheckOutcome.FAILED, started, seconds, until_seq,
                           error=str(body["error"])[:300])
    report = body.get("report") or {}
    problem = report.get("problem")
    unchecked = tuple(str(u) for u in report.get("unchecked") or ())
    outcome = CheckOutcome.DAMAGED if problem else (
        CheckOutcome.UNCHECKED if unchecked else CheckOutcome.OK)
    return CheckResult(outcome, started, float(body.get("seconds", seconds)), until_seq,
                       records=int(report.get("records") or 0),
                       files=len(report.get("files") or ()),
                       first_seq=report.get("first_seq"), last_seq=report.get("last_seq"),
                       problem=problem, unchecked=unchecked,
                       nice=body["nice"] if isinstance(body.get("nice"), int) else None)


def record_result(writer: JournalWriter, result: CheckResult) -> int:
    """Journal ``journal_check`` (synced like the start-up check's findings); its seq."""
    return writer.append(JournalEvent.CHECKED.value, result.to_json(), money=True).seq


class BackgroundCheck:
    """``BackgroundCheck(writer, key, every=..., first_after=..., on_outcome=...)``;
    :meth:`start`, :meth:`close`, :meth:`status`. ``every`` ``None``: switched off (nothing
    runs; the status says so)."""

    def __init__(self, writer: JournalWriter, key: bytes | None, *, every: float | None,
                 first_after: float, on_outcome: Callable[[CheckResult], None],
                 python: str = sys.executable) -> None:
        self.writer, self.key, self.every, self.first_after = writer, key, every, first_after
        self.on_outcome, self.python = on_outcome, python
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._last: CheckResult | None = None
        self._next_at: float | None = None
        self._runs = 0
        self._thread = threading.Thread(target=self._run, name="journal-background-check",
                                        daemon=True)

    def start(self) -> None:
        if self.every is not None:
            self._next_at = time.monotonic() + self.first_after
            self._thread.start()

    def run_now(self) -> None:
        """Check now instead of at the next interval (on demand); a check already running is
        not doubled: this one counts."""
        self._wake.set()

    def close(self) -> None:
        """Stop the schedule and kill a running checker (it only reads: nothing is lost)."""
        self._stop.set()
        self._wake.set()
        with self._lock:
            process = self._process
        if process is not None and process.poll() is None:
            process.kill()
        if self._thread.is_alive():
            self._thread.join(KILL_WAIT_SECONDS)

    @property
    def running(self) -> bool:
        with self._lock:
            return self._process is not None

    def status(self) -> dict[str, Any]:
        """For ``round.status``: on or off, its period, running now, the last outcome."""
        with self._lock:
            last, next_at, running, runs = self._last, self._next_at, \
                self._process is not None, self._runs
        return {"enabled": self.every is not None,
                "every_hours": None if self.every is None else round(self.every / 3600, 3),
                "running": running, "runs": runs,
                "next_in_seconds": None if next_at is None or running
                else max(0, round(next_at - time.monotonic())),
                "last": None if last is None else last.to_json()}

    def _run(self) -> None:
        assert self.every is not None
        delay = self.first_after
        while True:
            self._wake.wait(delay)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                result = self._check_once()
            except Exception as error:  # a bug here must not end the schedule
                log.exception("background journal check could not run")
                result = CheckResult(CheckOutcome.FAILED, _utc_now(), 0.0, 0,
                                     error=f"{type(error).__name__}: {error}")
            if self._stop.is_set():
                return  # killed by the stop: nothing concluded, nothing journaled
            with self._lock:
                self._last, self._runs = result, self._runs + 1
                self._next_at = time.monotonic() + self.every
            if result.outcome is CheckOutcome.FAILED:
                log.warning("background journal check failed; tried again at the next "
                            "interval", error=result.error, every_hours=self.every / 3600)
            try:
                self.on_outcome(result)
            except Exception:
                log.exception("background journal check outcome not handled")
            delay = self.every

    def _check_once(self) -> CheckResult:
        with self.writer.lock:  # the writer's last record: on file before append returned
            seq, last_hash = self.writer.seq, self.writer.last_hash
        started, clock = _utc_now(), time.monotonic()
        with self._lock:
            if self._stop.is_set():
                return CheckResult(CheckOutcome.FAILED, started, 0.0, seq, error="stopped")
            self._process = process = subprocess.Popen(
                [self.python, "-m", "controller.journal.fullcheck",
                 str(Path(self.writer.directory).resolve()), str(seq), last_hash],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            assert process.stdin is not None and process.stdout is not None
            try:  # the pipe stays open: its end tells the checker the service is gone
                process.stdin.write((self.key.hex() if self.key else "").encode() + b"\n")
                process.stdin.flush()
            except BrokenPipeError:
                pass
            output = process.stdout.read(OUTPUT_LIMIT)
            while process.stdout.read(1 << 16):  # a runaway's rest, so it can exit
                pass
            returncode = process.wait()
        finally:
            for pipe in (process.stdin, process.stdout):
                try:
                    if pipe is not None:
                        pipe.close()
                except OSError:  # the key still buffered for a checker that died at once
                    pass
            if process.poll() is None:
                process.kill()
                process.wait(KILL_WAIT_SECONDS)
            with self._lock:
                self._process = None
        return parse_output(output, returncode, started=started,
                            seconds=round(time.monotonic() - clock, 3), until_seq=seq)


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
