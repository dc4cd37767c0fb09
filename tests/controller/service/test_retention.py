"""The service's daily retention pass (issue 6: a service that runs for months must not keep
every journal file): it runs on its interval without being asked, deletes what has expired by
the journal's own clock while the journal still verifies, and a failing pass is logged and
followed by the next one."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from controller.journal import Anchor, Durability, JournalWriter, verify
from controller.journal.errors import JournalIOError
from controller.journal.retention import RetentionResult, apply_retention
from controller.service.wiring import retention as retention_module
from controller.service.wiring.retention import (
    RETENTION_INTERVAL_SECONDS,
    Outcome,
    RetentionTimer,
)
from tests.controller.journal.conftest import FakeClock, deal_round

PASS_SECONDS = 0.05
"""The interval under test (a day in the service)."""
WAIT_SECONDS = 10.0


@pytest.fixture(autouse=True)
def uncached_loggers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Loggers read the current structlog configuration on every call, so ``capture_logs``
    sees what the timer's thread logs even after a CLI test configured caching. The timer's
    module logger is replaced by a fresh one too: one cached by an earlier test (a service run
    while a CLI test's caching was on) kept that test's processors, and the error went to
    stderr instead of ``capture_logs`` (seen in a full run: ``[] == ['journal retention
    failed']``)."""
    saved = structlog.get_config()
    structlog.configure(cache_logger_on_first_use=False)
    monkeypatch.setattr(retention_module, "log", structlog.get_logger(retention_module.__name__))
    yield
    structlog.configure(**saved)


@pytest.fixture(name="clock")
def fixture_clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(name="writer")
def fixture_writer(tmp_path: Path, clock: FakeClock) -> Iterator[JournalWriter]:
    """A journal with one file per day for three days (rounds d0, d1, d2), on the fake clock;
    the clock then stands at the start of day 3."""
    writer = JournalWriter(tmp_path / "journal", table_id="T1", clock=clock,
                           monotonic_ns=clock.monotonic_ns, durability=Durability.NONE)
    for day in range(3):
        deal_round(writer, f"d{day}")
        clock.advance(days=1)
    yield writer
    writer.close()


class Passes:
    """Each pass's outcome and when it ended, as the timer's ``on_pass`` hook reports them."""

    def __init__(self) -> None:
        self.outcomes: queue.Queue[tuple[float, Outcome]] = queue.Queue()
        self.status: Callable[[], dict[str, Any]] | None = None
        """The timer's status, read on its thread as each pass ends (:attr:`statuses`): read
        later by the test, a loaded machine may already have run the next pass."""
        self.statuses: list[dict[str, Any]] = []

    def __call__(self, outcome: Outcome) -> None:
        if self.status is not None:
            self.statuses.append(self.status())
        self.outcomes.put((time.monotonic(), outcome))

    def next(self) -> tuple[float, Outcome]:
        return self.outcomes.get(timeout=WAIT_SECONDS)

    def until_deleted(self) -> RetentionResult:
        """The first later pass that deleted files."""
        while True:
            _, outcome = self.next()
            if isinstance(outcome, RetentionResult) and outcome.deleted:
                return outcome


@pytest.fixture(name="passes")
def fixture_passes() -> Passes:
    return Passes()


def test_the_service_passes_once_a_day() -> None:
    """Retention is counted in days, so the service applies it once a day."""
    assert RETENTION_INTERVAL_SECONDS == 24 * 60 * 60


def test_passes_run_on_schedule_and_delete_expired_files(
        writer: JournalWriter, clock: FakeClock, passes: Passes, tmp_path: Path) -> None:
    """Unasked, a pass runs every interval; it deletes the files older than retention_days by
    the journal's clock (a checkpoint first), never the file being written, and what remains
    still verifies, anchored on the checkpoint."""
    files = writer.files()
    assert len(files) == 3
    timer = RetentionTimer(writer, keep_days=2, interval=PASS_SECONDS, on_pass=passes)
    started = time.monotonic()
    timer.start()
    try:
        first_at, first = passes.next()
        second_at, second = passes.next()
        assert first_at - started >= PASS_SECONDS and second_at - first_at >= PASS_SECONDS
        assert isinstance(first, RetentionResult) and isinstance(second, RetentionResult)
        assert [path.name for path in first.deleted] == [files[0].name]  # day 0 is 3 days old
        assert second.deleted == ()  # day 1 is within the horizon until the clock moves on
        clock.advance(days=1)
        later = passes.until_deleted()
    finally:
        timer.close()
    assert [path.name for path in later.deleted] == [files[1].name]
    assert later.checkpoint is not None
    assert writer.path.exists() and not files[0].exists() and not files[1].exists()
    assert timer.passes >= 3 and timer.last_error == ""
    writer.close()
    report = verify([tmp_path / "journal"])
    assert report.ok and report.anchor is Anchor.CHECKPOINT, report.problem


@pytest.mark.parametrize("failure", [
    JournalIOError("journal-1.jsonl: cannot delete: Read-only file system"),
    RuntimeError("a bug in a pass"),
], ids=["journal-error", "bug"])
def test_a_failing_pass_is_logged_and_the_next_still_runs(
        writer: JournalWriter, passes: Passes, tmp_path: Path, failure: Exception) -> None:
    """A pass that fails is one error in the log (and in the status), the timer goes on, and
    the next pass deletes what the failed one could not."""
    calls: list[int] = []

    def flaky(target: JournalWriter, **options: Any) -> RetentionResult:
        calls.append(1)
        if len(calls) == 1:
            raise failure
        return apply_retention(target, **options)

    timer = RetentionTimer(writer, keep_days=2, interval=PASS_SECONDS, apply=flaky,
                           on_pass=passes)
    passes.status = timer.status
    with capture_logs() as logs:
        timer.start()
        try:
            _, failed = passes.next()
            assert failed is failure
            assert passes.statuses[0]["last_error"] == str(failure)
            _, recovered = passes.next()
        finally:
            timer.close()
    errors = [entry for entry in logs if entry["log_level"] == "error"]
    assert [entry["event"] for entry in errors] == ["journal retention failed"]
    assert str(failure) in errors[0]["error"]
    assert isinstance(recovered, RetentionResult) and len(recovered.deleted) == 1
    assert timer.last_error == ""
    writer.close()
    assert verify([tmp_path / "journal"]).ok
