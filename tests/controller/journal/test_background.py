"""The background full check's own parts (issue 27): the check held to the running writer's last
record (``verify(until=...)``), the checker process, and the schedule's handling of a checker
that crashed or was killed (journaled as ``failed``, tried again at the next interval, never in
a tight loop). Through the service's wiring: tests/controller/service/test_journal_background.py."""

from __future__ import annotations

import os
import queue
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.journal import JournalWriter
from controller.journal.background import BackgroundCheck, CheckOutcome, CheckResult
from controller.journal.policy import Durability
from controller.journal.verify import verify
from tests.waiting import wait_until

WAIT_SECONDS = 300.0


@pytest.fixture(name="writer")
def fixture_writer(tmp_path: Path) -> JournalWriter:
    writer = JournalWriter(tmp_path / "journal", table_id="T1", durability=Durability.NONE)
    for number in range(50):
        writer.append("filler", {"n": number})
    yield writer
    writer.close()


def test_check_held_to_the_writers_record_ignores_what_follows(writer: JournalWriter) -> None:
    """Records appended after the check's moment, and a line being written, are not damage;
    the head, which the writer keeps moving, is not read."""
    until = (writer.seq, writer.last_hash)
    writer.append("later", {"n": 1})
    with writer.path.open("ab") as handle:  # a line the writer is in the middle of
        handle.write(b'{"v":1,"seq":')
    report = verify([writer.directory], until=until)
    assert report.ok and report.complete and report.last_seq == until[0]


def test_check_held_to_the_writers_record_finds_a_cut_and_a_rewrite(
        writer: JournalWriter) -> None:
    """The writer's record missing (cut) is ``truncated``; another hash at its seq is
    ``altered``."""
    until = (writer.seq, writer.last_hash)
    lines = writer.path.read_bytes().splitlines(keepends=True)
    writer.path.write_bytes(b"".join(lines[:-3]))
    report = verify([writer.directory], until=until)
    assert report.problem is not None and report.problem.kind.value == "truncated"
    writer.path.write_bytes(b"".join(lines))
    report = verify([writer.directory], until=(until[0], "0" * 64))
    assert report.problem is not None and report.problem.kind.value == "altered"


def test_checker_process_prints_one_json_line_and_exits_when_orphaned(
        writer: JournalWriter) -> None:
    """``python -m controller.journal.fullcheck`` at nice 19 prints its report; with its
    stdin closed before it ends (the service gone) it leaves at once."""
    command = [sys.executable, "-m", "controller.journal.fullcheck", str(writer.directory),
               str(writer.seq), writer.last_hash]
    done = subprocess.run(command, input=b"\n", capture_output=True, timeout=WAIT_SECONDS,
                          check=False)
    assert done.returncode == 3  # stdin ended right after the key: orphaned, no report
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b"\n")
    process.stdin.flush()
    line = process.stdout.readline()
    process.stdin.close()
    process.wait(WAIT_SECONDS)
    process.stdout.close()
    assert b'"ok": true' in line and b'"records": 51' in line


def _script(tmp_path: Path, body: str) -> str:
    """An executable standing in for the interpreter (a checker that fails as a real one
    can: exits, or hangs until killed)."""
    path = tmp_path / "checker.sh"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_crashed_checker_is_failed_and_retried_at_the_next_interval(
        tmp_path: Path, writer: JournalWriter) -> None:
    """A checker that exits without a report is a ``failed`` outcome naming its exit status,
    and the next try waits the whole interval: no tight loop."""
    outcomes: queue.Queue[tuple[float, CheckResult]] = queue.Queue()
    check = BackgroundCheck(writer, None, every=1.0, first_after=0.0,
                            on_outcome=lambda r: outcomes.put((time.monotonic(), r)),
                            python=_script(tmp_path, "echo 'Traceback: boom' >&2; exit 1"))
    check.start()
    try:
        first_at, first = outcomes.get(timeout=WAIT_SECONDS)
        second_at, second = outcomes.get(timeout=WAIT_SECONDS)
    finally:
        check.close()
    for result in (first, second):
        assert result.outcome is CheckOutcome.FAILED
        assert result.error is not None and "exit status 1" in result.error \
            and "boom" in result.error
    assert second_at - first_at >= 0.9
    assert check.status()["runs"] <= 3


def test_killed_checker_is_failed_and_stop_kills_a_running_one(
        tmp_path: Path, writer: JournalWriter) -> None:
    """A checker killed from outside is ``failed`` (its signal named); one running when the
    schedule is closed is killed, and nothing is reported for it."""
    outcomes: queue.Queue[CheckResult] = queue.Queue()
    check = BackgroundCheck(writer, None, every=3600.0, first_after=0.0,
                            on_outcome=outcomes.put,
                            python=_script(tmp_path, "exec sleep 600"))
    check.start()
    try:
        pid = _child_pid(check)
        os.kill(pid, signal.SIGKILL)
        result = outcomes.get(timeout=WAIT_SECONDS)
        assert result.outcome is CheckOutcome.FAILED and "exit status -9" in (result.error or "")
        check.run_now()
        pid = _child_pid(check)
    finally:
        check.close()
    assert outcomes.empty()
    assert not Path(f"/proc/{pid}").exists()


def _child_pid(check: BackgroundCheck) -> int:
    """The checker's pid once it has started (``_process``: the one seam, which pid to kill
    from outside)."""
    process = wait_until(lambda: check._process, "a checker started", timeout=WAIT_SECONDS)
    assert process is not None
    return process.pid
