"""Journal files on disk: names, listing, reading lines, and finding the sound end of a file.

Files are named ``journal-NNNNNN.jsonl`` with a zero-padded counter, so that a plain ``ls`` and
a sort by name both give chain order. Everything that touches file layout lives here so the
writer, the verifier and retention agree on it.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.journal.damage import check_line
from controller.journal.errors import JournalDamagedError, JournalIOError
from controller.journal.head import HEAD_NAME, VERIFIED_NAME
from controller.journal.record import Record

BOOKKEEPING_NAMES = frozenset({HEAD_NAME, VERIFIED_NAME, HEAD_NAME + ".tmp",
                               VERIFIED_NAME + ".tmp"})
"""Files of a journal directory that are not record files: ``journal verify DIR/*`` names them
too, and reading the head as records reported a journal DAMAGED (a false tamper alarm)."""

FILE_PREFIX = "journal-"
FILE_SUFFIX = ".jsonl"
_FILE_RE = re.compile(r"^journal-(\d{6,})\.jsonl$")
_TAIL_CHUNK = 64 * 1024
REPAIR_EVIDENCE_BYTES = 4096
"""How much of a dropped torn line is kept (hex) in the ``journal_repaired`` record."""


def file_name(index: int) -> str:
    return f"{FILE_PREFIX}{index:06d}{FILE_SUFFIX}"


def file_index(path: str | Path) -> int | None:
    """The counter in a journal file's name, or None for a name the writer would not make."""
    match = _FILE_RE.match(Path(path).name)
    return int(match.group(1)) if match else None


def journal_files(directory: str | Path) -> list[Path]:
    """The journal files of a directory in chain order (by counter)."""
    folder = Path(directory)
    try:
        names = os.listdir(folder)
    except OSError as error:
        raise JournalIOError(f"{folder}: {error.strerror or error}") from error
    found = [(file_index(name), folder / name) for name in names]
    return [path for index, path in sorted((i, p) for i, p in found if i is not None)]


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files and directories given by a user, as journal files in chain order.

    A directory stands for its journal files. Files are ordered by their counter (then name),
    whatever order they were given in, because the order on the command line is not evidence;
    the names are, and a renamed or swapped file is then caught by the chain.
    """
    out: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            files = journal_files(path)
            if not files:
                raise JournalIOError(f"{path}: no journal files (journal-NNNNNN.jsonl) in it")
            out.extend(files)
        elif path.is_file():
            if path.name not in BOOKKEEPING_NAMES:
                out.append(path)
        elif path.exists():
            raise JournalIOError(f"{path}: not a regular file")
        else:
            raise JournalIOError(f"{path}: no such file or directory")
    unique = list(dict.fromkeys(out))
    return sorted(unique, key=lambda p: (file_index(p) is None, file_index(p) or 0, p.name, str(p)))


def read_lines(path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """``(line number from 1, bytes without the newline, whether a newline ended it)``."""
    for number, _offset, raw, terminated in read_lines_at(path):
        yield number, raw, terminated


def read_lines_at(path: Path, offset: int = 0, first_line: int = 1
                  ) -> Iterator[tuple[int, int, bytes, bool]]:
    """``(line number, byte offset of the line, bytes without the newline, terminated)`` from
    ``offset`` (the start of line ``first_line``) to the end of the file."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            for number, raw in enumerate(handle, start=first_line):
                terminated = raw.endswith(b"\n")
                yield number, offset, raw[:-1] if terminated else raw, terminated
                offset += len(raw)
    except OSError as error:
        raise JournalIOError(f"{path}: {error.strerror or error}") from error


@dataclass(frozen=True, slots=True)
class Tail:
    """The sound end of a journal file as the writer finds it on resume."""

    first: Record | None
    """The file's first record (its UTC day decides daily rotation), if sound."""
    last: Record | None
    """The last sound record, None when the file holds none."""
    keep_bytes: int
    """File length up to and including the last sound record's newline."""
    dropped: bytes
    """What follows it: a torn line after a power cut, normally empty."""


def scan_tail(path: Path, hmac_key: bytes | None) -> Tail:
    """Find the last sound record of ``path`` reading backwards, and what follows it.

    A power cut can leave a torn last line (a prefix of the record, or zero-filled blocks),
    and at worst one complete but garbled last line when pages reach the disk out of order.
    Anything more than that after the last sound record is not a power-cut artefact, so this
    raises :class:`JournalDamagedError` rather than let the writer truncate evidence.
    """
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            pos, buf = size, b""
            while pos > 0 and buf.count(b"\n") < 3:
                step = min(_TAIL_CHUNK, pos)
                pos -= step
                handle.seek(pos)
                buf = handle.read(step) + buf
            first_raw = b""
            if size:
                handle.seek(0)
                first_raw = handle.readline()
    except OSError as error:
        raise JournalIOError(f"{path}: {error.strerror or error}") from error
    parts = buf.split(b"\n")
    # parts[-1] follows the last newline (a torn line or b""); parts[0] may start mid-line.
    ends: list[tuple[bytes, int]] = []  # complete lines from the end, with their end offset
    offset = pos
    for index, part in enumerate(parts[:-1]):
        offset += len(part) + 1
        if index == 0 and pos > 0:
            continue
        ends.append((part, offset))
    complete_after = 0
    for raw, end in reversed(ends[-2:]):
        found = check_line(raw, hmac_key)
        if isinstance(found, Record):
            first = check_line(first_raw.rstrip(b"\n"), hmac_key) if first_raw.endswith(b"\n") \
                else None
            with path.open("rb") as handle:
                handle.seek(end)
                dropped = handle.read()
            return Tail(first if isinstance(first, Record) else found, found, end, dropped)
        complete_after += 1
    if complete_after >= 2 or (pos > 0 and complete_after >= 1) or (pos > 0 and not ends):
        raise JournalDamagedError(
            f"{path}: the last records are damaged, not torn by a power cut; "
            f"refusing to truncate (run 'tablectl journal verify {path}')"
        )
    return Tail(None, None, 0, buf if pos == 0 else b"")


def repair_payload(path: Path, kept: int, dropped: bytes) -> dict[str, Any]:
    """Evidence of what a repair removed: where, how much, its digest and (bounded) bytes."""
    return {
        "file": path.name,
        "truncated_at": kept,
        "bytes_dropped": len(dropped),
        "dropped_sha256": hashlib.sha256(dropped).hexdigest(),
        "dropped_hex": dropped[:REPAIR_EVIDENCE_BYTES].hex(),
        "dropped_hex_complete": len(dropped) <= REPAIR_EVIDENCE_BYTES,
    }
