"""The Table: one queue, one thread, subscribers, determinism, survival of bad inputs."""

from __future__ import annotations

import queue

from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.layout import TableLayout
from controller.table.table import Table
from drivers import events as dev
from tests.controller.table.conftest import DEALER, cards

HANDS = [("KS", "QH", "9C"), ("2D", "3C", "AH"), ("5S", "3H", "TC")]


def _inputs() -> list[object]:
    return [
        cmd.OpenRound(**DEALER),
        cmd.PlaceWager(**DEALER, wager_id="a", position="1", bet="main", amount=1000),
        cmd.PlaceWager(**DEALER, wager_id="b", position="2", bet="main", amount=1000),
        object(),  # garbage: refused, not fatal
        cmd.CloseBets(**DEALER),
        dev.ShuffleDone(device="shuffler", counted=52, expected=52, at=1.0),
        *[dev.CardSetDispensed(device="shuffler", cards=cards(*hand), at=2.0 + i)
          for i, hand in enumerate(HANDS)],
        cmd.RevealDealer(**DEALER),
        cmd.SettleRound(**DEALER),
    ]


def _run(inputs: list[object]) -> list[ev.RoundEvent]:
    out: queue.Queue[ev.RoundEvent] = queue.Queue()
    with Table(TableLayout.for_game("rws-nc-three-pictures"), [out.put]) as table:
        for item in inputs:
            table.put(item)
        events = []
        while True:
            event = out.get(timeout=60)
            events.append(event)
            if isinstance(event, ev.RoundSettled):
                break
    return events


def test_table_thread_settles_a_round_from_its_queue() -> None:
    """Inputs put on the one queue are handled in order on the table thread; the garbage input
    is refused and the round still settles."""
    events = _run(_inputs())
    assert any(isinstance(e, ev.CommandRefused) for e in events)
    settled = events[-1]
    assert {r.wager_id: r.outcome.value for r in settled.settlement.results} == \
        {"a": "win", "b": "lose"}


def test_same_inputs_same_outputs() -> None:
    """Deterministic: the same inputs (whatever their timestamps) give equal round events, so
    the journal can replay them."""
    first = _run(_inputs())
    again = [dev.ShuffleDone(device="shuffler", counted=52, expected=52, at=99.0)
             if isinstance(i, dev.ShuffleDone) else i for i in _inputs()]
    assert _run(again) == first


def test_subscriber_failure_does_not_stop_the_table() -> None:
    """A failing subscriber (a broken display) is logged; the others still get every event."""
    out: queue.Queue[ev.RoundEvent] = queue.Queue()

    def broken(event: ev.RoundEvent) -> None:
        raise RuntimeError("display gone")

    with Table(TableLayout.for_game("rws-nc-three-pictures"), [broken, out.put]) as table:
        table.put(cmd.OpenRound(**DEALER))
        assert isinstance(out.get(timeout=60), ev.RoundOpened)
