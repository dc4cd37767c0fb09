"""The service's start-up check: verify what was written since the last verified mark, before
anything is appended, and say whether the table may deal.

Appending to a damaged journal would bury the damage under new records (and move the head past
a cut tail), so the service checks first (:func:`check_journal`), from the verified mark
(:mod:`controller.journal.head`) so each start reads about one run's records, not the whole
history (without a mark: from the newest file's start). What is found is one of:

* nothing: the mark moves to the last record (:func:`mark_clean`), and again while the service
  runs (:func:`advance_mark`: daily, and when the journal is closed), so a start after months
  of service still reads at most a day's records;
* a power-cut artefact: the newest file's last line torn or garbled. The writer repairs it and
  journals the repair (``journal_repaired``), as it always has; not damage;
* damage: any other problem, a journal whose end cannot be checked (no head), a head without
  its verified mark (deleted or replaced), or damage found at an earlier start and never
  acknowledged (kept ``pending`` with the mark: a cut the writer has since appended past no
  longer shows in the chain). The service journals it (``journal_damage_found``,
  :func:`record_damage`) and deals no more until a supervisor acknowledges it
  (``journal_damage_acknowledged``, with actor, role and reason, :func:`record_acknowledgement`);
  the acknowledgement is kept with the mark, so the same damage found again at a later start
  holds nothing (it is logged).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from controller.journal.damage import check_line
from controller.journal.errors import JournalFormatError, JournalFromLaterRelease, JournalIOError
from controller.journal.files import journal_files
from controller.journal.forms import JOURNAL_REVISION, declared_revision
from controller.journal.head import VERIFIED_NAME, Mark, read_mark, write_mark
from controller.journal.policy import JournalEvent
from controller.journal.reader import iter_from_last
from controller.journal.record import Record
from controller.journal.replay import Divergence
from controller.journal.verify import Problem, VerifyReport, verify
from controller.journal.writer import JournalWriter


@dataclass(frozen=True, slots=True)
class StartupCheck:
    """What :func:`check_journal` found."""

    directory: Path
    report: VerifyReport | None
    """None for a journal with no files yet (nothing to check)."""
    incremental: bool
    """Checked from the verified mark, not from the journal's start."""
    seconds: float
    damage: dict[str, Any] | None
    """The damage that holds dealing (``kind``, ``file``, ``line``, ``seq``, ``detail``)."""
    known: dict[str, Any] | None = None
    """Damage found again that a supervisor acknowledged before: logged, holds nothing."""
    mark: Mark | None = None

    def describe(self) -> str:
        damage = self.damage or self.known or {}
        where = f"{damage.get('file')}"
        if damage.get("line") is not None:  # a replay's finding names a record, not a line
            where += f" line {damage.get('line')}"
        seq = f" (seq {damage['seq']})" if damage.get("seq") is not None else ""
        return f"{damage.get('kind')} at {where}{seq}: {damage.get('detail')}"


def damage_key(damage: dict[str, Any]) -> str:
    """What identifies one damage across starts (kind, file, seq)."""
    return f"{damage.get('kind')}:{Path(str(damage.get('file'))).name}:{damage.get('seq')}"


def check_journal(directory: Path, key: bytes | None) -> StartupCheck:
    """Verify ``directory`` from its verified mark (in full without one), read-only."""
    started = time.monotonic()
    try:
        files = journal_files(directory)
    except JournalIOError:
        files = []
    if not files:
        return StartupCheck(directory, None, False, time.monotonic() - started, None)
    mark = read_mark(directory, key)
    placed = mark is not None and mark.placed and _names_its_record(directory, mark)
    since = mark if placed else _newest_file_start(files[-1])
    report = verify([directory], hmac_key=key, since=since)
    damage: dict[str, Any] | None = None
    if report.problem is not None and not _power_cut_artefact(report.problem, files[-1]):
        damage = report.problem.to_dict()
    elif report.problem is None and report.unchecked:
        damage = {"kind": "unchecked", "file": str(files[-1]), "line": None,
                  "seq": report.last_seq, "detail": "; ".join(report.unchecked)}
    known = None
    if damage is not None and mark is not None and damage_key(damage) in mark.acknowledged:
        damage, known = None, damage
    if damage is None and mark is not None and mark.pending:
        damage = {"kind": "unacknowledged", "file": str(files[-1]), "line": None, "seq": None,
                  "detail": "damage found at an earlier start was never acknowledged: "
                            + "; ".join(mark.pending)}
    elif damage is None and mark is None and report.head is not None:
        damage = {"kind": "unchecked", "file": str(directory / VERIFIED_NAME), "line": None,
                  "seq": report.last_seq, "detail": "the verified mark is missing or not "
                  "this journal's (deleted or replaced): what changed since the last start "
                  "cannot be told"}
    return StartupCheck(directory, report, placed and report.anchor is not None
                        and report.anchor.value == "verified", time.monotonic() - started,
                        damage, known, mark)


