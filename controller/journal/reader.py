"""Reading records back without verifying them: the base of ``rounds``, ``show``, ``recall``
and ``replay``.

Review tools read records in chain order with their place in the files, so any finding can be
cited as ``file:line (seq N)``. They should run :func:`controller.journal.verify.verify` first;
reading is kept separate so that a tool can still show a damaged journal up to its damage.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from controller.journal.damage import Damage, LineFault, check_line
from controller.journal.errors import JournalFormatError, JournalIOError, MixedJournals
from controller.journal.files import expand_paths, journal_files, read_lines
from controller.journal.record import Record

_SEQ_RE = re.compile(rb'"seq":(\d+)')


@dataclass(frozen=True, slots=True)
class Unsound:
    """A line that is not a sound record, met by a reader told to skip it (recovery)."""

    path: Path
    line: int
    seq: int | None
    """The sequence number the line claims, when one can be read from its bytes."""
    detail: str

    def describe(self) -> str:
        return f"{self.path.name} line {self.line}: {self.detail}"


SkipUnsound = Callable[[Unsound], None]


@dataclass(frozen=True, slots=True)
class Entry:
    """A record and where it was read."""

    path: Path
    line: int
    record: Record


def iter_from_last(directory: str | Path, event_type: str, *,
                   on_unsound: SkipUnsound | None = None) -> Iterator[Record]:
    """Records of a journal directory from the last one of ``event_type`` on (all of them when
    there is none), reading files newest first only until it is found.

    Recovery needs the last session, not the year of journal before it: each file is searched
    from its end for the bytes that name ``event_type``, only a candidate line is parsed, and
    the lines before the one found are skipped unparsed.

    A line that is not a sound record raises :class:`JournalFormatError`, unless
    ``on_unsound`` is given: then it is handed to it and skipped, so recovery can still rebuild
    the table from the rest and hold it for a supervisor instead of refusing to start."""
    files = journal_files(directory)
    needle = f'"{event_type}"'.encode()
    for index in range(len(files) - 1, -1, -1):
        found = _last_line_of(files[index], needle, event_type)
        if found is not None:
            yield from _records_from(files[index], found, on_unsound)
            for path in files[index + 1:]:
                yield from _records(path, read_lines(path), on_unsound)
            return
    for path in files:
        yield from _records(path, read_lines(path), on_unsound)


NEWEST_FIRST_CHUNK = 256 * 1024
"""Bytes read at a time by :func:`iter_newest_first`: a few hundred records per read."""


def iter_newest_first(directory: str | Path, *, only: Collection[str],
                      mentioning: Collection[str] = (), up_to_seq: int | None = None,
                      chunk: int = NEWEST_FIRST_CHUNK) -> Iterator[Record]:
    """Sound records of ``only`` event types that name one of ``mentioning`` (as a JSON
    string, e.g. a payload ``type``), newest first, up to ``up_to_seq`` when given.

    For a reader that wants the last few thousand of some kinds of record out of millions
    (the protection monitors' warm-up): each file is read from its end in ``chunk``-byte
    reads, newest file first, and the caller stops when it has enough, so what is read is
    bounded by what is wanted, not by the journal. A line is parsed only when its bytes hold
    ``"event":"<type>"`` and one of the mentioned strings; an unsound line (torn, malformed,
    hash mismatch) is passed over: the start-up check reports damage, this only reads.
    ``up_to_seq`` leaves out what a running writer appended after the caller's moment (the
    newest file may grow while it is read)."""
    events = tuple(f'"event":"{kind}"'.encode() for kind in only)
    words = tuple(f'"{word}"'.encode() for word in mentioning)
    for path in reversed(journal_files(directory)):
        for raw in _lines_backwards(path, chunk):
            if not any(needle in raw for needle in events):
                continue
            if words and not any(word in raw for word in words):
                continue
            found = check_line(raw, None)
            if isinstance(found, Record) and (up_to_seq is None or found.seq <= up_to_seq):
                yield found


def _lines_backwards(path: Path, chunk: int) -> Iterator[bytes]:
    """The newline-terminated lines of ``path``, last first (an unterminated end, a torn
    line or one being written, is left out)."""
    for _offset, raw in _lines_backwards_at(path, chunk):
        yield raw


def _lines_backwards_at(path: Path, chunk: int) -> Iterator[tuple[int, bytes]]:
    """:func:`_lines_backwards` with the byte offset where each line starts."""
    try:
        with path.open("rb") as handle:
            pos = handle.seek(0, 2)
            carry, in_end = b"", True
            while pos > 0:
                step = min(chunk, pos)
                pos -= step
                handle.seek(pos)
                buf = handle.read(step) + carry  # the bytes from ``pos`` on
                if in_end:  # still inside what follows the last newline
                    cut = buf.rfind(b"\n")
                    if cut < 0:
                        carry = b""
                        continue
                    buf, in_end = buf[:cut], False
                parts = buf.split(b"\n")
                carry = parts.pop(0) if pos > 0 else b""
                end = pos + len(buf)
                for raw in reversed(parts):
                    start = end - len(raw)
                    yield start, raw
                    end = start - 1
    except OSError as error:
        raise JournalIOError(f"{path}: {error.strerror or error}") from error


def _last_line_of(path: Path, needle: bytes, event_type: str) -> int | None:
    """The byte offset of the line of the last record of ``event_type`` in ``path``, read from
    the file's end in chunks: the last session begins near the end (the recorder starts one
    before every round), so recovery reads about a round, not the whole newest file."""
    for offset, raw in _lines_backwards_at(path, NEWEST_FIRST_CHUNK):
        if needle in raw:
            found = check_line(raw, None)
            if isinstance(found, Record) and found.event_type == event_type:
                return offset
    return None


def _records_from(path: Path, offset: int, on_unsound: SkipUnsound | None
                  ) -> Iterator[Record]:
    """:func:`_records` of the lines of ``path`` from ``offset`` on. A line's number in the
    file (the newlines before ``offset``) is counted only for an unsound line, the one place
    it is reported: the file's start is not read otherwise."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except OSError as error:
        raise JournalIOError(f"{path}: {error.strerror or error}") from error
    for index, raw in enumerate(data.splitlines(keepends=True), start=1):
        terminated = raw.endswith(b"\n")
        line = raw[:-1] if terminated else raw
        found = check_line(line, None) if terminated else LineFault(
            Damage.TRUNCATED, "torn line")
        if isinstance(found, Record):
            yield found
            continue
        number = _count_lines(path, offset) + index
        if on_unsound is None:
            raise JournalFormatError(f"{path}:{number}: {found.detail}")
        hint = _SEQ_RE.search(line)
        on_unsound(Unsound(path, number, int(hint.group(1)) if hint else None, found.detail))


