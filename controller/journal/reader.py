"""Reading records back without verifying them: the base of ``rounds``, ``show``, ``recall``
and ``replay``.

Review tools read records in chain order with their place in the files, so any finding can be
cited as ``file:line (seq N)``. They should run :func:`controller.journal.verify.verify` first;
reading is kept separate so that a tool can still show a damaged journal up to its damage.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from controller.journal.damage import Damage, LineFault, check_line
from controller.journal.errors import JournalFormatError
from controller.journal.files import expand_paths, read_lines
from controller.journal.record import Record


@dataclass(frozen=True, slots=True)
class Entry:
    """A record and where it was read."""

    path: Path
    line: int
    record: Record


def iter_entries(paths: Iterable[str | Path], *, strict: bool = True) -> Iterator[Entry]:
    """Records of ``paths`` (files and/or directories) in file-name order, each with its place.

    ``strict`` raises :class:`JournalFormatError` naming ``file:line`` at the first line that
    is not a sound record (torn, malformed, hash mismatch); otherwise such lines are skipped.
    No HMAC or chain check here: that is :func:`~controller.journal.verify.verify`.
    """
    for path in expand_paths(paths):
        for number, raw, terminated in read_lines(path):
            found = check_line(raw, None) if terminated else LineFault(
                Damage.TRUNCATED, "torn line")
            if isinstance(found, Record):
                yield Entry(path, number, found)
            elif strict:
                raise JournalFormatError(f"{path}:{number}: {found.detail}")


def iter_records(paths: Iterable[str | Path], *, strict: bool = True) -> Iterator[Record]:
    """Just the records of :func:`iter_entries`."""
    for entry in iter_entries(paths, strict=strict):
        yield entry.record
