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

Then the service is started on it ``--starts`` times per entry of ``--busy`` (``ready``: the
median ``ready_seconds``, ``Popen`` to READY=1, each start's, and ``cpu_to_ready_seconds``,
what start-up cost whatever ran beside it), with that many CPU-bound processes beside it, at the
unit's ``Nice=-10`` where this process may set it (``service_nice``), on compiled bytecode as
an installed service runs (``compile_bytecode``: a ``PYTHONDONTWRITEBYTECODE`` checkout compiled
every module at every start). The start-up check is run here on the same journal
(``records_read_by_startup_check``), and ``--rounds`` rounds are dealt with the background full
check running and with it off (``rounds_per_second_check_running``/``_off``). The check reads from
the verified mark (docs/journal.md, "Start-up check"), so neither should grow with the journal;
``full_verify_seconds_estimate`` scales the full check's rate on the newest file to the whole
journal (what ``tablectl journal verify`` costs on demand). ``protection_warm_seconds`` is
the game-protection monitors' warm-up (``controller.service.wiring.warmup``: the last 2,000 decks,
read through the journal's reader from the newest file's end), measured alone on the same
journal: bounded by decks, not by the journal, and no longer part of READY (the service warms
the monitors on their own thread while the table runs).

Run: ``python benchmarks/journal_startup.py [--records N] [--per-file N] [--dir PATH]
[--keep DIR | --journal DIR] [--starts N] [--busy N...] [--rounds N] [--no-warm]`` (10 M
records is about 5 GB on disk and a few minutes to write; ``--keep`` keeps it, ``--journal``
measures on a kept one again). Figures: docs/journal.md, "Start-up check".
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.service import _cpu_seconds, _rss_mb, running_service  # noqa: E402
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
    (tmp / "notify").unlink(missing_ok=True)  # a socket an earlier start left
    with running_service(tmp, durability="money") as (pid, sock, ready):
        cpu = _cpu_seconds(pid)  # what start-up cost, whatever else ran beside it
        rss = _rss_mb(pid)
        with ControlClient(sock, timeout=60) as client:
            status = client.request("round.status")
    return {"ready_seconds": round(ready, 3), "cpu_to_ready_seconds": round(cpu, 3),
            "rss_ready_mb": round(rss, 1), "journal_hold": status.get("journal_hold")}


def rounds_beside_the_check(service: Path, rounds: int) -> dict[str, Any]:
    """Rounds a second through the control socket with the background full check running
    (started at READY, ``background_check_delay_s = 0``) and with it off, on the same journal:
    what the check costs the table. The first round is not timed: its cards wait for the
    protection monitors' warm-up. The stop ends the check (killed: nothing journaled)."""
    from benchmarks.service import _round

    result: dict[str, Any] = {}
    for label, keys in (("off", "background_check_hours = 0\n"),
                        ("running", "background_check_delay_s = 0\n")):
        (service / "notify").unlink(missing_ok=True)
        with unit_priority(), running_service(service, durability="money",
                                              journal_keys=keys) as (
                _pid, sock, _ready), ControlClient(sock, timeout=60) as client, \
                ControlClient(sock, timeout=60) as watcher:
            events = watcher.watch()
            _round(client, events, 0)  # its cards wait for the protection warm-up (a few seconds)
            started = time.monotonic()
            for number in range(1, rounds + 1):
                _round(client, events, number)
            elapsed = time.monotonic() - started
            check = client.request("round.status")["journal"]["background_check"]
        result[f"rounds_per_second_check_{label}"] = round(rounds / elapsed, 1)
        if label == "running":
            result["check_running_during_rounds"] = bool(check["running"])
    return result


def compile_bytecode() -> None:
    """Compile the project's modules to ``__pycache__`` as ``pip install`` does for the
    installed wheel, and let the service use them: a process started with
    ``PYTHONDONTWRITEBYTECODE`` on an uncompiled checkout compiles about 100 modules at every
    start (0.7-1.5 s here), which no installed service pays."""
    for package in ("controller", "drivers", "firmware_sim"):
        compileall.compile_dir(str(ROOT / package), quiet=1)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """``count`` CPU-bound processes beside the measurement (the issue's "under load")."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def ready_starts(service: Path, starts: int, busy: int) -> dict[str, Any]:
    """``starts`` starts of the service on the journal in ``service`` (each a clean stop):
    the median READY and each start's, with ``busy`` CPU-bound processes beside them."""
    load = os.getloadavg()[0]
    runs = []
    with busy_processes(busy), unit_priority() as nice:
        for _ in range(starts):
            runs.append(_ready_on(service))
    seconds = [run["ready_seconds"] for run in runs]
    return {"ready_seconds": statistics.median(seconds), "ready_runs": seconds,
            "cpu_to_ready_seconds": statistics.median(run["cpu_to_ready_seconds"]
                                                      for run in runs),
            "rss_ready_mb": runs[-1]["rss_ready_mb"], "journal_hold": runs[-1]["journal_hold"],
            "busy_processes": busy, "service_nice": nice, "load_before": round(load, 2)}


