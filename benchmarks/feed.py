"""Floor feed benchmark: N tables into one Mosquitto and one floor consumer.

A generator replays a real bench journal (RWS-3CP, re-sealed per table by
``testbed/journalgen.py``) into N journal directories at a pace: ``live`` is one record per
second per table (a live RWS-3CP round is about a minute and about 60 records), ``50`` is fifty
times that. Table T000's feed runs as its own ``python -m controller.feed`` process (its RSS
is the feed's memory on a table); the other feeds run as threads of this process, or with
``--processes`` each as its own process like on the tables (N processes of ~30 MB each). The
floor is its own ``tablectl floor`` process on SQLite, so its CPU and memory are its own. Everything runs with TLS and the ACL, as in the tests.

Measured: records/s applied, journal-write-to-applied and publish-to-applied latency p50/p99
(the floor keeps ``sent_ns`` from the feed's message and its own ``applied_ns``), the floor's
CPU (share of one core) and peak RSS, the feed process's peak RSS.

``--direct K``: no journals and no feeds; K generator processes publish every table's records
(its own TLS identity, the feed's topic and message: the line, ``seq``, ``hash``, ``sent_ns``,
QoS 1) at the pace, straight to the broker. This is how 200 tables at 50x (10,000 records/s)
is offered to one broker and one floor on a 2-core machine, where 200 feeds cannot run; the
hold rule is skipped (the floor's work is the same), so there is no write-to-applied figure.

Run: ``python benchmarks/feed.py --tables 20 --pace live --seconds 60 [--processes|--direct K]
[--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.bench import Bench  # noqa: E402
from controller.logsetup import configure_logging  # noqa: E402
from controller.feed.config import load_feed_config  # noqa: E402
from controller.service.visibility import Horizon  # noqa: E402
from controller.journal.damage import check_line  # noqa: E402
from controller.feed.run import Feed  # noqa: E402
from controller.journal.files import file_name  # noqa: E402
from testbed.floorlab import Mosquitto, feed_config, floor_config, make_pki  # noqa: E402
from testbed.journalgen import rehome  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _proc(pid: int) -> dict[str, float]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text()
                  .splitlines() if ":" in line)
    return {"cpu_s": (int(fields[11]) + int(fields[12])) / CLK_TCK,
            "rss_mb": int(status["VmRSS"].split()[0]) / 1024,
            "hwm_mb": int(status["VmHWM"].split()[0]) / 1024}


def _writer(dirs: list[Path], lines: list[list[bytes]], interval: float, stop: threading.Event,
            written: dict[tuple[str, int], int]) -> None:
    """Append each table's next record every ``interval`` seconds, tables spread over it."""
    fds = []
    for directory in dirs:
        directory.mkdir(parents=True, exist_ok=True)
        fds.append(os.open(directory / file_name(1), os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                           0o640))
    start = time.monotonic()
    count = len(dirs)
    try:
        step = 0
        while not stop.is_set() and step < len(lines[0]):
            for index, fd in enumerate(fds):
                due = start + (step + index / count) * interval
                delay = due - time.monotonic()
                if delay > 0:
                    if stop.wait(delay):
                        return
                os.write(fd, lines[index][step])
                written[(f"T{index:03d}", step + 1)] = time.time_ns()
            step += 1
    finally:
        for fd in fds:
            os.close(fd)


def _held_seqs(lines: list[bytes]) -> set[int]:
    """Seqs the hold rule keeps back when the journal is written one record at a time (the
    face-down hand until its reveal): their write-to-applied latency is the hold, by design."""
    records = [check_line(line.rstrip(b"\n"), None) for line in lines]
    horizon, held, sent = Horizon(), set(), 0
    for written in range(1, len(records) + 1):
        ready = horizon.releasable(records[sent:written])  # type: ignore[arg-type]
        held.update(records[i].seq for i in range(sent, sent + ready)  # type: ignore[union-attr]
                    if written > i + 1)
        sent += ready
    return held


def _pct(values: list[float], q: float) -> float:
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 1) \
        if len(values) > 1 else (values[0] if values else float("nan"))


