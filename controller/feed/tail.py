"""Following the journal files as the service writes them: new complete lines, in chain order.

The journal is the outbox: the table writes it whatever the feed does, so the table never waits
for the feed. This reader only reads. It keeps the file and byte offset of the next line, takes
only lines that end in a newline (the writer may be half-way through one), and moves to the
next file once the current one has no more lines and a newer file exists. A line that is not a
sound record (the writer's torn-line repair may be about to truncate it) is left where it is
and retried; a file that shrank under us is re-read from its start, skipping what was sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from controller.journal.damage import check_line
from controller.journal.files import journal_files
from controller.journal.record import Record

READ_CHUNK = 64 << 10
"""Bytes read at a time: some 130 records, more than a turn's read-ahead. A line longer than
this (no record is) is read on to its end rather than waited on for ever."""


@dataclass(slots=True)
class _Position:
    path: Path
    offset: int


class JournalTail:
    """Records of one journal directory after ``after_seq``, as they are written."""

    def __init__(self, directory: Path, after_seq: int, *, chunk: int = READ_CHUNK) -> None:
        self.directory = directory
        self.chunk = chunk
        self.next_seq = after_seq + 1
        self._position: _Position | None = None
        self.problem: str | None = None
        """The last reason reading stopped early (a bad line), for the status and the log."""

    def _start_file(self) -> Path | None:
        """The newest file whose first record is at or before ``next_seq``: the files before
        it hold only records already sent."""
        files = journal_files(self.directory)
        chosen = files[0] if files else None
        for path in files:
            first = _first_seq(path)
            if first is not None and first <= self.next_seq:
                chosen = path
        return chosen

    def read(self, limit: int) -> list[Record]:
        """Up to ``limit`` new records (possibly none)."""
        if self._position is None:
            if not self.directory.is_dir():
                return []  # the service has not written its first record yet: wait for it
            start = self._start_file()
            if start is None:
                return []
            self._position = _Position(start, 0)
        out: list[Record] = []
        while len(out) < limit:
            got = self._read_file(limit - len(out))
            out.extend(got)
            if not got and not self._advance_file():
                break
        return out

    def read_first(self) -> Record | None:
        """The record at ``next_seq`` (or the first after it), however far into the files it
        lies: :meth:`read` returns nothing for a turn that only skipped earlier records, which
        is fine for a feed that reads every turn but not for one that must find its place now
        (a resend from the middle of the journal). None when there is no such record yet."""
        while True:
            where = None if self._position is None else (self._position.path,
                                                         self._position.offset)
            got = self.read(1)
            if got:
                return got[0]
            if self._position is None or where == (self._position.path,
                                                   self._position.offset):
                return None

    def _read_file(self, limit: int) -> list[Record]:
        position = self._position
        assert position is not None
        try:
            size = position.path.stat().st_size
            if size < position.offset:  # truncated by a torn-line repair: find our place again
                position.offset = 0
            with position.path.open("rb") as handle:
                handle.seek(position.offset)
                data = _read_to_a_newline(handle, self.chunk)
        except FileNotFoundError:
            return []  # retention deleted it: _advance_file moves on
        out: list[Record] = []
        consumed = 0
        while len(out) < limit:
            end = data.find(b"\n", consumed)
            if end < 0:
                break
            found = check_line(data[consumed:end], None)
            if not isinstance(found, Record):
                self.problem = f"{position.path.name}@{position.offset + consumed}: {found.detail}"
                break
            consumed = end + 1
            if found.seq < self.next_seq:
                continue
            if found.seq > self.next_seq:
                self.problem = (f"{position.path.name}: seq {found.seq} follows "
                                f"{self.next_seq - 1} (journal damaged or retained away)")
            self.next_seq = found.seq + 1
            out.append(found)
        position.offset += consumed
        return out

    def _advance_file(self) -> bool:
        """Move to the next file if there is one and the current one is finished."""
        position = self._position
        assert position is not None
        later = [p for p in journal_files(self.directory) if p.name > position.path.name]
        if not later:
            return False
        try:
            if position.path.stat().st_size > position.offset:
                return False  # lines still to read here (or a bad line to wait on)
        except FileNotFoundError:
            pass
        self._position = _Position(later[0], 0)
        return True


def _read_to_a_newline(handle: BinaryIO, chunk: int) -> bytes:
    """``chunk`` bytes, or more until the first newline or the end of the file."""
    chunks = [handle.read(chunk)]
    while len(chunks[-1]) == chunk and b"\n" not in chunks[-1]:
        chunks.append(handle.read(chunk))
    return b"".join(chunks)


def _first_seq(path: Path) -> int | None:
    try:
        with path.open("rb") as handle:
            line = handle.readline()
    except OSError:
        return None
    if not line.endswith(b"\n"):
        return None
    found = check_line(line[:-1], None)
    return found.seq if isinstance(found, Record) else None
