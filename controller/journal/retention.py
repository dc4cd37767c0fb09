"""Retention: delete whole old journal files without ever breaking verification.

Only whole files go, oldest first and only as an unbroken run from the start, never the file
being written. Before the first deletion a ``retention_checkpoint`` record is appended (and
synced) naming the deleted files and the sequence number and hash of the last deleted record.
The verifier accepts the remaining journal's first record because a checkpoint that is itself
inside the verified chain vouches for what came before it. Writing the checkpoint first means a
power cut between checkpoint and deletion leaves a journal that still verifies (from genesis).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from controller.journal.errors import JournalConfigError, JournalIOError
from controller.journal.files import scan_tail
from controller.journal.record import Record, format_ts
from controller.journal.policy import JournalEvent
from controller.journal.writer import JournalWriter

DEFAULT_RETENTION_DAYS = 365
"""Game-recall and surveillance rules commonly require at least one year."""


@dataclass(frozen=True, slots=True)
class RetentionResult:
    deleted: tuple[Path, ...]
    checkpoint: Record | None


def expired_files(writer: JournalWriter, *, keep_days: int, now: datetime
                  ) -> list[tuple[Path, Record]]:
    """The run of oldest files whose last record is older than ``keep_days``, each with that
    record. Stops at the first file that is young, damaged, or being written: a damaged file is
    evidence, and deleting past it would hide the damage."""
    cutoff = now - timedelta(days=keep_days)
    expired: list[tuple[Path, Record]] = []
    with writer.lock:  # the file being written and the files before it, as of one moment
        current, files = writer.path, writer.files()
    for path in files:
        if path == current:
            break
        tail = scan_tail(path, None)
        if tail.last is None or tail.dropped or tail.last.time >= cutoff:
            break
        expired.append((path, tail.last))
    return expired


def apply_retention(
    writer: JournalWriter,
    *,
    keep_days: int = DEFAULT_RETENTION_DAYS,
    now: datetime | None = None,
) -> RetentionResult:
    """Delete expired files after journaling a checkpoint for them; returns what was done.

    Nothing here holds the writer's lock but the checkpoint's own append (issue 35: scanning
    and deleting old files under it stalled the table thread's records). That is safe because
    only the files *before* the one being written are touched, and the writer only ever adds
    newer files: the scan stops at the file being written (read under the writer's lock once,
    so a rotation during the pass only makes the pass stop earlier), the checkpoint is on disk
    before any deletion, and deleting a closed old file races with nothing the writer does.
    One pass at a time (the service's retention thread)."""
    if keep_days < 1:
        raise JournalConfigError(f"retention must keep at least 1 day, got {keep_days}")
    moment = now or writer.now()
    expired = expired_files(writer, keep_days=keep_days, now=moment)
    if not expired:
        return RetentionResult((), None)
    checkpoint = _checkpoint(writer, expired, keep_days, moment)
    deleted: list[Path] = []
    for path, _ in expired:
        try:
            os.unlink(path)
        except OSError as error:
            if deleted:  # vouch for exactly what is gone, so the rest still verifies
                _checkpoint(writer, expired[: len(deleted)], keep_days, moment)
            raise JournalIOError(f"{path}: cannot delete: {error.strerror or error}") \
                from error
        deleted.append(path)
    writer.sync_directory()
    return RetentionResult(tuple(deleted), checkpoint)


def _checkpoint(writer: JournalWriter, expired: list[tuple[Path, Record]], keep_days: int,
                moment: datetime) -> Record:
    last = expired[-1][1]
    return writer.append(
        JournalEvent.RETENTION_CHECKPOINT.value,
        {
            "deleted_files": [path.name for path, _ in expired],
            "last_deleted_seq": last.seq,
            "last_deleted_hash": last.hash,
            "last_deleted_ts": last.ts,
            "keep_days": keep_days,
            "cutoff": format_ts(moment - timedelta(days=keep_days)),
        },
        money=True,
    )
