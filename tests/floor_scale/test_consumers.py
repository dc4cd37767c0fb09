"""Issue 37: several floor consumers on one site, with the real parts -- Mosquitto's MQTT 5
shared subscription hands each record to one consumer of the group, PostgreSQL (advisory locks
per table, the (table, seq) key) keeps each table's records applied once and in chain order,
whichever consumer got them."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

from testbed.floorlab import feed_config, floor_config, start_program
from controller.feed.config import load_floor_config
from controller.floor.store import Store
from controller.service.errors import ConfigError
from testbed.journalgen import rehome, write_live
from tests.feed_e2e.broker import Mosquitto
from tests.floor_scale.conftest import TABLES
from tests.waiting import wait_until

GROUP = "floor"
TAKE_OVER_BOUND_S = 60.0
"""Generous (the box is shared); the issue's 10 s is what the measured figure is held to in
docs/feed.md, printed by this test and by benchmarks/floor_consumers.py."""
PACE_S = 0.025
"""A record per table every 25 ms (40/s per table, 120/s in all): 767 records a table take
about 20 s, so the kill lands mid-stream."""


def _applied(postgres: str) -> dict[str, int]:
    store = Store(postgres)
    try:
        return dict(store.query("SELECT table_id, last_seq FROM tables"))
    finally:
        store.close()


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def test_two_consumers_one_sigkilled_mid_stream_every_record_once_in_order(
        tmp_path: Path, pki: Path, broker: Mosquitto, journal_3cp: Path, postgres: str) -> None:
    """Two consumers of one group share three tables' live streams; one is SIGKILLed when a
    third of the records are applied. The other takes its tables over (what the dead one held
    is asked for again from the feeds): every record of every table is applied exactly once,
    in chain order, with no problem reported, and everything written before the kill is
    applied within a generous bound (the measured time is printed)."""
    lines = {table: rehome(journal_3cp, table) for table in TABLES}
    total = sum(map(len, lines.values()))
    consumers = {name: start_program(
        ["controller", "--log-level", "INFO", "floor", "--config",
         str(floor_config(tmp_path, pki, broker, postgres, group=GROUP, consumer=name))],
        tmp_path / f"floor-{name}.log") for name in ("a", "b")}
    written = dict.fromkeys(TABLES, 0)
    stop = threading.Event()

    def write() -> None:
        streams = {t: write_live(tmp_path / f"journal-{t}", lines[t], PACE_S) for t in TABLES}
        while streams and not stop.is_set():
            for table, stream in list(streams.items()):
                count = next(stream, None)
                if count is None:
                    del streams[table]
                else:
                    written[table] = count

    feeds = []
    writer = threading.Thread(target=write, name="test-journal-writer")
    try:
        wait_until(lambda: _applied(postgres) == {} and all(
            b"floor subscribed" in (tmp_path / f"floor-{n}.log").read_bytes()
            for n in consumers), "both consumers subscribed")
        writer.start()
        feeds = [start_program(["controller.feed", "--config", str(feed_config(
            tmp_path, pki, broker, t, tmp_path / f"journal-{t}"))], tmp_path / f"feed-{t}.log")
            for t in TABLES]
        wait_until(lambda: sum(_applied(postgres).values()) >= total // 3,
                   "a third of the records applied", timeout=180)
        consumers["a"].kill()  # SIGKILL: no goodbye, its session and its held records gone
        killed_at, before_kill = time.monotonic(), dict(written)
        consumers["a"].wait(timeout=30)
        wait_until(lambda: all(_applied(postgres).get(t, 0) >= before_kill[t] for t in TABLES),
                   "every record written before the kill applied", timeout=TAKE_OVER_BOUND_S)
        take_over_s = time.monotonic() - killed_at
        print(f"\ntake-over: every record written before the SIGKILL applied {take_over_s:.2f} s"
              f" after it (written then: {before_kill})")
        wait_until(lambda: _applied(postgres) == {t: len(lines[t]) for t in TABLES},
                   "every record applied", timeout=300)
        assert consumers["b"].poll() is None, "the surviving consumer died"
    finally:
        stop.set()
        if writer.is_alive():
            writer.join(timeout=60)
        for process in [*feeds, *consumers.values()]:
            _stop(process)
    store = Store(postgres)
    try:
        for table in TABLES:
            rows = store.query("SELECT seq, hash FROM records WHERE table_id = ? "
                               "ORDER BY applied_ns, seq", (table,))
            expected = [(r["seq"], r["hash"]) for r in map(json.loads, lines[table])]
            assert rows == expected, f"{table}: not every record once, in chain order"
        assert store.query("SELECT kind, detail FROM problems") == []
        assert store.query("SELECT COUNT(*) FROM records") == [(total,)]
    finally:
        store.close()


def test_several_consumers_on_sqlite_are_refused_by_name(tmp_path: Path) -> None:
    """SQLite serves one consumer: a group on it is a config error naming the key, not a
    floor that would apply records twice or out of order."""
    path = tmp_path / "floor.toml"
    path.write_text('[floor]\nbroker = "mqtt://127.0.0.1:1883"\nsite = "s"\n'
                    'database = "floor.sqlite3"\ngroup = "floor"\n')
    try:
        load_floor_config(path)
    except ConfigError as error:
        assert "group" in str(error) and "PostgreSQL" in str(error)
    else:
        raise AssertionError("a group on SQLite was accepted")
