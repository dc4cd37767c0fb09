"""The gateway's ledger: every idempotency key with the answer it got, and every refusal the
gateway gave itself, each a JSON line fsync'ed before the answer leaves.

Why a ledger beside the table's journal: the table journals each wager with the batch's key
in its actor (``<game server> [operator via studio <key>]``), so the journal holds which batch
placed what; but a resent batch must get the *same answer*, refusals included, and a key
reused for other content must be refused, which needs the answer and the content's digest.
The ledger survives a restart of the gateway (it is read back at start); the table's state
stays the authority on what was placed (:mod:`.gateway` checks ``wager.list``)."""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from controller.studio.errors import StudioError

log = structlog.get_logger(__name__)

START_ROOM_BYTES = 64 * 1024
"""Room the ledger's disk must have at start (written and fsync'ed beside it, then removed):
several batches' answers, so a full disk is found before the gateway listens, not at the first
answer it could not record."""
_MAY_COME_BACK = {errno.ENOSPC: "full", errno.EDQUOT: "full (quota)",
                  errno.EROFS: "read-only", errno.EIO: "failing (I/O error)"}
"""OS errors of a disk that may come back (space freed, remounted read-write); a permission or
a missing directory is a deployment mistake (as ``tablectl run`` judges its journal's disk)."""

KEEP_KEYS = 20_000
"""Keys remembered (the newest): about three days of a studio's rounds (an open, four batches
and a close a round). A key older than that is answered afresh, which places nothing in a round
long closed; the file keeps them all until it is rotated."""


class LedgerUnavailableError(StudioError):
    """The ledger's disk is full, read-only or failing: it may come back, so ``tablectl
    studio`` exits 75 (``EX_TEMPFAIL``) for systemd to retry, as ``tablectl run`` does for its
    journal's disk."""


def _unusable(path: Path, error: OSError) -> StudioError:
    """The error for a ledger at ``path`` that cannot be written: the path and the OS's
    reason, retried when the disk may come back."""
    gone = _MAY_COME_BACK.get(error.errno or 0)
    if gone is not None:
        return LedgerUnavailableError(f"studio ledger {path}: {error.strerror or error} (its "
                                      f"disk is {gone}: retried, not a configuration error)")
    return StudioError(f"studio ledger {path}: {error.strerror or error}")


@dataclass(frozen=True, slots=True)
class Entry:
    digest: str
    answer: dict[str, Any]


class Ledger:
    """``(client, key) -> Entry``, kept in memory and appended to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, str], Entry] = OrderedDict()
        self.refusals = 0
        self.last_open: tuple[str, dict[str, Any]] | None = None
        """The newest round opened through the gateway: its game server and the answer."""
        self._opened: OrderedDict[int, str] = OrderedDict()
        """Round -> the game server that opened it, the newest :data:`KEEP_KEYS` (a round is
        read back from the table's journal only by the game server that opened it)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                self._load()
            _probe(path)
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (held open)
        except OSError as error:
            raise _unusable(path, error) from error

    def _load(self) -> None:
        with open(self.path, encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    log.warning("studio ledger: torn line skipped", line=number)
                    continue  # a power cut mid-line: the answer never left, a resend redoes it
                if record.get("kind") == "answer":
                    self._keep((record["client"], record["key"]),
                               Entry(record["digest"], record["answer"]))
                    self._note_open(record["client"], record["answer"])

    def get(self, client: str, key: str) -> Entry | None:
        with self._lock:
            return self._entries.get((client, key))

    def record_answer(self, client: str, key: str, digest: str, answer: dict[str, Any]) -> None:
        with self._lock:
            self._keep((client, key), Entry(digest, answer))
            self._note_open(client, answer)
            self._append({"kind": "answer", "client": client, "key": key, "digest": digest,
                          "answer": answer})

    def _keep(self, key: tuple[str, str], entry: Entry) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > KEEP_KEYS:
            self._entries.popitem(last=False)

    def _note_open(self, client: str, answer: dict[str, Any]) -> None:
        if answer.get("ok") and "betting_seconds" in answer:
            self.last_open = (client, answer)
            if isinstance(answer.get("round"), int):
                self._opened[answer["round"]] = client
                while len(self._opened) > KEEP_KEYS:
                    self._opened.popitem(last=False)

    def opener(self, round_number: int) -> str | None:
        """The game server that opened ``round_number`` through this gateway, if remembered."""
        with self._lock:
            return self._opened.get(round_number)

    def record_refusal(self, client: str, code: str, message: str) -> None:
        """A refusal the gateway gave without the table (no certificate, a batch too large, a
        key reused for other content): who, what and why."""
        with self._lock:
            self.refusals += 1
            self._append({"kind": "refusal", "client": client, "code": code,
                          "message": message})
        log.warning("studio_refused", client=client, code=code, message=message)

    def _append(self, record: dict[str, Any]) -> None:
        record["at"] = time.time()
        self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _probe(path: Path) -> None:
    """Write :data:`START_ROOM_BYTES` to a file beside the ledger, fsync it and remove it: the
    ledger's disk takes what the gateway will append (opening the ledger for appending does
    not touch the disk, and its last page may still have room on a full disk)."""
    probe = path.with_name(f".{path.name}.probe")
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        block = memoryview(bytes(START_ROOM_BYTES))
        while block:
            block = block[os.write(fd, block):]
        os.fsync(fd)
    finally:
        os.close(fd)
        try:
            probe.unlink()
        except FileNotFoundError:
            pass
