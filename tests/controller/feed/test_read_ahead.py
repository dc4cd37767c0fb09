"""The feed's read-ahead, without a broker (the link stays down, nothing is sent): it reads the
journal in steps rather than all at once, and a read-ahead that is full while its first record
waits for a reveal is logged once instead of stalling in silence."""

from __future__ import annotations

import shutil
from collections import deque
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.floorlab import feed_config, make_pki
from benchmarks.journalgen import rehome, write_all
from controller.bench import Bench
from controller.feed import run as feed_run
from controller.feed.config import load_feed_config
from controller.feed.horizon import Horizon
from controller.feed.run import Feed
from controller.journal.reader import iter_records

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None,
                                reason="openssl makes the feed's TLS files")


@pytest.fixture(name="feed")
def feed_fixture(tmp_path: Path) -> Feed:
    Bench("rws-three-card-poker", 3, seed=5, journal_dir=tmp_path / "bench").run()
    journal = tmp_path / "journal"
    write_all(journal, rehome(tmp_path / "bench", "T1"))
    pki = make_pki(tmp_path / "pki", ["T1"])
    broker = SimpleNamespace(port=1)  # never connected: open() is not called
    return Feed(load_feed_config(feed_config(tmp_path, pki, broker, "T1", journal)))  # type: ignore[arg-type]


def test_reads_in_steps_while_what_it_holds_may_go(feed: Feed,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed_run, "READ_AHEAD", 8)
    feed._read()
    feed._read()
    assert len(feed.pending) == 8 and feed._may_go > 0  # the journal's first records may go


def test_a_full_read_ahead_waiting_for_a_reveal_is_logged_once(
        feed: Feed, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    records = list(iter_records([feed.config.journal_dir]))
    held = next(i for i in range(len(records))
                if Horizon().releasable(records[:i + 1]) <= i)  # a face-down card, unrevealed
    monkeypatch.setattr(feed_run, "PENDING_MAX", 1)
    feed.pending = deque(records[held:held + 1])
    capsys.readouterr()
    for _ in range(3):
        feed._read()
    lines = [line for line in capsys.readouterr().err.splitlines() if "feed held" in line]
    assert len(lines) == 1 and f'"seq": {records[held].seq}' in lines[0]
    assert len(feed.pending) == 1  # nothing read past the limit, nothing dropped
