"""The running service checks its whole journal in the background (issue 27): after READY and
then every ``background_check_hours``, in a low-priority process of its own; the outcome is
journaled as ``journal_check``, a break raises the start-up check's alert (``journal_damage_found``
and the hold), and a stop kills a running checker."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from controller.journal import iter_records
from controller.journal.record import canonical_json
from controller.service.config import ServiceConfig, parse_config
from controller.service.protocol import ErrorCode, Refusal
from tests.controller.service.conftest import (
    SUPERVISOR,
    InProcessService,
    service_toml,
    voided_sessions,
)
from tests.waiting import wait_until

WAIT_SECONDS = 300.0
"""Generous: the checker runs at nice 19, so on a loaded 2-core machine it gets what the
other processes leave (its first run here took 1-2 s idle)."""


def _config(tmp: Path, *, delay: int = 0, hours: int = 24) -> ServiceConfig:
    text = service_toml(tmp).replace(
        "[journal]\n", f"[journal]\nbackground_check_hours = {hours}\n"
                       f"background_check_delay_s = {delay}\n", 1)
    return parse_config(text, source=str(tmp / "tablectl.toml"))


class Running(InProcessService):
    def background(self) -> dict[str, Any]:
        return self.ask("round.status")["journal"]["background_check"]


def _events(directory: Path, kind: str) -> list[dict[str, Any]]:
    return [dict(r.payload, _seq=r.seq) for r in iter_records([directory], strict=False)
            if r.event_type == kind]


_session = voided_sessions


def _rehash_in_place(path: Path, seq: int) -> None:
    """Rewrite record ``seq`` of ``path`` (its payload changed, its hash recomputed, as one
    without the key would): the line is sound, the link from the next record breaks."""
    lines = path.read_bytes().splitlines(keepends=True)
    for index, raw in enumerate(lines):
        body = json.loads(raw)
        if body["seq"] == seq:
            body["payload"]["forged"] = True
            body.pop("hash")
            body["hash"] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
            lines[index] = (canonical_json(body) + "\n").encode()
            path.write_bytes(b"".join(lines))
            return
    raise AssertionError(f"no seq {seq} in {path}")


def test_clean_journal_gives_an_ok_record_and_status(tmp_path: Path) -> None:
    """A clean journal: ``journal_check`` ``ok`` with the records and files it checked (the
    whole chain, every earlier session's too), and ``round.status`` shows the last check."""
    config = _config(tmp_path, hours=0)
    _session(config, rounds=2)
    config = _config(tmp_path)
    with Running(config) as running:
        last = wait_until(lambda: running.background()["last"], "a background check",
                          timeout=WAIT_SECONDS)
        status = running.background()
        writer_seq = running.service.wiring.writer.seq
    assert last["outcome"] == "ok" and last["problem"] is None and last["error"] is None
    assert last["first_seq"] == 1 and last["records"] == last["until_seq"] > 20
    assert last["files"] >= 1 and last["seconds"] >= 0
    assert status["enabled"] and status["every_hours"] == 24 and status["runs"] == 1
    checked, = _events(config.journal.directory, "journal_check")
    assert checked["outcome"] == "ok" and checked["records"] == last["records"]
    assert checked["_seq"] <= writer_seq + 1
    assert _events(config.journal.directory, "journal_damage_found") == []


def test_switched_off_runs_nothing(tmp_path: Path) -> None:
    """``background_check_hours = 0``: no check runs; the status says it is off."""
    config = _config(tmp_path, hours=0)
    with Running(config) as running:
        status = running.background()
        assert status["enabled"] is False and status["last"] is None
        assert status["every_hours"] is None and not status["running"]
    assert _events(config.journal.directory, "journal_check") == []


def test_record_tampered_after_ready_gives_a_failure_and_the_alert(tmp_path: Path) -> None:
    """A record of an earlier file rewritten (and rehashed) while the service runs, behind the
    verified mark where the start-up check never reads: the background check journals
    ``journal_check`` ``damaged`` naming the break, then ``journal_damage_found``
    (``found_by`` the background check), and holds commands as the start-up check does until
    a supervisor acknowledges it."""
    config = _config(tmp_path, hours=0)
    _session(config, rounds=1)
    _session(config, rounds=1)
    directory = config.journal.directory
    first = sorted(directory.glob("journal-*.jsonl"))[0]
    config = _config(tmp_path, delay=3600)
    with Running(config) as running:
        assert running.ask("round.status")["journal_hold"] is None  # READY: nothing found
        _rehash_in_place(first, 3)
        running.service.wiring.background_check.run_now()  # not an hour from now
        last = wait_until(lambda: running.background()["last"], "a background check",
                          timeout=WAIT_SECONDS)
        assert last["outcome"] == "damaged"
        assert last["problem"]["kind"] == "altered" and last["problem"]["seq"] == 4
        status = wait_until(lambda: (s := running.ask("round.status"))["journal_hold"] and s,
                            "the hold", timeout=WAIT_SECONDS)
        assert "altered" in status["journal_hold"]
        assert "journal damaged, commands held for a supervisor: altered" in \
            running.service.wiring.status_line()
        with pytest.raises(Refusal) as refused:
            running.ask("round.open")
        assert refused.value.code is ErrorCode.UNAVAILABLE
        assert "found damaged by the background check" in refused.value.message
        assert running.ask("journal.acknowledge", SUPERVISOR, reason="restored from the "
                           "off-box copy")["accepted"]
        assert running.ask("round.status")["journal_hold"] is None
    checked, = _events(directory, "journal_check")
    found, = _events(directory, "journal_damage_found")
    ack, = _events(directory, "journal_damage_acknowledged")
    assert checked["outcome"] == "damaged" and checked["problem"]["kind"] == "altered"
    assert found["found_by"] == "background check" and found["kind"] == "altered"
    assert found["_seq"] == checked["_seq"] + 1 and ack["found_seq"] == found["_seq"]


def test_acknowledged_break_found_again_holds_nothing(tmp_path: Path) -> None:
    """A break the start-up check found (it lies after the verified mark) and held: the
    background check finding it while the hold waits journals ``journal_check`` only (one
    acknowledgement is due, not two); found again after a supervisor acknowledged it, it is
    journaled (``journal_check`` ``damaged``) but holds nothing, as at start."""
    config = _config(tmp_path, hours=0)
    _session(config, rounds=1)
    _session(config, rounds=1)
    directory = config.journal.directory
    _rehash_in_place(sorted(directory.glob("journal-*.jsonl"))[0], 3)
    config = _config(tmp_path)
    with Running(config) as running:  # found at start, and by the check while held
        assert running.ask("round.status")["journal_hold"]
        wait_until(lambda: running.background()["last"], "a background check", timeout=WAIT_SECONDS)
        running.ask("journal.acknowledge", SUPERVISOR, reason="known")
    with Running(config) as running:
        wait_until(lambda: running.background()["last"], "a background check", timeout=WAIT_SECONDS)
        assert running.ask("round.status")["journal_hold"] is None
    assert [c["outcome"] for c in _events(directory, "journal_check")] == ["damaged"] * 2
    assert len(_events(directory, "journal_damage_found")) == 1


def _children(pid: int) -> set[int]:
    """The process ids whose parent is ``pid`` (read from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def test_stop_during_a_running_check_leaves_no_process(tmp_path: Path) -> None:
    """A stop while the checker runs kills it: no process is left behind, nothing is
    journaled for the interrupted check, and the journal closes cleanly."""
    config = _config(tmp_path, hours=0)
    _session(config, rounds=1)
    journal = config.journal.directory
    # a journal the checker takes a while over: many copies of the newest file's lines would
    # break the chain, so a long chain is written by the service's own writer instead
    from controller.journal.writer import JournalWriter
    from controller.journal.policy import Durability
    with JournalWriter(journal, table_id="T1", durability=Durability.NONE) as writer:
        for number in range(100_000):
            writer.append("bench_filler", {"n": number})
    config = _config(tmp_path)
    before = _children(os.getpid())
    with Running(config) as running:
        check = running.service.wiring.background_check
        wait_until(lambda: check.running, "the checker running", timeout=WAIT_SECONDS)
        pids = _children(os.getpid()) - before
        assert pids, "the checker is a child process"
    assert not (_children(os.getpid()) & pids), "a checker outlived the stop"
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or \
            (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z")
    assert _events(journal, "journal_check") == []
    last = list(iter_records([journal], strict=False))[-1]
    assert last.event_type == "journal_closed"


def test_a_break_found_in_the_background_still_holds_after_a_restart(tmp_path: Path) -> None:
    """A break the background check found and nobody acknowledged is still held when the
    service starts again: the stop, and a daily pass, must not move the verified mark past it
    (the mark keeps it pending; the start-up check reads only from the mark on)."""
    config = _config(tmp_path, hours=0)
    _session(config, rounds=1)
    _session(config, rounds=1)
    directory = config.journal.directory
    first = sorted(directory.glob("journal-*.jsonl"))[0]
    config = _config(tmp_path, delay=3600)
    with Running(config) as running:
        _rehash_in_place(first, 3)
        running.service.wiring.background_check.run_now()
        wait_until(lambda: running.ask("round.status")["journal_hold"], "the hold",
                   timeout=WAIT_SECONDS)
        running.service.wiring.retention.run_pass()  # the daily pass, while the hold waits
    with Running(_config(tmp_path, delay=3600)) as again:
        hold = again.ask("round.status")["journal_hold"]
        assert hold is not None and "altered" in hold
        with pytest.raises(Refusal):
            again.ask("round.open")


def test_a_daily_pass_under_way_cannot_drop_a_background_break(
        tmp_path: Path, mocker: Any) -> None:
    """The narrow race: a daily pass that has read the verified mark (and is verifying from it)
    when the background check journals a break must not then write its clean mark over the one
    that keeps the break pending. The break waits for the pass to finish, and a restart still
    holds it. The interleaving is forced by pausing the daily pass inside its check."""
    import threading

    from controller.journal import startup

    config = _config(tmp_path, hours=0)
    _session(config, rounds=1)
    _session(config, rounds=1)
    first = sorted(config.journal.directory.glob("journal-*.jsonl"))[0]
    inside, release, pending_written = threading.Event(), threading.Event(), threading.Event()
    real_check, real_write = startup.check_journal, startup.write_mark
    daily_thread: list[threading.Thread] = []

    def paused_check(*args: Any, **kwargs: Any) -> Any:
        checked = real_check(*args, **kwargs)
        if threading.current_thread() in daily_thread:  # the daily pass only, not the start
            inside.set()
            assert release.wait(WAIT_SECONDS), "the test never released the daily pass"
        return checked

    def watched_write(directory: Path, mark: Any, key: Any) -> None:
        real_write(directory, mark, key)
        if mark.pending:
            pending_written.set()

    mocker.patch.object(startup, "check_journal", paused_check)
    mocker.patch.object(startup, "write_mark", watched_write)
    with Running(_config(tmp_path, delay=3600)) as running:
        wiring = running.service.wiring
        _rehash_in_place(first, 3)
        daily = threading.Thread(target=wiring.retention.run_pass, name="daily-pass")
        daily_thread.append(daily)
        daily.start()
        try:
            assert inside.wait(WAIT_SECONDS), "the daily pass never reached its check"
            wiring.background_check.run_now()
            wait_until(lambda: _events(config.journal.directory, "journal_check"),
                       "the background check's outcome", timeout=WAIT_SECONDS)
            # the break is journaled only after the pass has written its mark: never between
            assert not pending_written.wait(2.0), \
                "the break was kept pending while a daily pass held a mark it read before it"
        finally:
            release.set()
        daily.join(WAIT_SECONDS)
        assert pending_written.wait(WAIT_SECONDS)
        wait_until(lambda: running.ask("round.status")["journal_hold"], "the hold",
                   timeout=WAIT_SECONDS)
    with Running(_config(tmp_path, delay=3600)) as again:
        hold = again.ask("round.status")["journal_hold"]
        assert hold is not None and "altered" in hold