def _generate(names: list[str], lines: list[list[bytes]], interval: float, seconds: float,
              work: Path, pki: Path, broker: Mosquitto, published: Any) -> None:
    """One generator process: a client per table, each record published at its due time
    (tables spread over the interval), as the table's feed would publish it."""
    import base64

    from controller.feed.keys import SIGNATURE_PROPERTY, read_private_seed, signed_bytes
    from controller.feed.mqtt import make_client, start, topic_events, user_properties
    from controller.feed.mqtt import stop as stop_client
    from controller.feed.signer import Signer

    clients = []
    signers = []
    for name in names:
        config = load_feed_config(feed_config(work, pki, broker, name, work / "unused"))
        signers.append(Signer(read_private_seed(config.signing_key)))
        client = make_client(config.broker, f"bench-direct-{name}")
        client.max_queued_messages_set(0)  # unbounded: a generator that falls behind queues
        start(client, config.broker)
        clients.append((client, topic_events(config.site, name)))
    deadline = time.monotonic() + 30
    while not all(client.is_connected() for client, _ in clients):
        if time.monotonic() > deadline:
            raise RuntimeError("generator clients did not connect")
        time.sleep(0.05)
    records = [[check_line(line.rstrip(b"\n"), None) for line in table] for table in lines]
    count, began, step = len(clients), time.monotonic(), 0
    while step < len(records[0]) and time.monotonic() - began < seconds:
        for index, (client, topic) in enumerate(clients):
            delay = began + (step + index / count) * interval - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            record = records[index][step]
            signature = signers[index].sign(signed_bytes(
                config.site, names[index], record.seq, record.hash))  # type: ignore[union-attr]
            client.publish(topic, lines[index][step].rstrip(b"\n"), qos=1,
                           properties=user_properties({
                               "seq": str(record.seq), "hash": record.hash,  # type: ignore[union-attr]
                               "sent_ns": str(time.time_ns()),
                               SIGNATURE_PROPERTY: base64.b64encode(signature).decode()}))
            published.value += 1
        step += 1
    time.sleep(5)  # let the last PUBACKs in
    for client, _ in clients:
        stop_client(client)


def run_direct(tables: int, pace: float, seconds: float, work: Path, generators: int
               ) -> dict[str, Any]:
    import multiprocessing

    names = [f"T{i:03d}" for i in range(tables)]
    lines, pki, broker, database, floor_proc = _lab(work, names)
    context = multiprocessing.get_context("fork")
    counters = [context.Value("q", 0, lock=False) for _ in range(generators)]
    chunks = [list(range(tables))[g::generators] for g in range(generators)]
    procs = [context.Process(target=_generate, args=(
        [names[i] for i in chunk], [lines[i] for i in chunk], 1.0 / pace, seconds, work, pki,
        broker, counters[g]))
        for g, chunk in enumerate(chunks)]
    floor_before = _proc(floor_proc.pid)
    began = time.monotonic()
    for proc in procs:
        proc.start()
    time.sleep(seconds + 8)  # the run, with the generators' connecting time
    floor_after = _proc(floor_proc.pid)
    for proc in procs:
        proc.join(timeout=120)
    elapsed = min(seconds, time.monotonic() - began)
    expected = sum(counter.value for counter in counters)
    applied, drained = _wait_applied(database, expected, began + seconds + 8)
    floor_done = _proc(floor_proc.pid)
    floor_proc.send_signal(signal.SIGTERM)
    floor_proc.wait(timeout=30)
    broker.stop()
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT sent_ns, applied_ns FROM records").fetchall()
        problems = db.execute("SELECT COUNT(*) FROM problems").fetchone()[0]
    publish_ms = [(a - s) / 1e6 for s, a in rows if s]
    return {
        "tables": tables, "feeds": f"none: {generators} generator processes publish directly",
        "pace_records_per_s_per_table": pace, "seconds": round(elapsed, 1),
        "records_offered_per_s": round(tables * pace, 1),
        "records_published": expected, "records_applied": applied, "problems": problems,
        "records_per_s_published": round(expected / elapsed, 1),
        "catch_up_s_after_stop": round(drained, 1),
        "publish_to_applied_ms": {"p50": _pct(publish_ms, 50), "p99": _pct(publish_ms, 99),
                                  "max": round(max(publish_ms, default=0), 1)},
        "floor_cpu_share_of_one_core": round((floor_after["cpu_s"] - floor_before["cpu_s"])
                                             / (seconds + 8), 3),
        "floor_cpu_seconds_until_all_applied": round(floor_done["cpu_s"] - floor_before["cpu_s"],
                                                     1),
        "floor_records_per_cpu_second": round(applied / max(
            floor_done["cpu_s"] - floor_before["cpu_s"], 1e-9)),
        "floor_rss_mb": round(floor_done["hwm_mb"], 1),
    }


