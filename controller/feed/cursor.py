"""The feed's cursor: the last record the broker acknowledged (PUBACK), on disk.

Written only after the PUBACK, replaced atomically (write, fsync, rename) so a SIGKILL or a
power cut leaves the old cursor or the new one, never half of one. A cursor behind the truth
only means records are sent again, which the floor recognises as duplicates; a cursor ahead of
the truth would lose records, which is why nothing else ever moves it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from controller.feed.errors import CursorError

CURSOR_NAME = "feed.cursor"


@dataclass(frozen=True, slots=True)
class Cursor:
    table: str
    seq: int
    """Last acknowledged record's sequence number (0: nothing sent yet)."""
    hash: str | None


def load_cursor(directory: Path, table: str) -> Cursor:
    path = directory / CURSOR_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Cursor(table, 0, None)
    except (OSError, ValueError) as error:
        raise CursorError(f"{path}: unreadable cursor ({error}); move it away to resend "
                          "the whole journal (the floor drops what it has)") from error
    if not isinstance(data, dict) or data.get("table") != table \
            or not isinstance(data.get("seq"), int) or data["seq"] < 0:
        raise CursorError(f"{path}: cursor of another table or malformed: {data!r}")
    return Cursor(table, data["seq"], data.get("hash"))


def save_cursor(directory: Path, cursor: Cursor) -> None:
    directory.mkdir(parents=True, exist_ok=True, mode=0o750)
    path = directory / CURSOR_NAME
    temporary = path.with_suffix(".tmp")
    text = json.dumps({"table": cursor.table, "seq": cursor.seq, "hash": cursor.hash},
                      sort_keys=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o640)
    try:
        os.write(fd, text.encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
