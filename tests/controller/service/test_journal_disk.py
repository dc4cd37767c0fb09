"""The service on a journal disk that fills up or turns read-only (issue 24 findings 5 and 6):
a real 256 KiB tmpfs (root only; skipped elsewhere), never a patched write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal import verify
from controller.service.lifecycle.backoff import EXIT_TEMPFAIL, StartBackoff
from controller.service.config import ServiceConfig, load_config
from controller.service.protocol import ErrorCode, Refusal
from tests.controller.journal.smalldisk import PAGE, fill, remount, small_disk
from tests.controller.service.conftest import SUPERVISOR, service_toml
from tests.controller.service.test_journal_start import Running
from tests.waiting import wait_until

PAD = "test_padding"
"""A record type replay ignores: it only moves the next record within the file's pages."""
WAIT_SECONDS = 60.0
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(name="disk")
def fixture_disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk") as disk:
        yield disk


@pytest.fixture(name="config")
def fixture_config(tmp_path: Path, disk: Path) -> ServiceConfig:
    """The journal on the small disk; the socket and config beside it, on the big one."""
    text = service_toml(tmp_path).replace(str(tmp_path / "journal"), str(disk / "journal"))
    path = tmp_path / "tablectl.toml"
    path.write_text(text)
    return load_config(path)


def leave_slack(running: Running, slack: int) -> bool:
    """Pad the journal so that about ``slack`` bytes remain in the page its file ends in (a
    record's length may differ by a digit): a record that fits there is written on a full
    disk, the next one is not. False when another thread's record (the driver reporting the
    absent device again) came in between."""
    writer = running.service.wiring.writer
    before = writer.path.stat().st_size
    writer.append(PAD, {"pad": ""})
    size = writer.path.stat().st_size
    empty = size - before
    pad = (-(size + empty + slack)) % PAGE
    writer.append(PAD, {"pad": "x" * pad})
    return abs(PAGE - writer.path.stat().st_size % PAGE - slack) < 50


def test_status_answers_while_the_outcome_waits_for_the_journal(
        config: ServiceConfig, disk: Path) -> None:
    """Issue 24 finding 6: the disk fills between an input's record and its outcome's. The
    command is answered `unavailable`; `round.status` answers (not `internal`) with the state
    `awaiting_journal`, how many records wait, and what the table waits for; once space
    returns the table writes them on its own and the status shows the round."""
    with Running(config) as running:
        open_round = 375  # bytes of the OpenRound input record; its round_opened is ~900
        message = ""
        for _attempt in range(10):  # another thread's record may take the slack: again
            if not leave_slack(running, open_round + 200):
                continue
            filler = fill(disk)
            with pytest.raises(Refusal) as refused:
                running.ask("round.open")
            assert refused.value.code is ErrorCode.UNAVAILABLE
            message = refused.value.message
            if "cannot record it" not in message:
                break  # the input recorded, its outcome not: what this test is about
            filler.unlink()  # not recorded, not acted on: try again
        assert "has not recorded its outcome" in message
        status = running.ask("round.status")  # before the fix: ValueError, i.e. `internal`
        assert status["state"] == "awaiting_journal" and status["journal_behind"] >= 1
        assert status["waits"] and "journal" in status["waits"][0]["waits_for"]
        assert "free space" in status["waits"][0]["way_out"]
        filler.unlink()
        wait_until(lambda: running.ask("round.status")["state"] == "betting",
                   "the journal to catch up")
        status = running.ask("round.status")
        assert status["journal_behind"] == 0 and status["round"] == 1
        assert status["waits"] and "journal" not in status["waits"][0]["waits_for"]


def start_service(config: ServiceConfig, runtime: Path) -> tuple[int, str]:
    """``tablectl run --config`` as systemd starts it (its runtime directory named in the
    environment): its exit status and stderr. Once it says it will exit for systemd to retry,
    it is sent SIGTERM, which ends its backoff wait (the exit status stays)."""
    env = dict(os.environ, RUNTIME_DIRECTORY=str(runtime))
    process = subprocess.Popen([sys.executable, "-m", "controller", "run", "--config",
                                config.source], stderr=subprocess.PIPE, text=True, env=env,
                               cwd=ROOT)
    guard = threading.Timer(WAIT_SECONDS * 2, process.kill)  # a start that never fails
    guard.start()
    lines: list[str] = []
    try:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if "for systemd to retry" in line:
                process.send_signal(signal.SIGTERM)
        code = process.wait(WAIT_SECONDS)
    finally:
        guard.cancel()
        guard.join()
        if process.stderr is not None:
            process.stderr.close()
    return code, "".join(lines)


def test_a_full_or_read_only_disk_is_retried_not_final(
        config: ServiceConfig, disk: Path, tmp_path: Path) -> None:
    """Issue 24 finding 5: a start while the journal's disk is full (twice) or read-only exits
    75 (EX_TEMPFAIL), which the unit retries, not 2 (a bad config, which it does not), each
    time with one line that says so and a wait that doubles; once the disk is back the table
    starts with its journal intact and nothing held."""
    runtime = tmp_path / "run"
    runtime.mkdir()
    _session_on(config)
    filler = fill(disk)
    for attempt, wait in ((1, "5"), (2, "10")):
        code, err = start_service(config, runtime)  # before the fix: exit 2, final
        assert code == EXIT_TEMPFAIL == 75, err
        assert "disk is full" in err and f"exit 75 in {wait} s" in err, err
        assert (runtime / "start-failures").read_text().strip() == str(attempt)
    filler.unlink()
    remount(disk, "ro")
    try:
        code, err = start_service(config, runtime)
        assert code == 75 and "disk is read-only" in err, err
    finally:
        remount(disk, "rw")
    with Running(config) as running:
        assert running.ask("round.status")["journal_hold"] is None
        assert running.ask("round.open")["state"] == "betting"
    assert verify([config.journal.directory]).ok


def test_a_successful_start_clears_the_backoff(tmp_path: Path) -> None:
    """The wait doubles per failure in a row (5, 10, 20, 40, 60, 60 s) and starts again at
    5 s after a start that succeeded; without a runtime directory every wait is the first."""
    backoff = StartBackoff(tmp_path)
    assert [backoff.failed() for _ in range(6)] == [5, 10, 20, 40, 60, 60]
    backoff.reset()
    assert backoff.failed() == 5 and backoff.failures() == 1
    nowhere = StartBackoff.from_environ({})
    assert [nowhere.failed() for _ in range(3)] == [5, 5, 5]


def _session_on(config: ServiceConfig) -> None:
    with Running(config) as running:
        running.ask("round.open")
        running.ask("supervisor.void", SUPERVISOR, reason="test round")