def _count_lines(path: Path, offset: int) -> int:
    """Newlines in the first ``offset`` bytes of ``path``."""
    count = 0
    try:
        with path.open("rb") as handle:
            left = offset
            while left > 0 and (buf := handle.read(min(left, 1 << 22))):
                count += buf.count(b"\n")
                left -= len(buf)
    except OSError as error:
        raise JournalIOError(f"{path}: {error.strerror or error}") from error
    return count


def _records(path: Path, lines: Iterable[tuple[int, bytes, bool]],
             on_unsound: SkipUnsound | None = None) -> Iterator[Record]:
    if on_unsound is None:
        for entry in _entries(path, lines, strict=True):
            yield entry.record
        return
    for number, raw, terminated in lines:
        found = check_line(raw, None) if terminated else LineFault(
            Damage.TRUNCATED, "torn line")
        if isinstance(found, Record):
            yield found
        else:
            hint = _SEQ_RE.search(raw)
            on_unsound(Unsound(path, number, int(hint.group(1)) if hint else None,
                               found.detail))


def _entries(path: Path, lines: Iterable[tuple[int, bytes, bool]], *, strict: bool
             ) -> Iterator[Entry]:
    for number, raw, terminated in lines:
        found = check_line(raw, None) if terminated else LineFault(
            Damage.TRUNCATED, "torn line")
        if isinstance(found, Record):
            yield Entry(path, number, found)
        elif strict:
            raise JournalFormatError(f"{path}:{number}: {found.detail}")


def iter_entries(paths: Iterable[str | Path], *, strict: bool = True,
                 only: Collection[str] | None = None) -> Iterator[Entry]:
    """Records of ``paths`` (files and/or directories) in file-name order, each with its place.

    ``strict`` raises :class:`JournalFormatError` naming ``file:line`` at the first line that
    is not a sound record (torn, malformed, hash mismatch); otherwise such lines are skipped.
    ``only`` (event types): lines that cannot be of those types are passed over unparsed and
    unchecked, for a reader that wants a few kinds out of millions of records (the integrity
    report). The test is on the bytes: a record's canonical JSON holds ``"event":"<type>"``
    exactly, so a line without any of those is not one of them. No HMAC or chain check here:
    that is :func:`~controller.journal.verify.verify`.
    """
    needles = None if only is None else tuple(f'"event":"{kind}"'.encode() for kind in only)
    for path in expand_paths(paths):
        lines = read_lines(path)
        if needles is not None:
            lines = ((number, raw, terminated) for number, raw, terminated in lines
                     if any(needle in raw for needle in needles))
        yield from _entries(path, lines, strict=strict)


def iter_one_journal(paths: Iterable[str | Path]) -> Iterator[Record]:
    """The records of :func:`iter_entries` (strict), refused with :class:`MixedJournals` where
    they are not one table's one chain: a record of another table, or a sequence number that
    does not rise (a second chain starting again, or files given out of order). Surveillance's
    review tools read through this, so two journals in one directory or on one command line are
    an error naming both files, never rounds merged into evidence that never happened (issue
    34: two bench journals' round 1 read as one round with six cards at a box)."""
    previous: Entry | None = None
    for entry in iter_entries(paths):
        record = entry.record
        if previous is not None:
            before = previous.record
            if record.table_id != before.table_id:
                raise MixedJournals(
                    f"{previous.path} holds table {before.table_id!r} and {entry.path} table "
                    f"{record.table_id!r}: two tables' journals in one read; give each table's "
                    f"journal on its own")
            if record.seq <= before.seq:
                raise MixedJournals(
                    f"{previous.path} (line {previous.line}, seq {before.seq}) and {entry.path} "
                    f"(line {entry.line}, seq {record.seq}) are not one chain of table "
                    f"{record.table_id!r}: its sequence goes back, so these are two journals "
                    f"(or files given out of order); give each journal on its own")
        previous = entry
        yield record


def iter_records(paths: Iterable[str | Path], *, strict: bool = True,
                 only: Collection[str] | None = None) -> Iterator[Record]:
    """Just the records of :func:`iter_entries`."""
    for entry in iter_entries(paths, strict=strict, only=only):
        yield entry.record
