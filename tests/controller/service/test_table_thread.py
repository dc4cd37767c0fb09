"""The one table loop (issue 35): the service's table thread (``service/wiring/tablethread.py``)
takes inputs from its one queue, has each journaled before the table acts on it, and hands the
journaled events on; nothing kills it. The crash campaign, the delivery tests and the end-to-end
rig run this same thread."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.journal import iter_records
from controller.journal.policy import Durability
from controller.journal.recovery import recover
from controller.journal.replay import replay_records
from controller.journal.writer import JournalWriter
from controller.service.wiring.tablethread import TableThread
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.layout import TableLayout
from drivers import events as dev
from tests.controller.table.conftest import DEALER, cards

GAME = "rws-nc-three-pictures"
HANDS = [("KS", "QH", "9C"), ("2D", "3C", "AH"), ("5S", "3H", "TC")]
WAIT = 60.0


def _inputs(shuffled_at: float = 1.0) -> list[object]:
    return [
        cmd.OpenRound(**DEALER),
        cmd.PlaceWager(**DEALER, wager_id="a", position="1", bet="main", amount=1000),
        cmd.PlaceWager(**DEALER, wager_id="b", position="2", bet="main", amount=1000),
        object(),  # garbage: cannot be journaled, so not acted on; not fatal
        cmd.CloseBets(**DEALER),
        dev.ShuffleDone(device="shuffler", counted=52, expected=52, at=shuffled_at),
        *[dev.CardSetDispensed(device="shuffler", cards=cards(*hand), at=2.0 + i)
          for i, hand in enumerate(HANDS)],
        cmd.RevealDealer(**DEALER),
        cmd.SettleRound(**DEALER),
    ]


@pytest.fixture(name="thread")
def fixture_thread(tmp_path: Path) -> Iterator[TableThread]:
    """A table thread on a fresh tmp journal (not started); closed with its writer."""
    writer = JournalWriter(tmp_path / "journal", table_id="T1", durability=Durability.NONE)
    journaled, _ = recover(writer, TableLayout.for_game(GAME, table_id="T1"))
    thread = TableThread(journaled)
    yield thread
    thread.close()
    writer.close()


def _run(thread: TableThread, inputs: list[object]) -> list[ev.RoundEvent]:
    out: queue.Queue[ev.RoundEvent] = queue.Queue()
    thread.subscribe(out.put)
    thread.start()
    for item in inputs:
        thread.put(item)
    events = []
    while not isinstance(event := out.get(timeout=WAIT), ev.RoundSettled):
        events.append(event)
    return [*events, event]


def test_table_thread_settles_a_round_from_its_queue(thread: TableThread,
                                                      tmp_path: Path) -> None:
    """Inputs put on the one queue are journaled and handled in order on the table thread
    (named ``table-<id>``); the garbage input cannot be journaled, so the table never acts on
    it (journal first) and it is counted; the round still settles and its journal replays to
    the same outputs."""
    events = _run(thread, _inputs())
    settled = events[-1]
    assert isinstance(settled, ev.RoundSettled)
    assert {r.wager_id: r.outcome.value for r in settled.settlement.results} == \
        {"a": "win", "b": "lose"}
    assert thread.probe(WAIT)
    assert thread.snapshot.journal_failures == 1
    assert [t.name for t in threading.enumerate()].count("table-T1") == 1
    replay = replay_records(iter_records([tmp_path / "journal"]))
    assert replay.divergences == [] and replay.settlements_checked == 1


def test_same_inputs_same_outputs(tmp_path: Path) -> None:
    """Deterministic: the same inputs (whatever their timestamps) give equal round events, so
    the journal can replay them."""
    runs = []
    for name, shuffled_at in (("first", 1.0), ("again", 99.0)):
        writer = JournalWriter(tmp_path / name, table_id="T1", durability=Durability.NONE)
        thread = TableThread(recover(writer, TableLayout.for_game(GAME, table_id="T1"))[0])
        try:
            runs.append(_run(thread, _inputs(shuffled_at)))
        finally:
            thread.close()
            writer.close()
    assert runs[0] == runs[1]


def test_subscriber_failure_does_not_stop_the_table(thread: TableThread) -> None:
    """A failing subscriber (a broken display) is logged; the others still get every event."""
    out: queue.Queue[ev.RoundEvent] = queue.Queue()

    def broken(event: ev.RoundEvent) -> None:
        raise RuntimeError("display gone")

    thread.subscribe(broken)
    thread.subscribe(out.put)
    thread.start()
    thread.put(cmd.OpenRound(**DEALER))
    assert isinstance(out.get(timeout=WAIT), ev.RoundOpened)
    assert thread.probe(WAIT) and thread.alive
