"""Issue 37, ``assign = "lease"`` with the real parts: Mosquitto (each consumer subscribed to
its leased tables' topics only) and PostgreSQL (the leases, the apply checking its lease, the
(table, seq) key). Two consumers, one SIGKILLed mid-stream, a third joining."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from testbed.floorlab import floor_config, start_program
from controller.floor.store import Store
from testbed.journalgen import rehome
from tests.feed_e2e.broker import Mosquitto
from tests.floor_scale import live
from tests.floor_scale.conftest import TABLES, lease_config
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
        config = lease_config(floor_config(tmp_path, pki, broker, postgres, group=live.GROUP,
                                           consumer=name))
        return start_program(["controller", "--log-level", "INFO", "floor", "--config",
                              str(config)], tmp_path / f"floor-{name}.log")

    consumers = {name: consumer(name) for name in ("a", "b")}
    journals = live.LiveJournals(tmp_path, lines)
    feeds = []
    try:
        wait_until(lambda: all(b"floor subscribed" in (tmp_path / f"floor-{n}.log").read_bytes()
                               for n in consumers), "both consumers subscribed")
        shared = wait_until(lambda: _leases(postgres), "both consumers holding leases",
                            check=lambda held: len(held) == 2)
        journals.start()
        feeds = live.start_feeds(tmp_path, pki, broker, TABLES)
        wait_until(lambda: sum(live.applied(postgres).values()) >= total // 3,
                   "a third of the records applied", timeout=180)
        consumers["a"].kill()  # SIGKILL: its leases just stop
        killed_at, before_kill = time.monotonic(), dict(journals.written)
        consumers["a"].wait(timeout=30)
        # the dead one's tables move again only once its leases expired and were taken over
        wait_until(lambda: all(live.applied(postgres).get(t, 0) > before_kill[t] for t in TABLES),
                   "every table applying records written after the kill",
                   timeout=live.TAKE_OVER_BOUND_S)
        take_over_s = time.monotonic() - killed_at
        print(f"\nleases {shared}; take-over: every table applied a record written after the "
              f"SIGKILL {take_over_s:.2f} s after it (written then: {before_kill})")
        consumers["c"] = consumer("c")
        joined = wait_until(lambda: _leases(postgres), "the joining consumer holding leases",
                            check=lambda held: sum("floor-c-" in name for name in held) == 1
                            and len(held) == 2 and min(held.values()) >= 1)
        print(f"after the join: {joined}")
        wait_until(lambda: live.applied(postgres) == {t: len(lines[t]) for t in TABLES},
                   "every record applied", timeout=300)
        assert consumers["b"].poll() is None, "the surviving consumer died"
    finally:
        journals.stop()
        for process in [*feeds, *consumers.values()]:
            live.stop(process)
    assert (tmp_path / "floor-c.log").read_bytes().count(b"floor leases changed") >= 1
    live.assert_each_record_once_in_order(postgres, lines)
