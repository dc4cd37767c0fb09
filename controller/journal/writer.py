"""The journal writer: append-only, hash-chained JSON Lines, written through structlog.

Each record passes through its own structlog processor chain (stamp -> serialise -> seal ->
render) into a file sink, never through the process-wide operational logging configuration:
the surveillance journal must not change when someone reconfigures the operator's log, and the
operator's log must never end up in the journal.

Durability is a policy (:class:`Durability`). Under the default ``money`` policy a record that
decides money is on disk (``fsync``) before :meth:`JournalWriter.append` returns, so the
controller never acts on a decision a power cut could erase.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import structlog

from controller import __version__
from controller.journal.errors import (
    JournalClosedError,
    JournalConfigError,
    JournalDamagedError,
    JournalIOError,
    JournalValueError,
)
from controller.journal.damage import check_line
from controller.journal.files import (
    file_index,
    file_name,
    journal_files,
    read_lines,
    repair_payload,
    scan_tail,
)
from controller.journal.head import HeadFile
from controller.journal.policy import MONEY_EVENT_TYPES, Durability, JournalEvent
from controller.journal.record import (
    FORMAT_VERSION,
    GENESIS_HASH,
    Record,
    event_type_of,
    format_ts,
    hmac_matches,
    payload_text,
    seal_and_render,
    to_jsonable,
)

log = structlog.get_logger("controller.journal.writer")

DEFAULT_ROTATE_BYTES = 64 * 1024 * 1024
FILE_MODE = 0o640
"""Owner writes, the surveillance group reads, nobody else."""
DIR_MODE = 0o750


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class _FileSink:
    """The structlog "logger" at the end of the journal's processor chain: it receives the
    rendered line and hands it to the writer, which owns the file descriptor."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write

    def msg(self, line: str) -> None:
        self._write(line)


