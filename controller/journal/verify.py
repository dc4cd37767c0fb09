"""Verification of a whole journal: every line, every hash, every link, across files.

The verifier stops at the FIRST problem and names it (file, line, sequence number, kind),
because after the first break nothing later can be trusted to be where it claims to be; what
matters to surveillance is where the record stops being provable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from controller.journal.damage import Damage, LineFault, check_line
from controller.journal.files import expand_paths, read_lines
from controller.journal.record import FIRST_SEQ, GENESIS_HASH
from controller.journal.policy import JournalEvent

_SEQ_RE = re.compile(rb'"seq":(\d+)')
_KEPT_PAYLOADS = frozenset(
    {JournalEvent.FILE_OPENED.value, JournalEvent.RETENTION_CHECKPOINT.value}
)


class Anchor(str, Enum):
    """What the first record verified links back to."""

    GENESIS = "genesis"
    """Sequence 1, linked to the all-zero genesis hash: the journal is complete from its start."""
    CHECKPOINT = "checkpoint"
    """A later retention checkpoint vouches for the records deleted before the first file."""
    UNANCHORED = "unanchored"
    """Nothing vouches for the start (only accepted with ``allow_unanchored``)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """The first bad place in a journal."""

    kind: Damage
    file: str
    line: int
    seq: int | None
    detail: str

    def describe(self) -> str:
        seq = f"seq {self.seq}" if self.seq is not None else "seq unknown"
        return f"{self.kind.value} at {self.file} line {self.line} ({seq}): {self.detail}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "file": self.file, "line": self.line,
                "seq": self.seq, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """The outcome of :func:`verify`; ``ok`` when no problem was found."""

    files: tuple[str, ...]
    records: int
    first_seq: int | None
    last_seq: int | None
    last_hash: str | None
    anchor: Anchor | None
    hmac_checked: bool
    hmac_present: bool
    closed: bool
    problem: Problem | None
    notes: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.problem is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "files": list(self.files), "records": self.records,
            "first_seq": self.first_seq, "last_seq": self.last_seq, "last_hash": self.last_hash,
            "anchor": self.anchor.value if self.anchor else None,
            "hmac_checked": self.hmac_checked, "hmac_present": self.hmac_present,
            "closed": self.closed, "problem": self.problem.to_dict() if self.problem else None,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class _Entry:
    """What the chain check needs of one sound line (the payload only where it matters), so
    a large file is checked without holding its records in memory."""

    line: int
    seq: int
    hash: str
    prev: str
    event: str
    payload: dict[str, Any] | None
    has_hmac: bool


def _scan_file(path: Path, key: bytes | None) -> tuple[list[_Entry], tuple[int, int | None,
                                                                         LineFault] | None]:
    """Every sound line of ``path`` up to the first unsound one, and that one (line, seq hint,
    fault). Lines after it are not read: they cannot be placed in the chain."""
    entries: list[_Entry] = []
    for number, raw, terminated in read_lines(path):
        if not terminated:
            hint = _SEQ_RE.search(raw)
            return entries, (number, int(hint.group(1)) if hint else None,
                             LineFault(Damage.TRUNCATED, "file ends inside a record (torn line)"))
        found = check_line(raw, key)
        if isinstance(found, LineFault):
            hint = _SEQ_RE.search(raw)
            return entries, (number, int(hint.group(1)) if hint else None, found)
        entries.append(_Entry(number, found.seq, found.hash, found.prev_hash, found.event_type,
                              dict(found.payload) if found.event_type in _KEPT_PAYLOADS
                              else None, found.hmac is not None))
    return entries, None


def _first_seq(path: Path) -> int | None:
    for _number, raw, _terminated in read_lines(path):
        hint = _SEQ_RE.search(raw)
        return int(hint.group(1)) if hint else None
    return None


