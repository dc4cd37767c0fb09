"""The Table without a thread: one input at a time on the caller's thread (as the service's table
thread, replay and recovery feed it), subscribers, determinism, survival of bad inputs. The loop
that feeds it is the service's (tests/controller/service/test_table_thread.py)."""

from __future__ import annotations

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
    events: list[ev.RoundEvent] = []
    table = Table(TableLayout.for_game("rws-nc-three-pictures"), [events.append])
    for item in inputs:
        table.process(item)
    return events


def test_table_settles_a_round_one_input_at_a_time() -> None:
    """Inputs are handled in order on the calling thread; the garbage input is refused and the
    round still settles."""
    events = _run(_inputs())
    assert any(isinstance(e, ev.CommandRefused) for e in events)
    settled = events[-1]
    assert isinstance(settled, ev.RoundSettled)
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
    seen: list[ev.RoundEvent] = []

    def broken(event: ev.RoundEvent) -> None:
        raise RuntimeError("display gone")

    table = Table(TableLayout.for_game("rws-nc-three-pictures"), [broken, seen.append])
    table.process(cmd.OpenRound(**DEALER))
    assert [type(e) for e in seen] == [ev.RoundOpened]


def test_a_table_has_no_loop_of_its_own() -> None:
    """One table loop, the one production runs (issue 35): the Table has no thread, queue or
    taps; the service's table thread feeds it through the journal."""
    table = Table(TableLayout.for_game("rws-nc-three-pictures"))
    for loop in ("run", "start", "close", "put", "inputs", "taps", "tap"):
        assert not hasattr(table, loop), loop
