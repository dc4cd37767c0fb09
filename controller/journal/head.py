"""Marks kept beside the journal files: the chain's durable head, and the point up to which the
service last verified the journal.

The hash chain shows any edit *inside* the journal but not a cut at its end: a journal with its
last records (or its newest file) removed is still a valid chain. The **head** closes that gap.
``journal.head`` sits in the journal directory under a name no journal file can have (so
listing, retention and backups treat it apart, and it lives on the same filesystem, under the
same ownership and fsync discipline as the records it vouches for). It holds the sequence number
and hash of the newest record known to be on disk, keyed with the journal's HMAC key when there
is one. The writer updates it after each durable write (after the record's own ``fsync``, so
it never claims more than the disk holds) by rewriting one of two fixed 512-byte slots in place
with ``pwrite``: no allocation, so a full disk cannot stop it, and a torn write spoils one slot
while the other still holds the previous head. The head itself is forced to disk
(``fdatasync``) every :data:`SYNC_EVERY` updates and at rotation, close and ``sync()``, not after
each: a second fsync per money record would double what dealing a card waits for on an SD card.
A killed process loses nothing (the page cache keeps the head); a power cut can leave it up to
:data:`SYNC_EVERY` durable records behind, which is still a lower bound: it never reports a cut
where there is none. ``verify`` holds the files
against it: a journal that ends before the head's record is ``truncated``.

The **verified mark** (``journal.verified``) is where the service's start-up check last found the
chain intact (file, byte offset, line, sequence number, hash), so the next start checks only what
was written since, not the whole history. It is replaced atomically (write, fsync, rename).

Both are evidence only with a key: without one, whoever can rewrite the journal can rewrite
these too (docs/journal.md, "Limits").
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from controller.journal.errors import JournalIOError
from controller.journal.record import canonical_json, compute_hmac, hmac_matches

HEAD_NAME = "journal.head"
VERIFIED_NAME = "journal.verified"
SLOT_BYTES = 512
SYNC_EVERY = 16
"""Head updates between two ``fdatasync`` of the head (see the module docstring)."""
MARK_VERSION = 1


@dataclass(frozen=True, slots=True)
class Head:
    """The newest durable record: its sequence number and hash, and the file it is in."""

    table: str
    seq: int
    hash: str
    file: str
    keyed: bool = False
    """The head carries an HMAC, so the journal is keyed."""


@dataclass(frozen=True, slots=True)
class Mark:
    """A record verified intact by the start-up check, and where its line starts."""

    table: str
    seq: int
    hash: str
    file: str
    offset: int
    line: int
    acknowledged: tuple[str, ...] = ()
    """Damage a supervisor acknowledged (``startup.damage_key``): found again, it holds
    nothing."""
    pending: tuple[str, ...] = ()
    """Damage found at a start and not acknowledged yet: the next start holds dealing again,
    even when the damage itself no longer shows (the writer moved the head past a cut)."""

    @property
    def placed(self) -> bool:
        """It names a record (a mark holding only acknowledgements does not)."""
        return bool(self.file)


@dataclass(frozen=True, slots=True)
class HeadRead:
    """What reading a head found: the head (None when missing or unreadable) and why not."""

    head: Head | None
    problem: str | None = None
    bad_hmac: bool = False
    spoiled: str | None = None
    """The other slot is not blank and not a sound head (why): the head is then only known
    as this older slot, and a newer one may have named records after it. A torn write only
    spoils the slot being written after its record's fsync, so a power cut leaves that record
    on disk; a journal ending at the sound slot's record is what a spoiled newer slot *and* a
    cut last record look like (``verify``: ``truncated``)."""


def _seal(body: dict[str, Any], key: bytes | None) -> dict[str, Any]:
    sealed = dict(body)
    sealed["sha256"] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
    if key is not None:
        sealed["hmac"] = compute_hmac(key, body)
    return sealed


def _unseal(text: str, key: bytes | None) -> tuple[dict[str, Any] | None, str | None, bool]:
    """``(body, problem, keyed)`` of one sealed mark."""
    try:
        sealed = json.loads(text)
    except ValueError:
        return None, "not JSON", False
    if not isinstance(sealed, dict) or sealed.get("v") != MARK_VERSION:
        return None, "not a mark of this version", False
    claimed_hmac = sealed.pop("hmac", None)
    digest = sealed.pop("sha256", None)
    if digest != hashlib.sha256(canonical_json(sealed).encode()).hexdigest():
        return None, "damaged (checksum)", False
    keyed = isinstance(claimed_hmac, str)
    if key is not None and (not keyed or not hmac_matches(key, sealed, claimed_hmac)):
        return None, "HMAC absent or wrong for this key", keyed
    return sealed, None, keyed


class HeadFile:
    """The writer's handle on ``journal.head``: two slots, the newer one rewritten in place."""

    def __init__(self, directory: Path, table: str, key: bytes | None, *, sync: bool) -> None:
        self.path = directory / HEAD_NAME
        self.table = table
        self.key = key
        self.sync = sync
        self.found = read_head(self.path, key)
        """The head as it was when the writer opened the journal (before any update)."""
        self.error: str | None = None
        self._slot = 0
        self._unsynced = 0
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o640)
            size = os.fstat(self._fd).st_size
            if size < 2 * SLOT_BYTES:  # allocate both slots now, while there is room
                os.pwrite(self._fd, b" " * (2 * SLOT_BYTES - size), size)
                os.fsync(self._fd)
        except OSError as error:
            raise JournalIOError(f"{self.path}: {error.strerror or error}") from error
        self._slot = _newest_slot(self.path, key)
        found = self.found.head
        self._written = None if found is None else (found.seq, found.hash, found.file)

    def update(self, seq: int, hash_: str, file: str, *, force: bool = False) -> None:
        """Record ``seq``/``hash_`` as the durable head, in the slot not holding the newest;
        synced every :data:`SYNC_EVERY` updates, or now when ``force``. A failure is kept in
        :attr:`error` and logged by the caller, never raised: the record itself is already on
        disk and must not be taken for unwritten.

        The same head is not written again (a ``sync()`` with nothing new): the two slots then
        never name the same record, so a slot a torn write spoils always named a later record
        than the other, which is what lets ``verify`` tell a torn write from a cut."""
        if (seq, hash_, file) == self._written:
            if self.sync and force and self._unsynced:
                try:
                    os.fdatasync(self._fd)
                    self._unsynced = 0
                except OSError as error:
                    self.error = f"{self.path}: {error.strerror or error}"
            return
        body = asdict(Head(self.table, seq, hash_, file))
        body.pop("keyed")
        body["v"] = MARK_VERSION
        data = canonical_json(_seal(body, self.key)).encode()
        slot = 1 - self._slot
        try:
            os.pwrite(self._fd, data.ljust(SLOT_BYTES - 1) + b"\n", slot * SLOT_BYTES)
            self._unsynced += 1
            if self.sync and (force or self._unsynced >= SYNC_EVERY):
                os.fdatasync(self._fd)
                self._unsynced = 0
        except OSError as error:
            self.error = f"{self.path}: {error.strerror or error}"
            return
        self.error = None
        self._slot = slot
        self._written = (seq, hash_, file)

    def close(self) -> None:
        os.close(self._fd)