def refuse_later_release(directory: Path) -> None:
    """Raise :class:`JournalFromLaterRelease` when the journal's last session was written by a
    later release than this one (a downgrade), before anything is appended. A journal whose
    last session cannot be read is the start-up check's and recovery's to judge, not this."""
    from controller.journal.recorder import SESSION_STARTED

    try:
        last = next((r for r in iter_from_last(directory, SESSION_STARTED)
                     if r.event_type == SESSION_STARTED), None)
    except (JournalFormatError, OSError):
        return
    declared = None if last is None else declared_revision(last.payload)
    if declared is not None and declared > JOURNAL_REVISION:
        raise JournalFromLaterRelease(
            f"written by a later release (journal revision {declared} at seq {last.seq}; this "
            f"release reads revisions up to {JOURNAL_REVISION}): install that release or a "
            "later one; nothing was appended")


def unproven_round(check: StartupCheck, unproven: Divergence) -> StartupCheck:
    """The check, with the damage recovery found: the round in progress cannot be reproduced
    from the journal (a record of its session altered, missing or unreadable: the check reads
    only what came after the verified mark, replay the whole session). Held like any damage;
    one a supervisor acknowledged before is ``known`` and holds nothing."""
    damage = {"kind": "unproven", "file": str(check.directory), "line": None,
              "seq": unproven.seq or None,
              "detail": "recovery cannot reproduce the round in progress from the journal ("
                        f"{unproven.describe()}): rebuilt from the inputs that could be read"}
    if check.mark is not None and damage_key(damage) in check.mark.acknowledged:
        return replace(check, known=damage)
    return replace(check, damage=damage)


def background_damage(directory: Path, problem: dict[str, Any], key: bytes | None
                      ) -> StartupCheck:
    """A break the running service's full check found (:mod:`.background`), as the start-up
    check's damage: journaled by :func:`record_damage` (``found_by``) and held the same way,
    kept pending with the mark until acknowledged; one acknowledged before is ``known``."""
    mark = read_mark(directory, key)
    damage = {**{k: problem.get(k) for k in ("kind", "file", "line", "seq", "detail")},
              "found_by": "background check"}
    if mark is not None and damage_key(damage) in mark.acknowledged:
        return StartupCheck(directory, None, False, 0.0, None, damage, mark)
    return StartupCheck(directory, None, False, 0.0, damage, None, mark)


def _names_its_record(directory: Path, mark: Mark) -> bool:
    """The line at the mark's offset is the mark's record (not so after a cut before it: the
    check then starts at the newest file, and the head shows the cut)."""
    try:
        with (directory / mark.file).open("rb") as handle:
            handle.seek(mark.offset)
            line = handle.readline()
    except OSError:
        return False
    record = check_line(line.rstrip(b"\n"), None)
    return isinstance(record, Record) and (record.seq, record.hash) == (mark.seq, mark.hash)


def _newest_file_start(newest: Path) -> Mark | None:
    """Without a verified mark (the first start after an upgrade, or a mark lost) the check
    starts at the newest file's first record: at most one file (a day, or ``rotate_bytes``)
    is read, so READY stays within systemd's start timeout however old the journal is. The
    files before it are surveillance's full ``tablectl journal verify``."""
    try:
        with newest.open("rb") as handle:
            first = handle.readline()
    except OSError:
        return None
    record = check_line(first.rstrip(b"\n"), None)
    if not first.endswith(b"\n") or not isinstance(record, Record):
        return None
    return Mark(record.table_id, record.seq, record.hash, newest.name, 0, 1)


