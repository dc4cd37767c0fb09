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
from controller.journal.errors import JournalIOError
from controller.journal.files import (
    expand_paths,
    file_index,
    journal_files,
    read_lines,
    read_lines_at,
)
from controller.journal.head import (
    HEAD_NAME,
    VERIFIED_NAME,
    Head,
    HeadRead,
    Mark,
    read_head,
    read_mark,
)
from controller.journal.record import FIRST_SEQ, GENESIS_HASH
from controller.journal.policy import JournalEvent

_SEQ_RE = re.compile(rb'"seq":(\d+)')
_KEPT_PAYLOADS = frozenset(
    {JournalEvent.FILE_OPENED.value, JournalEvent.RETENTION_CHECKPOINT.value,
     JournalEvent.DAMAGE_FOUND.value, JournalEvent.DAMAGE_ACKNOWLEDGED.value}
)


class Anchor(str, Enum):
    """What the first record verified links back to."""

    GENESIS = "genesis"
    """Sequence 1, linked to the all-zero genesis hash: the journal is complete from its start."""
    CHECKPOINT = "checkpoint"
    """A later retention checkpoint vouches for the records deleted before the first file."""
    UNANCHORED = "unanchored"
    """Nothing vouches for the start (only accepted with ``allow_unanchored``)."""
    VERIFIED = "verified"
    """The service's verified mark: the chain up to it was found intact at an earlier start
    (an incremental check, :mod:`controller.journal.head`)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """The first bad place in a journal."""

    kind: Damage
    file: str
    line: int
    seq: int | None
    detail: str
    offset: int | None = None
    """Where the bad line starts in ``file``, when the problem is a line."""

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
    head: Head | None = None
    """The head (``journal.head``) the files were held against, when there was one."""
    unchecked: tuple[str, ...] = field(default=())
    """What the journal says it carries that could not be checked (a keyed journal without
    its key, a journal without its head): not damage, but not proof either."""
    mark: Mark | None = None
    """The last record verified (before the problem, if any) and where its line starts: where
    the next incremental check may start."""

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def complete(self) -> bool:
        """Intact, and everything it carries was checked."""
        return self.problem is None and not self.unchecked

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "files": list(self.files), "records": self.records,
            "first_seq": self.first_seq, "last_seq": self.last_seq, "last_hash": self.last_hash,
            "anchor": self.anchor.value if self.anchor else None,
            "hmac_checked": self.hmac_checked, "hmac_present": self.hmac_present,
            "closed": self.closed, "problem": self.problem.to_dict() if self.problem else None,
            "notes": list(self.notes),
            "head": None if self.head is None else {"seq": self.head.seq, "hash": self.head.hash,
                                                    "file": self.head.file,
                                                    "keyed": self.head.keyed},
            "unchecked": list(self.unchecked),
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
    offset: int


def _scan_file(path: Path, key: bytes | None, offset: int = 0, first_line: int = 1
               ) -> tuple[list[_Entry], tuple[int, int | None, LineFault, int] | None]:
    """Every sound line of ``path`` (from ``offset``) up to the first unsound one, and that one
    (line, seq hint, fault). Lines after it are not read: they cannot be placed in the chain."""
    entries: list[_Entry] = []
    for number, start, raw, terminated in read_lines_at(path, offset, first_line):
        if not terminated:
            hint = _SEQ_RE.search(raw)
            return entries, (number, int(hint.group(1)) if hint else None,
                             LineFault(Damage.TRUNCATED, "file ends inside a record (torn line)"),
                             start)
        found = check_line(raw, key)
        if isinstance(found, LineFault):
            hint = _SEQ_RE.search(raw)
            return entries, (number, int(hint.group(1)) if hint else None, found, start)
        entries.append(_Entry(number, found.seq, found.hash, found.prev_hash, found.event_type,
                              dict(found.payload) if found.event_type in _KEPT_PAYLOADS
                              else None, found.hmac is not None, start))
    return entries, None


def _first_seq(path: Path) -> int | None:
    for _number, raw, _terminated in read_lines(path):
        hint = _SEQ_RE.search(raw)
        return int(hint.group(1)) if hint else None
    return None


class _Chain:
    """The running state of the chain check across files."""

    def __init__(self, files: list[Path], since: Mark | None = None) -> None:
        self.files = files
        self.since = since
        self.offset = 0
        self.hashes_at: dict[int, tuple[str, Path, int]] = {}
        """Hashes of the records a head names (seq -> hash, file, line)."""
        self.watch: set[int] = set()
        self.damage_found: dict[int, dict[str, Any]] = {}
        self.acknowledged: dict[int, dict[str, Any]] = {}
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
            return Problem(kind, str(path), e.line, e.seq, detail, e.offset)

        if self.seq is None or self.hash is None:
            since = self.since
            if since is not None and (e.seq, e.hash) == (since.seq, since.hash):
                self.anchor = Anchor.VERIFIED
                self.first_seq = e.seq
                return None
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
        self.offset = e.offset
        self.recent[e.seq] = e.hash
        if e.seq in self.watch:
            self.hashes_at[e.seq] = (e.hash, self.files[fi], e.line)
        if e.event == JournalEvent.DAMAGE_FOUND.value and e.payload is not None:
            self.damage_found[e.seq] = e.payload
        elif e.event == JournalEvent.DAMAGE_ACKNOWLEDGED.value and e.payload is not None:
            found = e.payload.get("found_seq")
            earlier = e.payload.get("also_found_seqs")
            for seq in [found, *(earlier if isinstance(earlier, list) else [])]:
                if isinstance(seq, int):
                    self.acknowledged[seq] = dict(e.payload, _seq=e.seq)
        self.records += 1
        self.hmac_present = self.hmac_present or e.has_hmac
        self.closed = e.event == JournalEvent.CLOSED.value
        if e.event == JournalEvent.RETENTION_CHECKPOINT.value and e.payload is not None:
            seq, hash_ = e.payload.get("last_deleted_seq"), e.payload.get("last_deleted_hash")
            if isinstance(seq, int) and isinstance(hash_, str):
                self.checkpoints.add((seq, hash_))


DEFAULT_HEAD = object()
"""``verify(head=...)`` default: ``journal.head`` beside the newest file."""


def verify(
    paths: Iterable[str | Path],
    *,
    hmac_key: bytes | None = None,
    allow_unanchored: bool = False,
    head: str | Path | None | object = DEFAULT_HEAD,
    since: Mark | None = None,
    until: tuple[int, str] | None = None,
) -> VerifyReport:
    """Check the journal in ``paths`` (files and/or directories, taken in file-name order).

    Raises :class:`controller.journal.errors.JournalIOError` only when a file cannot be read;
    damage is returned in the report. ``allow_unanchored`` accepts a journal whose start no
    checkpoint vouches for and which has no head (an excerpt handed over for review).

    ``head``: the head file the end of the journal is held against (default: ``journal.head``
    beside the newest file; ``None``: none). ``since``: the service's verified mark: the check
    starts at that record instead of the journal's start (falls back to a full check when the
    mark's record is not where it says).

    ``until``: ``(seq, hash)`` of the last record a running writer had appended when the check
    began (the background check, :mod:`controller.journal.fullcheck`): the check stops there and
    holds that record to that hash in place of the head, which the writer keeps moving while the
    files are read (a head or a line written meanwhile is not damage; the next check covers it).
    """
    files = expand_paths(paths)
    if until is not None:
        head = None
    head_path = _default_head(files) if head is DEFAULT_HEAD \
        else (None if head is None else Path(head))  # type: ignore[arg-type]
    head_read = read_head(head_path, hmac_key) if head_path is not None else None
    wanted = head_read.head if head_read is not None else None
    marked = read_mark(head_path.parent, hmac_key) if head_path is not None else None
    if marked is not None and not marked.placed:
        marked = None
    watch = {vouched.seq for vouched in (wanted, marked) if vouched is not None}
    if until is not None:
        watch.add(until[0])
    notes: list[str] = []
    if since is not None:
        later = [f for f in files if (file_index(f) or 0) >= (file_index(since.file) or 0)]
        if not later or later[0].name != since.file:
            notes.append(f"verified mark's file {since.file} not found: checked in full")
            since = None
        else:
            files = later
    last = until[0] if until is not None else None
    chain, found = _check_chain(files, hmac_key, since, watch, last)
    if since is not None and chain.anchor is not Anchor.VERIFIED:
        notes.append("verified mark does not match its record: checked in full")
        chain, found = _check_chain(files := expand_paths(paths), hmac_key, None, watch, last)
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
    unchecked: list[str] = []
    if chain.hmac_present and hmac_key is None:
        unchecked.append("records carry an HMAC but no key was given: HMAC not checked")
    if head_read is not None and head_read.head is None:
        if head_read.bad_hmac and found is None:
            found = Problem(Damage.BAD_HMAC, str(head_path), 1, None,
                            f"the journal head does not match this key ({head_read.problem})")
        elif allow_unanchored:
            notes.append(f"no head ({head_read.problem}): accepted as an excerpt")
        else:
            unchecked.append(f"no head ({head_read.problem}): whether records were cut from "
                             "the end cannot be checked")
    elif wanted is not None:
        if wanted.keyed and hmac_key is None:
            unchecked.append("the journal head carries an HMAC but no key was given")
        found = found or _held_to_head(chain, wanted, files, str(head_path)) \
            or _spoiled_head(chain, head_read, files, str(head_path))
    elif until is not None:
        found = found or _held_to_writer(chain, until, files)
    elif head_path is None and not allow_unanchored:
        unchecked.append("no head given: whether records were cut from the end is unchecked")
    if marked is not None and head_path is not None:
        found = found or _held_to_mark(chain, marked, files,
                                       str(head_path.parent / VERIFIED_NAME))
    notes.extend(_damage_notes(chain))
    if found is None and not chain.closed and chain.records:
        notes.append("journal does not end with journal_closed (still open, or cut off)")
    mark = None if chain.file is None or chain.seq is None \
        or chain.hash is None or not chain.records else \
        Mark(wanted.table if wanted else "", chain.seq, chain.hash, chain.file.name,
             chain.offset, chain.line)
    return VerifyReport(
        files=tuple(str(path) for path in files), records=chain.records,
        first_seq=chain.first_seq, last_seq=chain.seq, last_hash=chain.hash,
        anchor=chain.anchor, hmac_checked=hmac_key is not None,
        hmac_present=chain.hmac_present, closed=chain.closed, problem=found,
        notes=tuple(notes), head=wanted, unchecked=tuple(unchecked), mark=mark,
    )


def _default_head(files: list[Path]) -> Path | None:
    """``journal.head`` beside the newest file, when that file is the newest of its directory
    (the journal up to its end); an excerpt that stops earlier is not held to the head."""
    if not files:
        return None
    try:
        newest = journal_files(files[-1].parent)
    except JournalIOError:
        return None
    if newest and newest[-1].resolve() != files[-1].resolve():
        return None
    return files[-1].parent / HEAD_NAME


def _check_chain(files: list[Path], key: bytes | None, since: Mark | None,
                 watch: set[int], last: int | None = None) -> tuple[_Chain, Problem | None]:
    """The chain across ``files``; with ``last``, only up to that seq (what follows it, a line
    being written included, is not read)."""
    chain = _Chain(files, since)
    chain.watch |= watch
    found: Problem | None = None
    for fi, path in enumerate(files):
        start = (since.offset, since.line) if since is not None and fi == 0 else (0, 1)
        entries, fault = _scan_file(path, key, *start)
        for k, entry in enumerate(entries):
            found = chain.link(fi, k, entries)
            if found is not None:
                break
            chain.accept(fi, entry, k == 0)
            if last is not None and entry.seq >= last:
                return chain, None
        if found is None and fault is not None:
            line, seq, why, offset = fault
            expected = None if chain.seq is None else chain.seq + 1
            found = Problem(why.kind, str(path), line, seq if seq is not None else expected,
                            why.detail, offset)
        if found is not None:
            break
    return chain, found


def _held_to_head(chain: _Chain, head: Head, files: list[Path], where: str) -> Problem | None:
    """The files against the head: the head's record must be there, with the head's hash."""
    if chain.seq is None or chain.seq < head.seq:
        ends = "has no records" if chain.seq is None else f"ends at seq {chain.seq}"
        cut = f"seq {(chain.seq or 0) + 1}..{head.seq}"
        last = str(chain.file or files[-1]) if files else where
        return Problem(Damage.TRUNCATED, last, chain.line, chain.seq,
                       f"the journal {ends} but its head ({where}) records seq {head.seq} in "
                       f"{head.file}: {cut} cut from its end")
    seen = chain.hashes_at.get(head.seq)
    if seen is not None and seen[0] != head.hash:
        return Problem(Damage.ALTERED, str(seen[1]), seen[2], head.seq,
                       f"the head ({where}) records another hash for seq {head.seq}: rewritten "
                       "since it was written")
    return None


def _held_to_writer(chain: _Chain, until: tuple[int, str], files: list[Path]
                    ) -> Problem | None:
    """The files against the running writer's last record when the check began: it must be
    there with the writer's hash (records the writer appended are on file before it returns)."""
    seq, hash_ = until
    if chain.seq is None or chain.seq < seq:
        ends = "has no records" if chain.seq is None else f"ends at seq {chain.seq}"
        last = str(chain.file or files[-1]) if files else ""
        return Problem(Damage.TRUNCATED, last, chain.line, chain.seq,
                       f"the journal {ends} but its writer had appended seq {seq}: "
                       f"seq {(chain.seq or 0) + 1}..{seq} cut from its end")
    seen = chain.hashes_at.get(seq)
    if seen is not None and seen[0] != hash_:
        return Problem(Damage.ALTERED, str(seen[1]), seen[2], seq,
                       f"the writer appended another hash for seq {seq}: rewritten since")
    return None


