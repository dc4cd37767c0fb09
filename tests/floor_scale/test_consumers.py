"""Issue 37: several floor consumers on one site, with the real parts -- Mosquitto's MQTT 5
shared subscription hands each record to one consumer of the group, PostgreSQL (advisory locks
per table, the (table, seq) key) keeps each table's records applied once and in chain order,
whichever consumer got them."""

from __future__ import annotations

import time
from pathlib import Path

from testbed.floorlab import floor_config, start_program
from controller.feed.config import load_floor_config
from controller.service.errors import ConfigError
from testbed.journalgen import rehome
from tests.feed_e2e.broker import Mosquitto
from tests.floor_scale.conftest import TABLES
from tests.floor_scale.live import (
    GROUP,
    TAKE_OVER_BOUND_S,
    LiveJournals,
    applied,
    assert_each_record_once_in_order,
    start_feeds,
    stop,
)
from tests.waiting import wait_until


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
    journals = LiveJournals(tmp_path, lines)
    feeds = []
    try:
        wait_until(lambda: applied(postgres) == {} and all(
            b"floor subscribed" in (tmp_path / f"floor-{n}.log").read_bytes()
            for n in consumers), "both consumers subscribed")
        journals.start()
        feeds = start_feeds(tmp_path, pki, broker, TABLES)
        wait_until(lambda: sum(applied(postgres).values()) >= total // 3,
                   "a third of the records applied", timeout=180)
        consumers["a"].kill()  # SIGKILL: no goodbye, its session and its held records gone
        killed_at, before_kill = time.monotonic(), dict(journals.written)
        consumers["a"].wait(timeout=30)
        wait_until(lambda: all(applied(postgres).get(t, 0) >= before_kill[t] for t in TABLES),
                   "every record written before the kill applied", timeout=TAKE_OVER_BOUND_S)
        take_over_s = time.monotonic() - killed_at
        print(f"\ntake-over: every record written before the SIGKILL applied {take_over_s:.2f} s"
              f" after it (written then: {before_kill})")
        wait_until(lambda: applied(postgres) == {t: len(lines[t]) for t in TABLES},
                   "every record applied", timeout=300)
        assert consumers["b"].poll() is None, "the surviving consumer died"
    finally:
        journals.stop()
        for process in [*feeds, *consumers.values()]:
            stop(process)
    assert_each_record_once_in_order(postgres, lines)


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