def _power_cut_artefact(problem: Problem, newest: Path) -> bool:
    """The newest file's last line torn or garbled: what the writer repairs on open."""
    if Path(problem.file) != newest or problem.offset is None:
        return False
    try:
        with newest.open("rb") as handle:
            handle.seek(problem.offset)
            rest = handle.read()
    except OSError:
        return False
    return rest.count(b"\n") <= 1 and (rest.endswith(b"\n") or b"\n" not in rest)


def mark_clean(check: StartupCheck, key: bytes | None, table: str) -> None:
    """Move the verified mark to the last record the check found intact."""
    report = check.report
    if report is None or report.mark is None or check.damage is not None:
        return
    acknowledged = check.mark.acknowledged if check.mark is not None else ()
    _sync_file(check.directory / report.mark.file)  # never vouch for what a power cut may lose
    write_mark(check.directory, replace(report.mark, table=table, acknowledged=acknowledged),
               key)


def _sync_file(path: Path) -> None:
    """The mark is held against the files like the head (``verify``): the record it names must
    be on disk before it says so, or a power cut after a daily pass would look like a cut."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise JournalIOError(f"{path}: {error.strerror or error}") from error


def advance_mark(directory: Path, key: bytes | None, table: str) -> StartupCheck | None:
    """Check what was written since the mark and move the mark, while the service runs (daily,
    and after the journal is closed), so the next start reads hours of records, not months. A
    line being written as it is read is a torn last line: the mark stops before it. Damage is
    returned (and left for the next start to hold); ``None`` when the journal could not be
    read (retention deleting a file meanwhile: the next pass tries again)."""
    try:
        check = check_journal(directory, key)
        mark_clean(check, key, table)
    except JournalIOError:
        return None
    return check


def record_damage(writer: JournalWriter, check: StartupCheck, key: bytes | None) -> int:
    """Journal what the check found (before anything else the service appends) and keep it
    pending with the mark until acknowledged; its seq."""
    assert check.damage is not None
    head = check.report.head if check.report is not None else None
    record = writer.append(JournalEvent.DAMAGE_FOUND.value, {
        **check.damage, "incremental": check.incremental,
        "head": None if head is None else {"seq": head.seq, "hash": head.hash},
        "journal_last_seq": check.report.last_seq if check.report else None}, money=True)
    # the mark stays where the check started, unless the damage took its record (a cut before
    # it): then at the last record found sound, so it never names a seq the writer reuses
    kept = check.mark if check.incremental or check.report is None \
        or check.report.mark is None else replace(
            check.report.mark, table=writer.table_id,
            acknowledged=check.mark.acknowledged if check.mark else (),
            pending=check.mark.pending if check.mark else ())
    place = kept or _unplaced(writer.table_id)
    if check.damage["kind"] != "unacknowledged":
        place = replace(place, pending=(*place.pending,
                                        f"seq {record.seq}: {check.describe()}"))
    write_mark(check.directory, place, key)
    return record.seq


def mark_new_journal(directory: Path, newest: Path, key: bytes | None) -> None:
    """A journal just created: the mark names its first record, so a start after a crash in
    its first day finds the mark it expects."""
    start = _newest_file_start(newest)
    if start is not None:
        write_mark(directory, start, key)


def _unplaced(table: str) -> Mark:
    return Mark(table, 0, "", "", 0, 0)


def record_acknowledgement(writer: JournalWriter, check: StartupCheck, found_seq: int, *,
                           actor: str, role: str, reason: str, key: bytes | None) -> int:
    """Journal a supervisor's acknowledgement and keep it with the mark; its seq."""
    assert check.damage is not None
    earlier = [int(m.group(1)) for item in (check.mark.pending if check.mark else ())
               if (m := re.match(r"seq (\d+):", item))]
    record = writer.append(JournalEvent.DAMAGE_ACKNOWLEDGED.value, {
        "found_seq": found_seq, "also_found_seqs": earlier, "actor": actor, "role": role,
        "reason": reason, "found": check.describe()}, actor=actor, money=True)
    # from the last record found sound: a mark past a cut no longer names its record (a
    # finding of the background check has no report: the mark stays where it is)
    verified = check.report.mark if check.report is not None else check.mark
    place = verified or _unplaced(writer.table_id)
    known = check.mark.acknowledged if check.mark is not None else ()
    write_mark(check.directory, replace(place, table=writer.table_id, pending=(),
                                        acknowledged=(*known, damage_key(check.damage))), key)
    return record.seq
