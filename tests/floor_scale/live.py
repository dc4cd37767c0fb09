"""What the two floor-scale end-to-end tests (a shared group and a lease group) both do: three
tables' journals written live while their feeds run, the floor's applied heads read back, the
programs stopped, and the one check that every record was applied once and in chain order."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

from controller.floor.store import Store
from testbed.floorlab import feed_config, start_program
from testbed.journalgen import write_live
from tests.feed_e2e.broker import Mosquitto

GROUP = "floor"
TAKE_OVER_BOUND_S = 60.0
"""Generous (the box is shared); the issue's 10 s is what the measured figure is held to in
docs/feed.md, printed by these tests and by benchmarks/floor_consumers.py."""
PACE_S = 0.025
"""A record per table every 25 ms (40/s per table, 120/s in all): 767 records a table take
about 20 s, so the kill lands mid-stream."""


class LiveJournals:
    """Each table's journal (``tmp_path/journal-<table>``) written a record every
    :data:`PACE_S` on a thread of its own, so a test can kill a consumer mid-stream and know
    how far each table was written at that moment (:attr:`written`)."""

    def __init__(self, tmp_path: Path, lines: dict[str, list[bytes]]) -> None:
        self.tmp_path = tmp_path
        self.lines = lines
        self.written = dict.fromkeys(lines, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._write, name="test-journal-writer")

    def _write(self) -> None:
        streams = {t: write_live(self.tmp_path / f"journal-{t}", self.lines[t], PACE_S)
                   for t in self.lines}
        while streams and not self._stop.is_set():
            for table, stream in list(streams.items()):
                count = next(stream, None)
                if count is None:
                    del streams[table]
                else:
                    self.written[table] = count

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop writing (it may not have started: a test can fail before)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=60)


def start_feeds(tmp_path: Path, pki: Path, broker: Mosquitto,
                tables: list[str]) -> list[subprocess.Popen[bytes]]:
    """One feed (``controller.feed``) per table, following its live journal."""
    return [start_program(["controller.feed", "--config", str(feed_config(
        tmp_path, pki, broker, t, tmp_path / f"journal-{t}"))], tmp_path / f"feed-{t}.log")
        for t in tables]


def applied(postgres: str) -> dict[str, int]:
    """The last applied seq of each table the floor has seen."""
    store = Store(postgres)
    try:
        return dict(store.query("SELECT table_id, last_seq FROM tables"))
    finally:
        store.close()


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a feed or a consumer (kill it if it does not go), and reap it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def assert_each_record_once_in_order(postgres: str, lines: dict[str, list[bytes]]) -> None:
    """Every record of every table applied exactly once, in chain order, no problem reported."""
    store = Store(postgres)
    try:
        for table, written in lines.items():
            rows = store.query("SELECT seq, hash FROM records WHERE table_id = ? "
                               "ORDER BY applied_ns, seq", (table,))
            expected = [(r["seq"], r["hash"]) for r in map(json.loads, written)]
            assert rows == expected, f"{table}: not every record once, in chain order"
        assert store.query("SELECT kind, detail FROM problems") == []
        assert store.query("SELECT COUNT(*) FROM records") == [(sum(map(len, lines.values())),)]
    finally:
        store.close()