def _lab(work: Path, names: list[str]
         ) -> tuple[list[list[bytes]], Path, Mosquitto, Path, subprocess.Popen[bytes]]:
    """A 60-round bench journal re-sealed for each table, the PKI, a started Mosquitto, and a
    subscribed floor process: (lines per table, pki, broker, database, floor process)."""
    source = work / "bench-journal"
    Bench("rws-three-card-poker", 60, seed=7, faults="0.1", journal_dir=source).run()
    lines = [rehome(source, name) for name in names]
    pki = make_pki(work / "pki", [*names, "floor"])
    (work / "broker").mkdir()
    broker = Mosquitto(work / "broker", pki)
    broker.start()
    database = work / "floor.sqlite3"
    return lines, pki, broker, database, _start_floor(work, pki, broker, database)


def _start_floor(work: Path, pki: Path, broker: Mosquitto, database: Path
                 ) -> subprocess.Popen[bytes]:
    floor_proc = subprocess.Popen([sys.executable, "-m", "controller", "--log-level", "INFO",
                                   "floor", "--config",
                                   str(floor_config(work, pki, broker, str(database)))],
                                  cwd=ROOT, stderr=(work / "floor.log").open("ab"))
    deadline = time.monotonic() + 30
    while b"floor subscribed" not in (work / "floor.log").read_bytes():  # bounded start-up
        if time.monotonic() > deadline or floor_proc.poll() is not None:
            raise RuntimeError("the floor did not subscribe: "
                               + (work / "floor.log").read_text()[-2000:])
        time.sleep(0.1)
    return floor_proc


def _wait_applied(database: Path, expected: int, since: float) -> tuple[int, float]:
    """Wait (at most 120 s) for the floor to apply ``expected`` records: (applied, seconds
    it took after ``since``)."""
    deadline = time.monotonic() + 120
    applied = 0
    while time.monotonic() < deadline:  # let the floor catch up, bounded
        with sqlite3.connect(database) as db:
            applied = db.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        if applied >= expected:
            break
        time.sleep(0.5)
    return applied, max(0.0, time.monotonic() - since)


