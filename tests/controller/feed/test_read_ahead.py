"""The feed's read-ahead, without a broker (the link stays down, nothing is sent): it reads the
journal in steps rather than all at once, and a read-ahead that is full while its first record
waits for a reveal is logged once instead of stalling in silence."""

from __future__ import annotations

import json
import shutil
from collections import deque
from pathlib import Path
from types import SimpleNamespace

import pytest

from testbed.floorlab import feed_config, make_pki
from controller.bench import Bench
from controller.feed import run as feed_run
from controller.feed.config import load_feed_config
from controller.feed import lookahead
from controller.service.visibility import Horizon, ends_round
from controller.feed.run import Feed
from controller.journal.reader import iter_records
from controller.journal.record import Record
from testbed.journalgen import rehome, write_all

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


def test_a_full_read_ahead_waiting_for_a_reveal_looks_on_for_the_round_end(
        feed: Feed, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A read-ahead full of records behind a face-down card is logged once; the feed then
    looks on in the journal, a batch a turn, reads nothing more into memory, and once the
    round's end is found the held record may go (it is never dropped)."""
    records = list(iter_records([feed.config.journal_dir]))
    held = next(i for i in range(len(records))
                if Horizon().releasable(records[:i + 1]) <= i)  # a face-down card, unrevealed
    end = next(i for i in range(held + 1, len(records))
               if ends_round(records[i], records[held].round_id))
    monkeypatch.setattr(feed_run, "PENDING_MAX", 1)
    monkeypatch.setattr(lookahead, "BATCH", 2)
    feed.pending = deque(records[held:held + 1])
    capsys.readouterr()
    turns = 0
    while feed.horizon.releasable(list(feed.pending)) == 0:
        assert turns <= (end - held) // 2 + 1, "the round's end was not found"
        feed._read()
        turns += 1
        assert list(feed.pending) == records[held:held + 1]  # nothing read in, nothing dropped
    assert turns == (end - held + 1) // 2  # a batch of 2 a turn, up to the end
    lines = [line for line in capsys.readouterr().err.splitlines() if "feed held" in line]
    assert len(lines) == 1 and f'"seq": {records[held].seq}' in lines[0]


def test_the_round_end_search_waits_for_the_end_to_be_written(tmp_path: Path) -> None:
    """Looking on from a record whose round has not ended in the journal yet: not found, turn
    after turn; found once the table writes the end."""
    Bench("rws-three-card-poker", 2, seed=5, journal_dir=tmp_path / "bench").run()
    lines = rehome(tmp_path / "bench", "T1")
    records = [Record.from_dict(json.loads(line)) for line in lines]
    reveal = next(i for i, r in enumerate(records) if r.event_type == "dealer_revealed")
    journal = tmp_path / "journal"
    write_all(journal, lines[:reveal])
    search = lookahead.RoundEndSearch(journal, records[reveal].round_id or "", reveal - 3)
    assert [search.found() for _ in range(3)] == [False, False, False]
    with next(journal.iterdir()).open("ab") as handle:
        handle.write(lines[reveal])
    assert search.found() and search.looked_at == 4  # seqs reveal-2 .. reveal+1
