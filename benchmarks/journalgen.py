"""Journals of many tables from one bench journal: the feed benchmark's and the feed tests'
generator.

The bench always names its table ``bench-1``; a floor needs tables with their own ids and their
own chains. :func:`rehome` re-seals every record of a real bench journal under another table id
(new ``table``, new ``prev``/``hash``, the same events in the same order), and
:func:`write_live` appends them at a given pace, as the service would, so the feed follows a
journal that is still being written.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

from controller.journal.files import file_name
from controller.journal.reader import iter_records
from controller.journal.record import GENESIS_HASH, canonical_json, seal


def rehome(source: Path, table: str) -> list[bytes]:
    """The lines of ``source``'s journal as table ``table``'s own chain (no HMAC)."""
    prev = GENESIS_HASH
    lines: list[bytes] = []
    for record in iter_records([source]):
        body = record.body()
        body["table"], body["prev"] = table, prev
        sealed = seal(body, None)
        prev = sealed["hash"]
        lines.append(canonical_json(sealed).encode() + b"\n")
    return lines


def write_all(directory: Path, lines: list[bytes]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file_name(1)
    path.write_bytes(b"".join(lines))
    return path


def write_live(directory: Path, lines: list[bytes], interval_s: float,
               stop: object | None = None) -> Iterator[int]:
    """Append ``lines`` one by one every ``interval_s`` seconds (flushed, not fsynced); yields
    the number written so far, so a caller can interleave several tables."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / file_name(1), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
    try:
        start = time.monotonic()
        for index, line in enumerate(lines):
            delay = start + index * interval_s - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            os.write(fd, line)
            yield index + 1
    finally:
        os.close(fd)
