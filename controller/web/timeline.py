"""A round's records read back from the journal itself, each held against the index.

The index says where each of the round's lines is; the line is read from the journal file and
checked on its own (parse, canonical form, hash, and the HMAC when the key is readable). A line
that is no longer there, or whose hash is not the one indexed, is shown as a mismatch: the
console never shows the index's idea of a record, only the journal's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.journal.damage import check_line
from controller.journal.record import Record
from controller.web.index import JournalIndex

CHUNK = 500
HEX_KEYS = ("raw", "hex", "bytes")
"""Payload fields holding device bytes; shown as hex (``dropped_hex``, ``raw``...)."""


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One line of a round's timeline: the record as the journal holds it, or why not."""

    seq: int
    file: str
    line: int
    record: Record | None
    raw: str
    problem: str | None

    @property
    def kind(self) -> str:
        """What sort of record, for the page: input (command or device), ruling, settlement."""
        if self.record is None:
            return "mismatch"
        event = self.record.event_type
        if event == "input_command":
            return "command"
        if event == "input_device":
            return "device"
        if event in ("round_settled", "round_voided"):
            return "settlement"
        if "clause" in self.record.payload:
            return "ruling"
        return "event"


def read_round(index: JournalIndex, key: bytes | None, round_id: str) -> list[TimelineEntry]:
    """Every record of ``round_id`` in chain order, read from the journal files."""
    rows = index.query("SELECT seq, file, offset, line, hash FROM records WHERE round = ? "
                       "ORDER BY seq", (round_id,))
    return [_read(index.journal_dir, key, row) for row in rows]


def iter_seqs(index: JournalIndex, key: bytes | None, first: int, last: int
              ) -> Iterator[TimelineEntry]:
    """Every record from seq ``first`` to ``last``, read from the journal files one at a time,
    asking the index for :data:`CHUNK` seqs at a time: a streamed export of 50,000 records
    holds neither its lines nor the index's 50,000 rows (about 20 MB) at once."""
    for start in range(first, last + 1, CHUNK):
        rows = index.query("SELECT seq, file, offset, line, hash FROM records WHERE seq "
                           "BETWEEN ? AND ? ORDER BY seq", (start, min(last, start + CHUNK - 1)))
        for row in rows:
            yield _read(index.journal_dir, key, row)


def read_listed(index: JournalIndex, key: bytes | None, seqs: Iterable[int]
                ) -> Iterator[TimelineEntry]:
    """The records of the given sequence numbers (those the index knows), in chunks."""
    wanted = sorted(set(seqs))
    for start in range(0, len(wanted), CHUNK):
        chunk = wanted[start:start + CHUNK]
        rows = index.query("SELECT seq, file, offset, line, hash FROM records WHERE seq IN ("
                           + ",".join("?" * len(chunk)) + ") ORDER BY seq", tuple(chunk))
        for row in rows:
            yield _read(index.journal_dir, key, row)


def _read(directory: Path, key: bytes | None, row: Mapping[str, Any]) -> TimelineEntry:
    seq, name, line = row["seq"], row["file"], row["line"]
    try:
        with (directory / name).open("rb") as handle:
            handle.seek(row["offset"])
            raw = handle.readline()
    except OSError as error:
        return TimelineEntry(seq, name, line, None, "", f"cannot read {name}: "
                             f"{error.strerror or error}")
    text = raw.decode("utf-8", "replace").rstrip("\n")
    found = check_line(raw.rstrip(b"\n"), key)
    if not isinstance(found, Record):
        return TimelineEntry(seq, name, line, None, text,
                             f"{found.kind.value}: {found.detail} (index says seq {seq})")
    if found.hash != row["hash"] or found.seq != seq:
        return TimelineEntry(seq, name, line, None, text,
                             f"index mismatch: the journal holds seq {found.seq} with another "
                             f"hash where the index has seq {seq}")
    return TimelineEntry(seq, name, line, found, text, None)


def hex_fields(payload: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(name, hex) of the payload's device bytes, at any depth, for the timeline."""
    out: list[tuple[str, str]] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, Mapping):
            for name, item in value.items():
                here = f"{path}.{name}" if path else str(name)
                if isinstance(item, str) and any(k in str(name) for k in HEX_KEYS):
                    out.append((here, item))
                else:
                    walk(item, here)

    walk(payload, "")
    return out