class _Chain:
    """The running state of the chain check across files."""

    def __init__(self, files: list[Path]) -> None:
        self.files = files
        self.heads = [_first_seq(path) for path in files]
        self.seq: int | None = None
        self.hash: str | None = None
        self.file: Path | None = None
        self.line = 0
        self.first_seq: int | None = None
        self.head_anchor: tuple[int, str] | None = None  # (seq, hash) that must be vouched for
        self.anchor: Anchor | None = None
        self.recent: dict[int, str] = {}
        self.checkpoints: set[tuple[int, str]] = set()
        self.records = 0
        self.hmac_present = False
        self.closed = False

    def link(self, fi: int, k: int, entries: list[_Entry]) -> Problem | None:
        e, path = entries[k], self.files[fi]

        def problem(kind: Damage, detail: str) -> Problem:
            return Problem(kind, str(path), e.line, e.seq, detail)

        if self.seq is None or self.hash is None:
            if e.seq == FIRST_SEQ:
                if e.prev != GENESIS_HASH:
                    return problem(Damage.ALTERED, "sequence 1 does not link to the genesis hash")
                self.anchor = Anchor.GENESIS
            else:
                self.head_anchor = (e.seq - 1, e.prev)
            self.first_seq = e.seq
            return None
        p_seq, p_hash = self.seq, self.hash
        if e.seq == p_seq + 1:
            if e.prev != p_hash:
                return problem(Damage.ALTERED, f"does not link to seq {p_seq}: one of the two "
                                               "was rewritten")
            return None
        if e.seq <= p_seq:
            if self.recent.get(e.seq) == e.hash:
                return problem(Damage.DUPLICATED, f"seq {e.seq} appears again")
            if k == 0:
                return problem(Damage.FILE_SWAPPED, f"file starts at seq {e.seq} but the file "
                                                    f"before ends at seq {p_seq}")
            return problem(Damage.REORDERED, f"seq {e.seq} after seq {p_seq}")
        missing = f"seq {p_seq + 1}" + (f"..{e.seq - 1}" if e.seq - 1 > p_seq + 1 else "")
        if k > 0:
            if any(p_seq < later.seq < e.seq for later in entries[k + 1:]):
                return problem(Damage.REORDERED, f"seq {e.seq} comes before {missing}")
            return problem(Damage.MISSING, f"{missing} missing before this record")
        if p_seq + 1 in self.heads[fi + 1:]:
            return problem(Damage.FILE_SWAPPED, f"the chain continues at {missing} in another "
                                                "file, not in this one")
        named = (e.payload or {}).get("previous_file") if e.event == \
            JournalEvent.FILE_OPENED.value else None
        if self.file is not None and named == self.file.name:
            return Problem(Damage.TRUNCATED, str(self.file), self.line, p_seq,
                           f"file ends at seq {p_seq}; {missing} cut from its end "
                           f"({path.name} continues at seq {e.seq})")
        return problem(Damage.GAP, f"{missing} missing: a whole file"
                                   + (f" ({named})" if named else "") + " is absent")

    def accept(self, fi: int, e: _Entry, new_file: bool) -> None:
        if new_file:  # keep the previous file's hashes too, for duplicates across a boundary
            self.recent = {s: h for s, h in self.recent.items()
                           if self.seq is not None and s > self.seq - 100_000}
        self.seq, self.hash, self.file, self.line = e.seq, e.hash, self.files[fi], e.line
        self.recent[e.seq] = e.hash
        self.records += 1
        self.hmac_present = self.hmac_present or e.has_hmac
        self.closed = e.event == JournalEvent.CLOSED.value
        if e.event == JournalEvent.RETENTION_CHECKPOINT.value and e.payload is not None:
            seq, hash_ = e.payload.get("last_deleted_seq"), e.payload.get("last_deleted_hash")
            if isinstance(seq, int) and isinstance(hash_, str):
                self.checkpoints.add((seq, hash_))


def verify(
    paths: Iterable[str | Path],
    *,
    hmac_key: bytes | None = None,
    allow_unanchored: bool = False,
) -> VerifyReport:
    """Check the journal in ``paths`` (files and/or directories, taken in file-name order).

    Raises :class:`controller.journal.errors.JournalIOError` only when a file cannot be read;
    damage is returned in the report. ``allow_unanchored`` accepts a journal whose start no
    checkpoint vouches for (an excerpt handed over for review).
    """
    files = expand_paths(paths)
    chain = _Chain(files)
    found: Problem | None = None
    for fi, path in enumerate(files):
        entries, fault = _scan_file(path, hmac_key)
        for k, entry in enumerate(entries):
            found = chain.link(fi, k, entries)
            if found is not None:
                break
            chain.accept(fi, entry, k == 0)
        if found is None and fault is not None:
            line, seq, why = fault
            expected = None if chain.seq is None else chain.seq + 1
            found = Problem(why.kind, str(path), line, seq if seq is not None else expected,
                            why.detail)
        if found is not None:
            break
    notes: list[str] = []
    if chain.head_anchor is not None:
        if chain.head_anchor in chain.checkpoints:
            chain.anchor = Anchor.CHECKPOINT
        else:
            chain.anchor = Anchor.UNANCHORED
            if found is None and not allow_unanchored:
                first_seq = chain.head_anchor[0] + 1
                found = Problem(Damage.MISSING, str(files[0]), 1, first_seq,
                                f"journal starts at seq {first_seq}; neither genesis nor a "
                                "retention checkpoint accounts for the records before it")
            elif found is None:
                notes.append("start not anchored: accepted as an excerpt")
    if chain.hmac_present and hmac_key is None:
        notes.append("records carry an HMAC but no key was given: HMAC not checked")
    if found is None and not chain.closed and chain.records:
        notes.append("journal does not end with journal_closed (still open, or cut off)")
    return VerifyReport(
        files=tuple(str(path) for path in files), records=chain.records,
        first_seq=chain.first_seq, last_seq=chain.seq, last_hash=chain.hash,
        anchor=chain.anchor, hmac_checked=hmac_key is not None,
        hmac_present=chain.hmac_present, closed=chain.closed, problem=found,
        notes=tuple(notes),
    )