def _slots(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [data[i * SLOT_BYTES:(i + 1) * SLOT_BYTES] for i in range(2)]


def _read_slots(path: Path, key: bytes | None) -> list[tuple[int, Head | None, str | None, bool]]:
    out = []
    for index, raw in enumerate(_slots(path)):
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            out.append((index, None, "empty", False))
            continue
        body, problem, keyed = _unseal(text, key)
        if body is None:
            out.append((index, None, problem, keyed))
            continue
        try:
            head = Head(str(body["table"]), int(body["seq"]), str(body["hash"]),
                        str(body["file"]), keyed)
        except (KeyError, TypeError, ValueError):
            out.append((index, None, "fields missing", keyed))
            continue
        out.append((index, head, None, keyed))
    return out


def _newest_slot(path: Path, key: bytes | None) -> int:
    found = [(head.seq, index) for index, head, _p, _k in _read_slots(path, key) if head]
    return max(found)[1] if found else 1


def read_head(path: Path, key: bytes | None) -> HeadRead:
    """The newest sound slot of ``path`` (checked against ``key`` when given)."""
    try:
        slots = _read_slots(path, key)
    except FileNotFoundError:
        return HeadRead(None, f"{path}: missing")
    except OSError as error:
        return HeadRead(None, f"{path}: {error.strerror or error}")
    heads = [head for _i, head, _p, _k in slots if head is not None]
    spoiled = [p for _i, head, p, _k in slots if head is None and p != "empty"]
    if heads:
        return HeadRead(max(heads, key=lambda h: h.seq),
                        spoiled=spoiled[0] if spoiled else None)
    problems = sorted({p for _i, _h, p, _k in slots if p and p != "empty"})
    bad_hmac = any(p == "HMAC absent or wrong for this key" for p in problems)
    return HeadRead(None, f"{path}: no sound head ({', '.join(problems) or 'empty'})",
                    bad_hmac)


def read_mark(directory: Path, key: bytes | None) -> Mark | None:
    """The verified mark of ``directory``, or None (missing, damaged, wrong key)."""
    try:
        text = (directory / VERIFIED_NAME).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    body, _problem, _keyed = _unseal(text.strip(), key)
    if body is None:
        return None
    try:
        return Mark(str(body["table"]), int(body["seq"]), str(body["hash"]), str(body["file"]),
                    int(body["offset"]), int(body["line"]),
                    tuple(str(item) for item in body.get("acknowledged", ())),
                    tuple(str(item) for item in body.get("pending", ())))
    except (KeyError, TypeError, ValueError):
        return None


def write_mark(directory: Path, mark: Mark, key: bytes | None) -> None:
    """Replace the verified mark atomically (a crash leaves the old one or the new one)."""
    body: dict[str, Any] = asdict(mark)
    body["acknowledged"] = list(mark.acknowledged)
    body["pending"] = list(mark.pending)
    body["v"] = MARK_VERSION
    target = directory / VERIFIED_NAME
    temporary = directory / (VERIFIED_NAME + ".tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
        try:
            os.write(fd, (canonical_json(_seal(body, key)) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as error:
        raise JournalIOError(f"{target}: {error.strerror or error}") from error