class JournalWriter:
    """Appends records to ``directory``; resumes (and, after a power cut, repairs) what is
    there. Thread-safe: one lock (``self.lock``, re-entrant: recovery holds it across its
    reads and appends) serialises appends, rotation and close."""

    def __init__(
        self,
        directory: str | Path,
        *,
        table_id: str,
        hmac_key: bytes | None = None,
        durability: Durability = Durability.MONEY,
        rotate_bytes: int | None = DEFAULT_ROTATE_BYTES,
        rotate_daily: bool = True,
        clock: Callable[[], datetime] = _utc_now,
        monotonic_ns: Callable[[], int] = time.monotonic_ns,
        software_version: str = __version__,
        past_damage: bool = False,
    ) -> None:
        """``past_damage``: when the newest file ends in damage that is not a power-cut
        artefact, leave that file as it is (evidence) and continue the chain in a new file
        from its last sound record, instead of raising :class:`JournalDamagedError`. For a
        caller that has found and journals the damage first (the service's start-up check),
        so a damaged tail holds the table instead of stopping the service."""
        if not table_id:
            raise JournalConfigError("a journal needs a table id")
        if rotate_bytes is not None and rotate_bytes <= 0:
            raise JournalConfigError(f"rotate_bytes must be positive, got {rotate_bytes}")
        self.directory = Path(directory)
        self.table_id = table_id
        self.durability = Durability(durability)
        self.rotate_bytes = rotate_bytes
        self.rotate_daily = rotate_daily
        self.software_version = software_version
        self._past_damage = past_damage
        self.lock = threading.RLock()
        self._key = hmac_key
        self._clock = clock
        self._monotonic_ns = monotonic_ns
        self._fd: int | None = None
        self._path: Path | None = None
        self._index = 0
        self._size = 0
        self._file_day: date | None = None
        self._seq = 0
        self._last_hash = GENESIS_HASH
        self._closed = False
        self._now: datetime | None = None
        self._sealed: Record | None = None
        self._line = ""
        self._jsonable = False
        self._sync_this = False
        self._head: HeadFile | None = None
        self._logger = structlog.wrap_logger(
            _FileSink(self._write_line),
            processors=[self._stamp, self._serialise, self._seal, self._render],
            wrapper_class=structlog.BoundLogger,
            context_class=dict,
            cache_logger_on_first_use=False,
        ).bind()
        with self.lock:
            try:
                self._open()
            except BaseException:
                self._close_fd()
                if self._head is not None:
                    self._head.close()
                raise

    # -- public -----------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The file being appended to."""
        assert self._path is not None
        return self._path

    @property
    def seq(self) -> int:
        """Sequence number of the last record written (0 before the first)."""
        return self._seq

    @property
    def last_hash(self) -> str:
        return self._last_hash

    @property
    def closed(self) -> bool:
        return self._closed

    def files(self) -> list[Path]:
        return journal_files(self.directory)

    def now(self) -> datetime:
        """The writer's (injectable) UTC clock, so retention ages files by the same time."""
        return self._clock()

    def sync_directory(self) -> None:
        """Make file creations and deletions in the journal directory durable. Takes no lock:
        it touches no state of the writer's, and a directory fsync beside an append is
        harmless (retention calls it after its deletions, outside the lock)."""
        self._fsync_dir()

    def append(
        self,
        event_type: str,
        payload: Mapping[str, Any] | Any | None = None,
        *,
        round_id: str | None = None,
        actor: str | None = None,
        money: bool = False,
        jsonable: bool = False,
    ) -> Record:
        """Append one record and return it sealed. When it decides money (``money=True`` or an
        event type in :data:`MONEY_EVENT_TYPES`) and the policy is ``money``, it is on disk
        before this returns. A frozen dataclass payload is journaled field by field.
        ``jsonable``: the payload is already a dict of plain JSON values (what
        :func:`to_jsonable` returns, as the table's codec gives it), so it is not walked
        again (a studio batch's record holds 250 wagers, a settlement 2,000 results)."""
        if not isinstance(event_type, str) or not event_type:
            raise JournalValueError(f"event type must be a non-empty string, got {event_type!r}")
        with self.lock:
            if self._closed:
                raise JournalClosedError(f"journal {self.directory} is closed")
            now = self._clock()
            self._rotate_if_due(now)  # the new file's header shares the record's time
            self._jsonable = jsonable and type(payload) is dict
            try:
                return self._emit(event_type, payload, round_id, actor, money, now)
            finally:
                self._jsonable = False

    def append_keeping_text(self, event_type: str, payload: Mapping[str, Any], *,
                            round_id: str | None = None, actor: str | None = None,
                            money: bool = False, jsonable: bool = False
                            ) -> tuple[Record, str]:
        """:meth:`append`, and the canonical JSON text of the payload as the record's line
        holds it (:func:`payload_text`), taken under the lock so another thread's record
        cannot come between: the service sends this text to its watchers instead of encoding
        the event again (a studio settlement is 345 kB; issue 28)."""
        with self.lock:
            record = self.append(event_type, payload, round_id=round_id, actor=actor,
                                 money=money, jsonable=jsonable)
            return record, payload_text(self._line)

    def append_event(self, event: Any, *, actor: str | None = None, money: bool = False
                     ) -> Record:
        """Append a typed event (a frozen dataclass) under :func:`event_type_of` its class,
        taking the round id from its ``round`` field when it has one."""
        round_value = getattr(event, "round", None)
        return self.append(event_type_of(event), event,
                           round_id=None if round_value is None else str(round_value),
                           actor=actor, money=money)

    def sync(self) -> None:
        """Force everything written so far to disk (e.g. before a planned power-off)."""
        with self.lock:
            if self._fd is not None:
                self._fsync(self._fd, self.path)
                self._update_head()

    @property
    def hmac_key(self) -> bytes | None:
        return self._key

    @property
    def head(self) -> HeadFile | None:
        """``journal.head`` (:mod:`controller.journal.head`): ``head.found`` is the head as it
        was when this writer opened the journal."""
        return self._head

    def rotate(self, reason: str = "requested") -> None:
        """Start a new file now; the chain continues into it."""
        with self.lock:
            if self._closed:
                raise JournalClosedError(f"journal {self.directory} is closed")
            self._rotate(reason)

    def close(self) -> None:
        """Write ``journal_closed``, sync and close. Idempotent."""
        with self.lock:
            if self._closed:
                return
            try:
                if self._fd is not None:
                    self._emit(JournalEvent.CLOSED.value, {"file": self.path.name}, None,
                               None, True, self._clock())
            finally:
                self._closed = True
                self._close_fd()
                if self._head is not None:
                    self._head.close()

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the structlog processor chain -------------------------------------------------------

    def _stamp(self, _logger: Any, _method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
        """Adds the chain fields: seq, both clocks, table and the previous hash."""
        assert self._now is not None
        round_id, actor = event_dict.pop("round", None), event_dict.pop("actor", None)
        for name, value in (("round_id", round_id), ("actor", actor)):
            if value is not None and not isinstance(value, str):
                raise JournalValueError(f"{name} must be a string or None, got {value!r}")
        return {
            "v": FORMAT_VERSION,
            "seq": self._seq + 1,
            "ts": format_ts(self._now),
            "mono_ns": int(self._monotonic_ns()),
            "table": self.table_id,
            "round": round_id,
            "event": event_dict.pop("event"),
            "actor": actor,
            "payload": event_dict.pop("payload", None),
            "prev": self._last_hash,
        }

    def _serialise(self, _logger: Any, _method: str, body: dict[str, Any]) -> dict[str, Any]:
        if self._jsonable:
            return body
        payload = to_jsonable({} if body["payload"] is None else body["payload"])
        if not isinstance(payload, dict):
            raise JournalValueError(
                f"payload must be a mapping or a dataclass, got {type(body['payload']).__name__}"
            )
        body["payload"] = payload
        return body

    def _seal(self, _logger: Any, _method: str, body: dict[str, Any]) -> dict[str, Any]:
        sealed, self._line = seal_and_render(body, self._key)
        self._sealed = Record._trusted(sealed)
        return sealed

    def _render(self, _logger: Any, _method: str, sealed: dict[str, Any]) -> str:
        return self._line  # canonical_json(sealed), made by _seal from the body's text

    # -- writing -----------------------------------------------------------------------------

    def _emit(self, event_type: str, payload: Any, round_id: str | None, actor: str | None,
              money: bool, now: datetime) -> Record:
        self._now = now
        self._sync_this = self.durability is Durability.ALWAYS or (
            self.durability is Durability.MONEY and (money or event_type in MONEY_EVENT_TYPES)
        )
        self._sealed = None
        self._logger.msg(event_type, payload=payload, round=round_id, actor=actor)
        record = self._sealed
        assert record is not None
        self._seq, self._last_hash = record.seq, record.hash
        if self._file_day is None:
            self._file_day = now.astimezone(timezone.utc).date()
        closing = event_type in (JournalEvent.CLOSED.value, JournalEvent.FILE_OPENED.value)
        if self._sync_this or closing:
            self._update_head(force=closing)  # a durable point, or a file closed or begun
        return record

    def _update_head(self, force: bool = True) -> None:
        """Move ``journal.head`` to the last record (already synced by the caller)."""
        head = self._head
        if head is None or self._path is None:
            return
        had_error = head.error
        head.update(self._seq, self._last_hash, self._path.name, force=force)
        if head.error and not had_error:
            log.error("journal head not updated; verify will see an older head",
                      error=head.error)

    def _write_line(self, line: str) -> None:
        assert self._fd is not None and self._path is not None
        data = (line + "\n").encode("utf-8")
        start = self._size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            if self._sync_this:
                os.fsync(self._fd)
        except OSError as error:
            try:  # never leave half a record for the next one to be appended to
                os.ftruncate(self._fd, start)
            except OSError:
                pass
            raise JournalIOError(
                f"{self._path}: cannot write the journal: {error.strerror or error}"
            ) from error
        self._size = start + len(data)

    def _fsync(self, fd: int, where: Path) -> None:
        try:
            os.fsync(fd)
        except OSError as error:
            raise JournalIOError(f"{where}: cannot sync: {error.strerror or error}") from error

    def _fsync_dir(self) -> None:
        """A new or deleted file is durable only once its directory entry is."""
        if self.durability is Durability.NONE:
            return
        try:
            fd = os.open(self.directory, os.O_RDONLY)
        except OSError as error:
            raise JournalIOError(f"{self.directory}: {error.strerror or error}") from error
        try:
            self._fsync(fd, self.directory)
        finally:
            os.close(fd)

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # -- files -------------------------------------------------------------------------------

    def _open_fd(self, path: Path, *, create: bool) -> None:
        flags = os.O_WRONLY | os.O_APPEND | (os.O_CREAT | os.O_EXCL if create else 0)
        try:
            self._fd = os.open(path, flags, FILE_MODE)
            if create:
                os.fchmod(self._fd, FILE_MODE)  # exactly, whatever the umask
            self._size = os.fstat(self._fd).st_size
        except OSError as error:
            raise JournalIOError(f"{path}: {error.strerror or error}") from error
        self._path = path
        self._index = file_index(path) or 0

    def _start_file(self, index: int, previous: str | None, reason: str,
                    now: datetime | None = None) -> None:
        self._open_fd(self.directory / file_name(index), create=True)
        self._fsync_dir()
        self._file_day = None
        self._emit(JournalEvent.FILE_OPENED.value,
                   {"file": self.path.name, "previous_file": previous, "reason": reason,
                    "software_version": self.software_version},
                   None, None, True, now or self._clock())

    def _rotate_if_due(self, now: datetime) -> None:
        if self.rotate_bytes is not None and self._size >= self.rotate_bytes:
            self._rotate("size", now)
        elif self.rotate_daily and self._file_day is not None and \
                now.astimezone(timezone.utc).date() != self._file_day:
            self._rotate("day", now)

    def _rotate(self, reason: str, now: datetime | None = None) -> None:
        previous = self.path.name
        assert self._fd is not None
        if self.durability is not Durability.NONE:
            self._fsync(self._fd, self.path)
        self._close_fd()
        self._start_file(self._index + 1, previous, reason, now)

    def _open(self) -> None:
        try:
            created = not self.directory.exists()
            self.directory.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
            if created:
                os.chmod(self.directory, DIR_MODE)
        except OSError as error:
            raise JournalIOError(f"{self.directory}: {error.strerror or error}") from error
        self._head = HeadFile(self.directory, self.table_id, self._key,
                              sync=self.durability is not Durability.NONE)
        files = journal_files(self.directory)
        if not files:
            self._start_file(1, None, "created")
            return
        current = files[-1]
        try:
            tail = scan_tail(current, None)
        except JournalDamagedError:
            if not self._past_damage:
                raise
            self._continue_past_damage(files)
            return
        anchor, first = tail.last, tail.first
        if anchor is None and len(files) > 1:
            try:
                before = scan_tail(files[-2], None)
                if before.last is None or before.dropped:
                    raise JournalDamagedError(
                        f"{files[-2]}: does not end with a sound record; run 'tablectl "
                        f"journal verify {self.directory}'"
                    )
            except JournalDamagedError:
                if not self._past_damage:
                    raise
                self._continue_past_damage(files)
                return
            anchor = before.last
        if anchor is not None:
            self._check_belongs(anchor)
            self._seq, self._last_hash = anchor.seq, anchor.hash
        self._open_fd(current, create=False)
        if tail.dropped or tail.keep_bytes != self._size:
            self._truncate(tail.keep_bytes)
        if tail.last is None:  # the file holds no sound record: give it its header
            self._fsync_dir()
            self._file_day = None
            self._emit(JournalEvent.FILE_OPENED.value,
                       {"file": current.name,
                        "previous_file": files[-2].name if len(files) > 1 else None,
                        "reason": "resumed", "software_version": self.software_version},
                       None, None, True, self._clock())
        else:
            self._file_day = (first or tail.last).time.date()
        if tail.dropped:
            self._emit(JournalEvent.REPAIRED.value,
                       repair_payload(current, tail.keep_bytes, tail.dropped),
                       None, None, True, self._clock())
        self._emit(JournalEvent.RESUMED.value,
                   {"file": current.name, "last_seq": anchor.seq if anchor else 0,
                    "software_version": self.software_version},
                   None, None, True, self._clock())

    def _continue_past_damage(self, files: list[Path]) -> None:
        """The newest file ends in damage: it stays untouched, and a new file (reason
        ``damaged``) continues the chain from its last sound record, so ``verify`` still
        reports the damage where it is and nothing after it is lost."""
        current = files[-1]
        anchor: Record | None = None
        for path in reversed(files):  # the newest file may hold no sound record at all
            for _number, raw, terminated in read_lines(path):
                found = check_line(raw, None) if terminated else None
                if isinstance(found, Record):
                    anchor = found
            if anchor is not None:
                break
        if anchor is not None:
            self._check_belongs(anchor)
            self._seq, self._last_hash = anchor.seq, anchor.hash
        log.error("journal file ends in damage; left as it is, continued in a new file",
                  file=str(current), last_sound_seq=self._seq)
        self._start_file((file_index(current) or len(files)) + 1, current.name, "damaged")
        self._emit(JournalEvent.RESUMED.value,
                   {"file": self.path.name, "last_seq": self._seq,
                    "software_version": self.software_version},
                   None, None, True, self._clock())

    def _check_belongs(self, record: Record) -> None:
        if record.table_id != self.table_id:
            raise JournalConfigError(
                f"journal {self.directory} belongs to table {record.table_id!r}, "
                f"not {self.table_id!r}"
            )
        if self._key is None and record.hmac is not None:
            raise JournalConfigError(
                f"journal {self.directory} is HMAC-protected; the writer needs its key"
            )
        if self._key is not None and (
            record.hmac is None or not hmac_matches(self._key, record.body(), record.hmac)
        ):
            raise JournalConfigError(
                f"journal {self.directory}: its last record does not match this HMAC key"
            )

    def _truncate(self, length: int) -> None:
        assert self._fd is not None
        try:
            os.ftruncate(self._fd, length)
            os.fsync(self._fd)
        except OSError as error:
            raise JournalIOError(f"{self.path}: cannot repair: {error.strerror or error}") \
                from error
        self._size = length
