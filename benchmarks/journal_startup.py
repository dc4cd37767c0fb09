"""Start-up on a journal of millions of records: READY and the start-up check, measured on a
10,000,000-record journal (issue 27: "a restart after a crash would take minutes").

The journal is the service's own, scaled: the service (``benchmarks/service.py``'s config,
RWS-NC3P on the simulated shuffler) deals ``template_rounds`` rounds and stops; its records are
then re-sealed into a chain of ``records`` records (the complete rounds between its first and
last session repeated, each record with its new ``seq``/``prev``/``hash``, files rotated every
``per_file`` records with the ``journal_file_opened`` record the writer writes), ending with the
real last session and ``journal_closed``. The head and the verified mark name the last record,
as the service's clean stop leaves them. (Re-sealing, not ``JournalWriter.append``: the writer
does ~18,000 records/s, 10 minutes for 10 M; the chain is the same.)

Then the service is started on it (``ready_seconds``: ``Popen`` to READY=1), and the start-up
check is run here on the same journal (``records_read_by_startup_check``). The check reads from
the verified mark (docs/journal.md, "Start-up check"), so neither should grow with the journal;
``full_verify_seconds_estimate`` scales the full check's rate on the newest file to the whole
journal (what ``tablectl journal verify`` costs on demand). ``protection_warm_seconds`` is
the game-protection monitors' warm-up (``controller.service.wiring.warmup``: the last 2,000 decks,
read through the journal's reader from the newest file's end), measured alone on the same
journal: bounded by decks, not by the journal, and no longer part of READY (the service warms
the monitors on their own thread while the table runs).

Run: ``python benchmarks/journal_startup.py [--records N] [--per-file N] [--dir PATH]`` (10 M
records is about 3 GB on disk and a few minutes to write).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.service import _rss_mb, running_service  # noqa: E402
from controller.journal.files import file_name  # noqa: E402
from controller.journal.head import HeadFile, Mark, write_mark  # noqa: E402
from controller.journal.reader import iter_records  # noqa: E402
from controller.journal.record import GENESIS_HASH, canonical_json  # noqa: E402
from controller.journal.startup import check_journal  # noqa: E402
from controller.journal.verify import verify  # noqa: E402
from controller.protection.feed import Feed  # noqa: E402
from controller.protection.guard import Guard, TableGuard  # noqa: E402
from controller.service.wiring.warmup import warm_from_journal  # noqa: E402
from controller.service.control.client import ControlClient  # noqa: E402

TABLE = "BENCH-SVC"
_SEQ_NUMBER = 987654321987654321
_SEQ_MARK = "\x00SEQ\x00"
_PREV_MARK = "P" * 64  # hashes are lower-case hex: no record holds this
_HASH_MARK = "H" * 64


def _template(tmp: Path, rounds: int) -> list[dict[str, Any]]:
    """The bodies of a real service journal of ``rounds`` rounds (then stopped)."""
    from benchmarks.service import _round

    with running_service(tmp, durability="none") as (_pid, sock, _ready), \
            ControlClient(sock, timeout=60) as client, \
            ControlClient(sock, timeout=60) as watcher:
        events = watcher.watch()
        for number in range(1, rounds + 1):
            _round(client, events, number)
    return [record.body() for record in iter_records([tmp / "journal"])]


class _Chain:
    """Writes re-sealed bodies as one chain across files of ``per_file`` records."""

    def __init__(self, directory: Path, per_file: int, opened: dict[str, Any]) -> None:
        self.directory, self.per_file, self.opened = directory, per_file, opened
        self.seq, self.prev, self.index = 0, GENESIS_HASH, 0
        self.in_file, self.offset, self.line = 0, 0, 0
        self.handle: Any = None
        self.last: tuple[int, str, str, int, int] | None = None
        self._cache: dict[int, tuple[str, str]] = {}

    def _new_file(self) -> None:
        previous = file_name(self.index) if self.index else None
        if self.handle is not None:
            self.handle.close()
        self.index += 1
        self.handle = (self.directory / file_name(self.index)).open("wb", buffering=1 << 20)
        self.in_file = self.offset = self.line = 0
        opened = dict(self.opened)
        opened["payload"] = {**opened["payload"], "file": file_name(self.index),
                             "previous_file": previous,
                             "reason": "size" if previous else "new"}
        self._write(opened)
        self._cache.pop(id(opened))  # a body of its own: its id may be reused

    def _write(self, body: dict[str, Any]) -> None:
        self.seq += 1
        hashed, line_text = self._templates(body)
        seq = str(self.seq)
        digest = hashlib.sha256(
            hashed.replace(_SEQ_MARK, seq).replace(_PREV_MARK, self.prev).encode()).hexdigest()
        line = (line_text.replace(_SEQ_MARK, seq).replace(_PREV_MARK, self.prev)
                .replace(_HASH_MARK, digest).encode() + b"\n")
        self.handle.write(line)
        self.prev = digest
        self.line += 1
        self.last = (self.seq, self.prev, file_name(self.index), self.offset, self.line)
        self.offset += len(line)
        self.in_file += 1

    def _templates(self, body: dict[str, Any]) -> tuple[str, str]:
        """The canonical text the hash covers and the record's line, with markers where the
        seq, prev and hash go: the JSON is rendered once per template record, not per record
        (what makes 10 M records minutes, not an hour). The benchmark verifies the newest
        file's chain in full (``newest_file_intact``): the same bytes as :func:`seal`'s."""
        cached = self._cache.get(id(body))
        if cached is None:
            marked = {**body, "seq": _SEQ_NUMBER, "prev": _PREV_MARK, "table": TABLE}
            marked.pop("hash", None)
            marked.pop("hmac", None)
            hashed = canonical_json(marked).replace(str(_SEQ_NUMBER), _SEQ_MARK)
            line = canonical_json({**marked, "hash": _HASH_MARK}).replace(
                str(_SEQ_NUMBER), _SEQ_MARK)
            cached = self._cache[id(body)] = (hashed, line)
        return cached

    def put(self, body: dict[str, Any]) -> None:
        if self.handle is None or self.in_file >= self.per_file:
            self._new_file()
        self._write(body)

    def close(self) -> None:
        self.handle.close()
        for path in self.directory.glob("journal-*.jsonl"):
            os.chmod(path, 0o640)


def write_journal(directory: Path, template: list[dict[str, Any]], records: int,
                  per_file: int) -> dict[str, Any]:
    """The scaled journal in ``directory`` (see the module doc); what was written."""
    sessions = [i for i, body in enumerate(template) if body["event"] == "session_started"]
    if len(sessions) < 3:
        raise RuntimeError(f"template has {len(sessions)} sessions; at least 3 are needed")
    opened = next(b for b in template if b["event"] == "journal_file_opened")
    body_start = template.index(opened) + 1
    prefix = template[body_start:sessions[1]]
    unit = template[sessions[1]:sessions[-1]]
    suffix = template[sessions[-1]:]
    directory.mkdir(parents=True, exist_ok=True)
    chain = _Chain(directory, per_file, opened)
    started = time.monotonic()
    for body in prefix:
        chain.put(body)
    while chain.seq + len(unit) + len(suffix) < records:
        for body in unit:
            chain.put(body)
    for body in suffix:
        chain.put(body)
    chain.close()
    assert chain.last is not None
    seq, hash_, file, offset, line = chain.last
    head = HeadFile(directory, TABLE, None, sync=True)
    head.update(seq, hash_, file, force=True)
    head.close()
    write_mark(directory, Mark(TABLE, seq, hash_, file, offset, line), None)
    return {"records": seq, "files": chain.index, "records_per_file": per_file,
            "bytes": sum(p.stat().st_size for p in directory.glob("journal-*.jsonl")),
            "write_seconds": round(time.monotonic() - started, 1)}


def _ready_on(tmp: Path) -> dict[str, Any]:
    """Start the service in ``tmp`` (its journal ``tmp/journal``); READY time and memory."""
    with running_service(tmp, durability="money") as (pid, sock, ready):
        rss = _rss_mb(pid)
        with ControlClient(sock, timeout=60) as client:
            status = client.request("round.status")
    return {"ready_seconds": round(ready, 3), "rss_ready_mb": round(rss, 1),
            "journal_hold": status.get("journal_hold")}


def measure(records: int = 10_000_000, per_file: int = 100_000, template_rounds: int = 30,
            where: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tablectl-start-bench-", dir=where) as name:
        tmp = Path(name)
        (tmp / "template").mkdir()
        template = _template(tmp / "template", template_rounds)
        service = tmp / "service"
        service.mkdir()
        written = write_journal(service / "journal", template, records, per_file)
        check = check_journal(service / "journal", None)
        newest = sorted((service / "journal").glob("journal-*.jsonl"))[-1]
        started = time.monotonic()
        full_newest = verify([newest], allow_unanchored=True, head=None)
        newest_seconds = time.monotonic() - started
        started = time.monotonic()
        # the service's default feed: its likelihood costs most of the warm-up
        warmed = warm_from_journal(TableGuard(Guard(feed=Feed.COLLECTED_REVERSED)),
                                   service / "journal")
        warm_seconds = time.monotonic() - started
        ready = _ready_on(service)
        result = {
            **written, **ready,
            "startup_check_seconds": round(check.seconds, 3),
            "records_read_by_startup_check": check.report.records if check.report else 0,
            "startup_check_incremental": check.incremental,
            "startup_check_damage": check.damage,
            "newest_file_intact": full_newest.problem is None,
            "protection_warm_seconds": round(warm_seconds, 3),
            "protection_warm_decks": warmed,
        }
        if full_newest.records:
            rate = full_newest.records / newest_seconds
            result["full_verify_seconds_estimate"] = round(written["records"] / rate, 1)
        return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--per-file", type=int, default=100_000)
    parser.add_argument("--template-rounds", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.records, args.per_file, args.template_rounds, args.dir),
                     indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