def _spoiled_head(chain: _Chain, read: HeadRead | None, files: list[Path], where: str
                  ) -> Problem | None:
    """One head slot damaged and the journal ending at the record the other one names: a
    spoiled newer slot and a cut last record, which nothing else tells from a torn head write.
    A power cut cannot leave it: the slot being written names a record already fsynced, so
    the journal holds a record after the sound slot's (a spoiled *older* slot on a journal
    that ends at the newer one is media damage, and reported as the same: the head cannot
    vouch for the end)."""
    if read is None or read.head is None or read.spoiled is None or chain.seq is None \
            or chain.seq != read.head.seq:
        return None
    last = str(chain.file or files[-1]) if files else where
    return Problem(Damage.TRUNCATED, last, chain.line, chain.seq,
                   f"the journal ends at seq {chain.seq}, the record its head's sound slot "
                   f"names; the other slot of {where} is damaged ({read.spoiled}): the newer "
                   "head it held is lost, so records after it may have been cut from the end")


def _held_to_mark(chain: _Chain, mark: Mark, files: list[Path], where: str) -> Problem | None:
    """The files against the verified mark, as against the head: the mark is keyed like the
    head and names a record the service found on disk (synced before the mark was written), so
    a journal cut back before it, with an older head put back, still shows the cut."""
    if chain.seq is None or chain.seq < mark.seq:
        ends = "has no records" if chain.seq is None else f"ends at seq {chain.seq}"
        last = str(chain.file or files[-1]) if files else where
        return Problem(Damage.TRUNCATED, last, chain.line, chain.seq,
                       f"the journal {ends} but its verified mark ({where}) records seq "
                       f"{mark.seq} in {mark.file}: seq {(chain.seq or 0) + 1}..{mark.seq} cut "
                       "from its end (an older head put back does not vouch for a shorter "
                       "journal)")
    seen = chain.hashes_at.get(mark.seq)
    if seen is not None and seen[0] != mark.hash:
        return Problem(Damage.ALTERED, str(seen[1]), seen[2], mark.seq,
                       f"the verified mark ({where}) records another hash for seq {mark.seq}: "
                       "rewritten since it was verified")
    return None


def _damage_notes(chain: _Chain) -> list[str]:
    """Damage the service found at a start, and whether a supervisor acknowledged it."""
    notes = []
    for seq, found in sorted(chain.damage_found.items()):
        ack = chain.acknowledged.get(seq)
        said = f"seq {seq}: damage found at start: {found.get('kind')}: {found.get('detail')}"
        if ack is None:
            notes.append(f"{said}; NOT acknowledged by a supervisor")
        else:
            notes.append(f"{said}; acknowledged by {ack.get('actor')} ({ack.get('role')}) at "
                         f"seq {ack['_seq']}: {ack.get('reason')}")
    return notes
