"""The feed and the floor with the real parts: Mosquitto over TLS with the ACL, bench journals,
the feed's cursor on disk, the floor's SQLite database."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.bench import Bench
from controller.cli import main
from controller.feed.config import load_feed_config
from controller.service.visibility import card_codes
from controller.feed import mqtt as feed_mqtt
from controller.feed import run as feed_run
from controller.feed.run import Feed, Link
from controller.floor.chain import Verdict
from controller.floor.store import Store
from controller.floor.view import floor_view
from testbed.journalgen import rehome, write_all, write_live
from tests.feed_e2e.broker import Mosquitto
from tests.feed_e2e.conftest import feed_config, floor_config
from tests.feed_e2e.helpers import WAIT_S, Client, RunningFloor
from tests.waiting import wait_until


RECONNECT_S = (0.05, 0.25)
"""The feed's and the floor's reconnect back-off in the outage test (``controller.feed.mqtt``,
first and longest pause): a broker back after the outage is found within a quarter second
instead of the default's 4 s, and the outage itself is counted in records, not seconds (issue
35: no test waits 30 s for an outage)."""
OUTAGE_RECORDS = feed_run.PENDING_MAX + feed_run.READ_AHEAD
"""Records the table writes while the broker is down: more than the feed may hold read ahead,
so the catch-up after the outage goes in steps, as after a long outage on a busy table."""


def _run_feed(config: Path) -> tuple[Feed, threading.Thread]:
    feed = Feed(load_feed_config(config))
    thread = threading.Thread(target=feed.run, name="test-feed")
    thread.start()
    return feed, thread


def _stop(feed: Feed, thread: threading.Thread) -> None:
    feed.stop.set()
    thread.join(timeout=WAIT_S)


def test_two_tables_every_record_once_in_order(tmp_path: Path, pki: Path, broker: Mosquitto,
                                               journal_3cp: Path, capsys) -> None:
    """Both tables' journals arrive whole: each record applied once, in chain order, and the
    floor view counts the bench's rounds, voids by clause and hold; ``floor status`` prints
    it."""
    lines = {table: rehome(journal_3cp, table) for table in ("T1", "T2")}
    feeds = []
    with RunningFloor(floor_config(tmp_path, pki, broker)) as floor:
        for table, table_lines in lines.items():
            journal = write_all(tmp_path / f"journal-{table}", table_lines)
            feeds.append(_run_feed(feed_config(tmp_path, pki, broker, table, journal.parent)))
        applied: dict[str, list[int]] = {"T1": [], "T2": []}
        last = len(lines["T1"])
        for judged in floor.until(lambda j: all(a and a[-1] == last for a in applied.values())
                                  if j.verdict is Verdict.APPLY
                                  and applied[j.table].append(j.seq) is None else False):
            assert judged.verdict in (Verdict.APPLY, Verdict.DUPLICATE), judged
        for feed, thread in feeds:
            _stop(feed, thread)
    assert applied["T1"] == applied["T2"] == list(range(1, last + 1))
    view = floor_view(Store(str(tmp_path / "floor.sqlite3")))
    bench = [json.loads(line) for line in lines["T1"]]
    settled = sum(1 for r in bench if r["event"] == "round_settled")
    voided = [r["payload"]["clause"] for r in bench if r["event"] == "round_voided"]
    assert view["tables"]["T1"]["settled"] == settled and settled > 0
    assert view["tables"]["T1"]["voided"] == len(voided)
    assert sum(view["tables"]["T1"]["voids_by_clause"].values()) == len(voided)
    hold = -sum(res["net"] for r in bench if r["event"] == "round_settled"
                for res in r["payload"]["settlement"]["results"])
    assert view["tables"]["T2"]["hold"] == hold
    assert view["problems"] == []
    assert main(["floor", "status", "--config", str(tmp_path / "floor.toml")]) == 0
    assert "T2" in capsys.readouterr().out


def _step_until(feed: Feed, done: Callable[[], bool], most_held: list[int]) -> None:
    """Turn the feed until ``done``, bounded; the most records it held at once go in
    ``most_held``."""
    deadline = time.monotonic() + WAIT_S
    while not done():
        assert time.monotonic() < deadline, f"the feed is stuck at seq {feed.cursor.seq}"
        feed.step()
        most_held[0] = max(most_held[0], len(feed.pending))


def _held_for_good(feed: Feed, round_id: str, most_held: list[int], turns: int = 20) -> bool:
    """The feed holds a record of ``round_id`` and, turned ``turns`` more times, still holds
    the same one with nothing in flight: held for the reveal, not for a turn's reading."""
    if not (feed.idle and feed.pending and feed.pending[0].round_id == round_id):
        return False
    head = feed.pending[0]
    for _ in range(turns):
        feed.step()
        most_held[0] = max(most_held[0], len(feed.pending))
        if not (feed.idle and feed.pending and feed.pending[0] is head):
            return False
    return True