def run(tables: int, pace: float, seconds: float, work: Path, processes: bool = False
        ) -> dict[str, Any]:
    names = [f"T{i:03d}" for i in range(tables)]
    lines, pki, broker, database, floor_proc = _lab(work, names)
    dirs = [work / f"journal-{name}" for name in names]
    for directory in dirs:
        directory.mkdir()
    def feed_process(name: str, directory: Path) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-m", "controller.feed", "--config",
                                 str(feed_config(work, pki, broker, name, directory))],
                                cwd=ROOT, stderr=(work / "feed.log").open("ab"))

    feed_proc = feed_process(names[0], dirs[0])
    others = list(zip(names[1:], dirs[1:]))
    feed_procs = [feed_process(name, directory) for name, directory in others] \
        if processes else []
    feeds = [] if processes else [
        Feed(load_feed_config(feed_config(work, pki, broker, name, directory)))
        for name, directory in others]
    threads = [threading.Thread(target=feed.run, daemon=True) for feed in feeds]
    for thread in threads:
        thread.start()
    written: dict[tuple[str, int], int] = {}
    stop = threading.Event()
    interval = 1.0 / pace
    writer = threading.Thread(target=_writer, args=(dirs, lines, interval, stop, written))
    floor_before = _proc(floor_proc.pid)
    began = time.monotonic()
    writer.start()
    time.sleep(seconds)  # the measured run itself
    stop.set()
    writer.join()
    elapsed = time.monotonic() - began
    floor_after = _proc(floor_proc.pid)
    feed_mem = _proc(feed_proc.pid)
    expected = len(written)
    applied, drained = _wait_applied(database, expected, began + elapsed)
    for feed in feeds:
        feed.stop.set()
    for thread in threads:
        thread.join(timeout=10)
    for process in [feed_proc, *feed_procs, floor_proc]:
        process.send_signal(signal.SIGTERM)
    for process in [feed_proc, *feed_procs]:
        process.wait(timeout=60)
    floor_proc.wait(timeout=30)
    broker.stop()
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT table_id, seq, sent_ns, applied_ns FROM records").fetchall()
        problems = db.execute("SELECT COUNT(*) FROM problems").fetchone()[0]
    last_applied: dict[str, int] = {}
    for table, seq, _, _ in rows:
        last_applied[table] = max(seq, last_applied.get(table, 0))
    last_written: dict[str, int] = {}
    for table, seq in written:
        last_written[table] = max(seq, last_written.get(table, 0))
    behind = {t: last_written[t] - last_applied.get(t, 0) for t in last_written
              if last_written[t] != last_applied.get(t, 0)}
    publish_ms = [(a - s) / 1e6 for _, _, s, a in rows if s]
    held = _held_seqs(lines[0])
    write_ms = [(a - written[(t, q)]) / 1e6 for t, q, _, a in rows
                if (t, q) in written and q not in held]
    held_ms = [(a - written[(t, q)]) / 1e6 for t, q, _, a in rows
               if (t, q) in written and q in held]
    return {
        "tables": tables, "feeds": "processes" if processes else "T000 a process, the rest "
                                                                   "threads of one process",
        "pace_records_per_s_per_table": pace, "seconds": round(elapsed, 1),
        "records_written": expected, "records_applied": applied, "problems": problems,
        "held_at_stop": behind,
        "records_per_s": round(expected / elapsed, 1),
        "catch_up_s_after_stop": round(drained, 1),
        "publish_to_applied_ms": {"p50": _pct(publish_ms, 50), "p99": _pct(publish_ms, 99),
                                  "max": round(max(publish_ms, default=0), 1)},
        "write_to_applied_ms_not_held": {"p50": _pct(write_ms, 50), "p99": _pct(write_ms, 99),
                                         "max": round(max(write_ms, default=0), 1)},
        "write_to_applied_ms_held_for_reveal": {
            "records": len(held_ms), "p50": _pct(held_ms, 50), "p99": _pct(held_ms, 99)},
        "floor_cpu_share_of_one_core": round((floor_after["cpu_s"] - floor_before["cpu_s"])
                                             / elapsed, 3),
        "floor_rss_mb": round(floor_after["hwm_mb"], 1),
        "feed_process_rss_mb": round(feed_mem["rss_mb"], 1),
        "feed_process_peak_rss_mb": round(feed_mem["hwm_mb"], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--pace", default="live", help="'live' (1 record/s per table) or a "
                                                       "multiple of it, e.g. 50")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--processes", action="store_true",
                        help="every feed its own process (as on the tables), not threads")
    parser.add_argument("--direct", type=int, default=0, metavar="K",
                        help="no feeds: K generator processes publish straight to the broker")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    configure_logging("WARNING")  # the bench tables' device chatter stays out of the figures
    pace = 1.0 if args.pace == "live" else float(args.pace)
    with tempfile.TemporaryDirectory(prefix="tablectl-feed-bench-") as work:
        result = run_direct(args.tables, pace, args.seconds, Path(work), args.direct) \
            if args.direct else run(args.tables, pace, args.seconds, Path(work), args.processes)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:32} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
