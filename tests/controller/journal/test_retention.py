"""Retention deletes whole old files only and never breaks verification of what remains
(issue 5 "Recovery": configurable retention, default at least one year)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import pytest_mock

from controller.journal import (
    DEFAULT_RETENTION_DAYS,
    Anchor,
    Damage,
    JournalConfigError,
    JournalWriter,
    apply_retention,
    verify,
)

from .conftest import FakeClock, deal_round

Opener = Callable[..., JournalWriter]


def _three_days(open_writer: Opener, clock: FakeClock) -> JournalWriter:
    writer = open_writer()
    for day in range(3):
        deal_round(writer, f"d{day}")
        clock.advance(days=1)
    return writer


def test_default_keeps_at_least_a_year() -> None:
    """Game recall and surveillance need a year of records by default."""
    assert DEFAULT_RETENTION_DAYS >= 365


def test_old_files_go_and_the_rest_still_verifies(open_writer: Opener, clock: FakeClock,
                                                  journal_dir: Path) -> None:
    """Files older than the horizon are deleted after a checkpoint anchors what remains."""
    writer = _three_days(open_writer, clock)
    files = writer.files()
    assert len(files) == 3
    clock.advance(days=1)
    result = apply_retention(writer, keep_days=2)
    assert [path.name for path in result.deleted] == [files[0].name, files[1].name]
    assert result.checkpoint is not None
    assert result.checkpoint.payload["deleted_files"] == [files[0].name, files[1].name]
    assert writer.files()[0].name == files[2].name  # the checkpoint itself opened a new day
    writer.close()
    report = verify([journal_dir])
    assert report.ok and report.anchor is Anchor.CHECKPOINT


def test_retention_never_deletes_young_or_current_files(open_writer: Opener, clock: FakeClock
                                                        ) -> None:
    """Nothing inside the horizon, and never the file being written."""
    writer = _three_days(open_writer, clock)
    assert apply_retention(writer).deleted == ()
    clock.advance(days=800)
    result = apply_retention(writer)
    assert writer.path.exists() and writer.path not in result.deleted
    assert len(result.deleted) == 2


def test_repeated_retention_keeps_verifying(open_writer: Opener, clock: FakeClock,
                                            journal_dir: Path) -> None:
    """A later run deletes the file holding the earlier checkpoint; its own anchors the rest."""
    writer = _three_days(open_writer, clock)
    apply_retention(writer, keep_days=2)
    for day in range(3):
        deal_round(writer, f"e{day}")
        clock.advance(days=1)
    apply_retention(writer, keep_days=1)
    writer.close()
    report = verify([journal_dir])
    assert report.ok and report.anchor is Anchor.CHECKPOINT


def test_deleting_more_than_retention_did_is_detected(open_writer: Opener, clock: FakeClock,
                                                      journal_dir: Path) -> None:
    """The checkpoint vouches for exactly what retention deleted, not for a further deletion."""
    writer = _three_days(open_writer, clock)
    clock.advance(days=1)
    apply_retention(writer, keep_days=3)
    writer.close()
    writer.files()[0].unlink()
    report = verify([journal_dir])
    assert not report.ok and report.problem is not None
    assert report.problem.kind is Damage.MISSING


def test_retention_below_one_day_is_refused(open_writer: Opener) -> None:
    """A zero horizon would delete records before surveillance could copy them."""
    with pytest.raises(JournalConfigError):
        apply_retention(open_writer(), keep_days=0)


def test_the_table_writes_while_retention_deletes(open_writer: Opener, clock: FakeClock,
                                                  journal_dir: Path,
                                                  mocker: pytest_mock.MockerFixture) -> None:
    """Issue 35: a pass's deletions run outside the writer's lock. One deletion is held (a
    slow SD card: a fault no simulator gives, so ``os.unlink`` is wrapped here); meanwhile
    another thread's record is appended and returns, before the deletion does. The pass then
    finishes and the journal, new record included, verifies from the checkpoint."""
    writer = _three_days(open_writer, clock)
    clock.advance(days=1)
    real_unlink = os.unlink
    inside, release = threading.Event(), threading.Event()

    def slow_unlink(path: object) -> None:
        inside.set()
        release.wait(60)
        real_unlink(path)

    mocker.patch("controller.journal.retention.os.unlink", slow_unlink)
    done: dict[str, object] = {}
    retention = threading.Thread(target=lambda: done.update(
        result=apply_retention(writer, keep_days=2)), name="retention")
    retention.start()
    try:
        assert inside.wait(60), "retention never reached its deletion"
        appending = threading.Thread(target=lambda: done.update(
            record=writer.append("round_started", {"game": "rws-nc-three-pictures"},
                                 round_id="during")), name="table")
        appending.start()
        appending.join(60)
        assert "record" in done and "result" not in done, \
            "the table's record waited for retention's deletion"
    finally:
        release.set()
        retention.join(60)
    assert len(done["result"].deleted) == 2  # type: ignore[attr-defined]
    writer.close()
    report = verify([journal_dir])
    assert report.ok and report.anchor is Anchor.CHECKPOINT