@pytest.mark.parametrize("read_ahead", ["default", "shorter than the round"])
def test_face_down_card_is_never_on_the_wire_before_the_reveal(
        tmp_path: Path, pki: Path, broker: Mosquitto, journal_3cp: Path, read_ahead: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """RWS-3CP 3.6: with the journal written up to just before the dealer's reveal, the wire
    (a subscriber to everything) carries every record before the dealer's hand and none of
    the dealer's cards; once the reveal is written the held records follow, in order. Also
    when the feed may hold fewer records than lie between the dealer's card and the reveal:
    it holds from the first record it cannot judge within its limit, looks on in the journal
    for the round's end instead of waiting for ever, and never holds more than its limit."""
    lines = rehome(journal_3cp, "T1")
    records = [json.loads(line) for line in lines]
    reveal = next(i for i, r in enumerate(records) if r["event"] == "dealer_revealed")
    dealer = set(records[reveal]["payload"]["cards"])
    round_id = records[reveal]["round"]
    first_shown = next(i for i, r in enumerate(records)
                       if r["round"] == round_id and set(card_codes(r["payload"])) & dealer)
    if read_ahead != "default":
        assert reveal - first_shown >= 6
        monkeypatch.setattr(feed_run, "PENDING_MAX", (reveal - first_shown) // 3)
        monkeypatch.setattr(feed_run, "READ_AHEAD", 2)
    journal = write_all(tmp_path / "journal-T1", lines[:reveal])
    sniffer = Client(pki, broker.port, "sniffer")
    sniffer.subscribe("tablectl/#")
    feed = Feed(load_feed_config(feed_config(tmp_path, pki, broker, "T1", journal.parent)))
    most_held = [0]
    feed.open()
    try:
        _step_until(feed, lambda: _held_for_good(feed, round_id, most_held), most_held)
        held = feed.pending[0]
        if read_ahead == "default":
            assert held.seq == first_shown + 1 and set(card_codes(held.payload)) & dealer
        else:  # a set whose placing lies beyond the shorter read-ahead waits too: earlier
            assert held.seq <= first_shown + 1
        wire = sniffer.records_until("T1", feed.cursor.seq)
        assert [r["seq"] for r in wire] == list(range(1, held.seq))
        for record in wire:
            assert not (record["round"] == round_id and set(card_codes(record["payload"]))
                        & dealer), f"dealer card on the wire in seq {record['seq']}"
        with journal.open("ab") as handle:
            handle.writelines(lines[reveal:])
        _step_until(feed, lambda: feed.idle and feed.cursor.seq == len(lines), most_held)
        rest = sniffer.records_until("T1", len(lines))
        assert [r["seq"] for r in rest] == list(range(held.seq, len(lines) + 1))
    finally:
        feed.close()
        sniffer.close()
    assert most_held[0] <= feed_run.PENDING_MAX
    saved = json.loads((tmp_path / "feed-T1" / "feed.cursor").read_text())
    assert saved["seq"] == len(lines) and saved["hash"] == records[-1]["hash"]


def test_broker_outage_mid_stream_loses_nothing(tmp_path: Path, pki: Path, broker: Mosquitto,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The broker stops in the middle of a table that keeps writing (the table never waits for
    the feed), and starts again once the feed has seen its link go down and the table has
    written more records than the feed may hold read ahead, with the table still writing:
    every record arrives, in order, each applied once, and the floor connected again."""
    monkeypatch.setattr(feed_mqtt, "RECONNECT_MIN_S", RECONNECT_S[0])
    monkeypatch.setattr(feed_mqtt, "RECONNECT_MAX_S", RECONNECT_S[1])
    source = tmp_path / "journal-40"
    Bench("rws-three-card-poker", 40, seed=4, faults="0.1", journal_dir=source).run()
    lines = rehome(source, "T1")
    journal = tmp_path / "journal-T1"
    written = [0]

    def table() -> None:
        for count in write_live(journal, lines, 0.004):
            written[0] = count

    writer = threading.Thread(target=table, name="test-table")
    writer.start()
    with RunningFloor(floor_config(tmp_path, pki, broker)) as floor:
        feed, thread = _run_feed(feed_config(tmp_path, pki, broker, "T1", journal))
        try:
            before = floor.until_applied("T1", len(lines) // 4)
            broker.stop()
            at_stop, generation = written[0], floor.floor.generation
            wait_until(lambda: feed.link, "the feed sees the broker gone",
                       check=lambda link: link is Link.DOWN)
            wait_until(lambda: written[0], f"the table writes {OUTAGE_RECORDS} records more",
                       check=lambda count: count >= at_stop + OUTAGE_RECORDS)
            assert written[0] < len(lines), "the outage ends while the table still writes"
            broker.start()
            after = floor.until_applied("T1", len(lines), timeout=60)
        finally:
            writer.join(timeout=WAIT_S)
            _stop(feed, thread)
    applied = [j.seq for j in before + after if j.verdict is Verdict.APPLY]
    assert applied == list(range(1, len(lines) + 1))
    assert all(j.verdict in (Verdict.APPLY, Verdict.DUPLICATE) for j in before + after)
    assert floor.floor.generation > generation, "the floor connected again after the outage"
