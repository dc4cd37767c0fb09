"""Issue 37, ``assign = "lease"`` with the real parts: Mosquitto (each consumer subscribed to
its leased tables' topics only) and PostgreSQL (the leases, the apply checking its lease, the
(table, seq) key). Two consumers, one SIGKILLed mid-stream, a third joining."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

from testbed.floorlab import feed_config, floor_config, start_program
from controller.floor.store import Store
from testbed.journalgen import rehome, write_live
from tests.feed_e2e.broker import Mosquitto
from tests.floor_scale.conftest import TABLES, lease_config
from tests.floor_scale.test_consumers import (
    GROUP,
    PACE_S,
    TAKE_OVER_BOUND_S,
    _applied,
    _stop,
)
from tests.waiting import wait_until


def _leases(postgres: str) -> dict[str, int]:
    """Live leases per consumer."""
    store = Store(postgres)
    try:
        return dict(store.query("SELECT consumer, COUNT(*) FROM floor_leases "
                                "WHERE expires > clock_timestamp() GROUP BY consumer"))
    finally:
        store.close()


def test_lease_consumers_one_sigkilled_every_record_once_in_order_and_a_joiner_takes_a_share(
        tmp_path: Path, pki: Path, broker: Mosquitto, journal_3cp: Path, postgres: str) -> None:
    """Two lease consumers divide the tables (each holds some); three tables' feeds follow
    journals written live; one consumer is SIGKILLed when a third of the records are applied.
    Its leases expire and the other takes its tables over, asking their feeds to resend what
    the dead one held: every table applies records written after the kill within a generous
    bound (the time printed). A third consumer then joins and takes a share of the leases. Every
    record of every table is applied exactly once, in chain order, with no problem reported."""
    lines = {table: rehome(journal_3cp, table) for table in TABLES}
    total = sum(map(len, lines.values()))

    def consumer(name: str) -> subprocess.Popen[bytes]:
        config = lease_config(floor_config(tmp_path, pki, broker, postgres, group=GROUP,
                                           consumer=name))
        return start_program(["controller", "--log-level", "INFO", "floor", "--config",
                              str(config)], tmp_path / f"floor-{name}.log")

    consumers = {name: consumer(name) for name in ("a", "b")}
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
        wait_until(lambda: all(b"floor subscribed" in (tmp_path / f"floor-{n}.log").read_bytes()
                               for n in consumers), "both consumers subscribed")
        shared = wait_until(lambda: _leases(postgres), "both consumers holding leases",
                            check=lambda held: len(held) == 2)
        writer.start()
        feeds = [start_program(["controller.feed", "--config", str(feed_config(
            tmp_path, pki, broker, t, tmp_path / f"journal-{t}"))], tmp_path / f"feed-{t}.log")
            for t in TABLES]
        wait_until(lambda: sum(_applied(postgres).values()) >= total // 3,
                   "a third of the records applied", timeout=180)
        consumers["a"].kill()  # SIGKILL: its leases just stop
        killed_at, before_kill = time.monotonic(), dict(written)
        consumers["a"].wait(timeout=30)
        # the dead one's tables move again only once its leases expired and were taken over
        wait_until(lambda: all(_applied(postgres).get(t, 0) > before_kill[t] for t in TABLES),
                   "every table applying records written after the kill",
                   timeout=TAKE_OVER_BOUND_S)
        take_over_s = time.monotonic() - killed_at
        print(f"\nleases {shared}; take-over: every table applied a record written after the "
              f"SIGKILL {take_over_s:.2f} s after it (written then: {before_kill})")
        consumers["c"] = consumer("c")
        joined = wait_until(lambda: _leases(postgres), "the joining consumer holding leases",
                            check=lambda held: sum("floor-c-" in name for name in held) == 1
                            and len(held) == 2 and min(held.values()) >= 1)
        print(f"after the join: {joined}")
        wait_until(lambda: _applied(postgres) == {t: len(lines[t]) for t in TABLES},
                   "every record applied", timeout=300)
        assert consumers["b"].poll() is None, "the surviving consumer died"
    finally:
        stop.set()
        if writer.is_alive():
            writer.join(timeout=60)
        for process in [*feeds, *consumers.values()]:
            _stop(process)
    assert (tmp_path / "floor-c.log").read_bytes().count(b"floor leases changed") >= 1
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