UNIT_NICE = -10
"""``Nice=`` of ``systemd/tablectl.service``."""


@contextmanager
def unit_priority() -> Iterator[int]:
    """The services started inside run at the unit's ``Nice=`` (they inherit this process's;
    the CPU-bound processes were started before, at the usual priority). Without the
    privilege to raise priority they run at this process's own: the value says which."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, UNIT_NICE)
    except OSError:
        yield before
        return
    try:
        yield UNIT_NICE
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, before)


def measure(records: int = 10_000_000, per_file: int = 100_000, template_rounds: int = 30,
            where: Path | None = None, *, keep: Path | None = None, journal: Path | None = None,
            starts: int = 5, busy: tuple[int, ...] = (0, 2), warm: bool = True,
            rounds: int = 200) -> dict[str, Any]:
    """Write the journal (or reuse ``journal``: a ``--keep`` directory of an earlier run),
    check it, then start the service on it ``starts`` times per entry of ``busy``."""
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="tablectl-start-bench-", dir=where) as name:
        tmp = Path(name)
        service = journal or keep or tmp / "service"
        written: dict[str, Any]
        if journal is None:
            (tmp / "template").mkdir()
            template = _template(tmp / "template", template_rounds)
            service.mkdir(parents=True, exist_ok=True)
            written = write_journal(service / "journal", template, records, per_file)
        else:
            files = sorted((service / "journal").glob("journal-*.jsonl"))
            written = {"files": len(files), "reused": str(service),
                       "bytes": sum(p.stat().st_size for p in files)}
        check = check_journal(service / "journal", None)
        newest = sorted((service / "journal").glob("journal-*.jsonl"))[-1]
        started = time.monotonic()
        full_newest = verify([newest], allow_unanchored=True, head=None)
        newest_seconds = time.monotonic() - started
        if journal is not None:
            written["records"] = full_newest.last_seq
        result: dict[str, Any] = {
            **written,
            "startup_check_seconds": round(check.seconds, 3),
            "records_read_by_startup_check": check.report.records if check.report else 0,
            "startup_check_incremental": check.incremental,
            "startup_check_damage": check.damage,
            "newest_file_intact": full_newest.problem is None,
            "bytecode": "compiled (as installed)",
        }
        if warm:
            started = time.monotonic()
            # the service's default feed: its likelihood costs most of the warm-up
            warmed = warm_from_journal(TableGuard(Guard(feed=Feed.COLLECTED_REVERSED)),
                                       service / "journal")
            result["protection_warm_seconds"] = round(time.monotonic() - started, 3)
            result["protection_warm_decks"] = warmed
        result["ready"] = [ready_starts(service, starts, count) for count in busy]
        if rounds:
            result.update(rounds_beside_the_check(service, rounds))
        if full_newest.records:
            rate = full_newest.records / newest_seconds
            result["full_verify_seconds_estimate"] = round(result["records"] / rate, 1)
        return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--per-file", type=int, default=100_000)
    parser.add_argument("--template-rounds", type=int, default=30)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--keep", type=Path, default=None,
                        help="write the journal into this directory and keep it")
    parser.add_argument("--journal", type=Path, default=None,
                        help="reuse a directory an earlier --keep wrote (no writing)")
    parser.add_argument("--starts", type=int, default=5, help="starts per load (median)")
    parser.add_argument("--busy", type=int, nargs="*", default=[0, 2],
                        help="CPU-bound processes beside the starts, one series each")
    parser.add_argument("--rounds", type=int, default=200,
                        help="rounds dealt with the background check running, and off (0: skip)")
    parser.add_argument("--no-warm", action="store_true",
                        help="skip the protection warm-up measurement (30 s at 10 M)")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.records, args.per_file, args.template_rounds, args.dir,
                             keep=args.keep, journal=args.journal, starts=args.starts,
                             busy=tuple(args.busy), warm=not args.no_warm,
                             rounds=args.rounds), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
