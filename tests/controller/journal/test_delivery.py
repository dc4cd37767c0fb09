"""No card lost across a kill (issue 5): the journal acknowledges a device event only once it
holds the record, and recognises the device's resend of one it already holds.

The shuffler is firmware_sim's over a real pty and stays up while "controllers" (a journal, a
recovered table, a driver with ``deferred_ack=True``) come and go, as a real shuffler keeps its
own power when the Pi beside it is killed. A controller is wired as the service wires it: the
recovered journaled table run by the service's own table thread (:class:`TableThread`), the
driver putting its events on that thread's queue. A controller that dies at a chosen point is one
whose work stops there: its driver is closed without the step that follows."""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.journal import JournalWriter, iter_records, verify
from controller.journal.errors import JournalIOError
from controller.journal.recorder import DEVICE_EVENT_REPEATED, JournaledTable
from controller.journal.recovery import recover
from controller.journal.replay import replay_records
from controller.service.wiring.tablethread import TableThread
from controller.table.layout import TableLayout
from drivers.events import CardSetDispensed, DeviceEvent, ShuffleDone
from drivers.shuffler import Shuffler
from firmware_sim.framed import bind_server
from firmware_sim.serve import PtyServer
from firmware_sim.shuffler import ShufflerSim
from tests.drivers.sim_fixtures import next_event
from tests.waiting import wait_until

GAME = "rws-nc-three-pictures"
WAIT = 5.0


@pytest.fixture(name="sim")
def fixture_sim() -> ShufflerSim:
    return ShufflerSim(seed=3, shuffle_seconds=0.0, dispense_seconds=0.0, take_seconds=None)


@pytest.fixture(name="link")
def fixture_link(sim: ShufflerSim, tmp_path: Path) -> Iterator[str]:
    server = PtyServer(sim, link=tmp_path / "shuffler")
    bind_server(sim, server)
    server.start()
    yield str(tmp_path / "shuffler")
    server.close()


def _deal_one_hand(link: str, record: Callable[[DeviceEvent], None]
                   ) -> tuple[ShuffleDone, CardSetDispensed]:
    """A controller that shuffles and takes one hand, hands each event to ``record`` and dies
    before acknowledging anything (its driver is closed: no ACK was ever sent)."""
    events: queue.Queue[DeviceEvent] = queue.Queue()
    doomed = Shuffler(link, events, backoff=(0.02, 0.1), deferred_ack=True)
    doomed.start()
    try:
        assert doomed.connected.wait(WAIT)
        doomed.shuffle()
        shuffled = next_event(events, ShuffleDone)
        record(shuffled)
        doomed.dispense_hand()
        hand = next_event(events, CardSetDispensed)
        record(hand)
    finally:
        doomed.close()
    return shuffled, hand


def _wired(writer: JournalWriter, link: str) -> tuple[JournaledTable, TableThread, Shuffler]:
    """A controller as the service wires it (service/wiring/pipeline.py), nothing started yet:
    recovered, the service's table thread around it, the driver feeding that thread's queue and
    attached to the journal, which acknowledges each event once recorded."""
    journaled, _report = recover(writer, TableLayout.for_game(GAME, table_id="t1"))
    thread = TableThread(journaled)
    driver = Shuffler(link, thread.inputs, backoff=(0.02, 0.1),  # type: ignore[arg-type]
                      deferred_ack=True)
    journaled.attach_link("shuffler", driver)
    return journaled, thread, driver


def _controller(writer: JournalWriter, link: str
                ) -> tuple[JournaledTable, TableThread, Shuffler]:
    """A controller's life: wired, the table thread started, then the driver."""
    journaled, thread, driver = _wired(writer, link)
    thread.start()
    driver.start()
    assert driver.connected.wait(WAIT)
    return journaled, thread, driver


def _stop(thread: TableThread, driver: Shuffler) -> None:
    driver.close()
    thread.close()
    assert not thread.alive


def _next_controller_until_drained(writer: JournalWriter, link: str, sim: ShufflerSim
                                   ) -> JournaledTable:
    """The next controller's life, until the shuffler holds nothing unacknowledged."""
    table, thread, driver = _controller(writer, link)
    try:
        wait_until(lambda: sim.unacked_events == 0, "sim.unacked_events == 0", timeout=WAIT)
    finally:
        _stop(thread, driver)
    return table


def _device_inputs(directory: Path) -> list[dict[str, Any]]:
    return [r.payload for r in iter_records([directory]) if r.event_type == "input_device"
            and r.payload["type"] in ("ShuffleDone", "CardSetDispensed")]


def test_event_killed_before_its_record_comes_back(
        sim: ShufflerSim, link: str, open_writer: Callable[..., JournalWriter],
        journal_dir: Path) -> None:
    """Killed after the shuffler dispensed a hand but before the journal held it: the device
    still holds the events (never acknowledged), resends them to the next controller, and the
    journal records each exactly once. Without deferred acknowledgement the hand was lost."""
    shuffled, hand = _deal_one_hand(link, lambda event: None)  # nothing reaches a journal
    assert sim.unacked_events == 2

    table = _next_controller_until_drained(open_writer(), link, sim)
    assert table.delivery.repeats == 0  # new to the journal: recorded, not taken for copies
    recorded = _device_inputs(journal_dir)
    assert [(p["type"], p["fields"]["origin"]["event_id"]) for p in recorded] == [
        ("ShuffleDone", shuffled.origin.event_id), ("CardSetDispensed", hand.origin.event_id)]
    assert recorded[1]["fields"]["cards"] == [card.code for card in hand.cards]


def test_event_killed_after_its_record_is_not_acted_on_twice(
        sim: ShufflerSim, link: str, open_writer: Callable[..., JournalWriter],
        journal_dir: Path) -> None:
    """Killed after the record but before the acknowledgement: the device resends the hand,
    recovery knows its origin from the journal, so it is acknowledged and noted as a repeat
    (``device_event_repeated``), never a second input for the table."""
    writer = open_writer()
    first, _report = recover(writer, TableLayout.for_game(GAME, table_id="t1"))
    _shuffled, hand = _deal_one_hand(link, first.process)  # recorded, never acknowledged
    writer.close()
    assert sim.unacked_events == 2

    table = _next_controller_until_drained(open_writer(), link, sim)
    assert table.delivery.repeats == 2
    assert [p["type"] for p in _device_inputs(journal_dir)] == ["ShuffleDone",
                                                                "CardSetDispensed"]
    repeats = [r.payload for r in iter_records([journal_dir])
               if r.event_type == DEVICE_EVENT_REPEATED]
    assert [(p["type"], p["origin"]["event_id"]) for p in repeats] == [
        ("ShuffleDone", 1), ("CardSetDispensed", hand.origin.event_id)]
    assert verify([journal_dir]).ok
    assert replay_records(iter_records([journal_dir])).divergences == []


def test_event_the_journal_refused_is_retried(
        sim: ShufflerSim, link: str, open_writer: Callable[..., JournalWriter],
        journal_dir: Path, mocker: Any) -> None:
    """A record that cannot be written (a disk error: no simulator makes one, so the writer is
    made to fail once) is not acknowledged and not acted on; the device's next resend is
    handed on again and recorded then. Nothing is lost and nothing is doubled."""
    writer = open_writer()
    real_append = writer.append
    failed: list[str] = []

    def append_failing_once(event_type: str, payload: Any = None, **kw: Any) -> Any:
        if event_type == "input_device" and payload["type"] == "ShuffleDone" and not failed:
            failed.append(event_type)
            raise JournalIOError("write: No space left on device")
        return real_append(event_type, payload, **kw)

    mocker.patch.object(writer, "append", side_effect=append_failing_once)
    table, thread, driver = _controller(writer, link)
    try:
        driver.shuffle()
        wait_until(lambda: failed and sim.unacked_events == 0,
                   "a failed write and every event acknowledged", timeout=WAIT)
    finally:
        _stop(thread, driver)
    assert table.failures == 1
    assert [p["type"] for p in _device_inputs(journal_dir)] == ["ShuffleDone"]


def _restarted_with_backlog(link: str, writer: JournalWriter
                            ) -> tuple[JournaledTable, TableThread, Shuffler, list[Any]]:
    """A hand dispensed and never recorded (the kill), then the next controller: wired
    (:func:`_wired`), a subscriber collecting round events; nothing started yet."""
    _deal_one_hand(link, lambda event: None)
    table, thread, driver = _wired(writer, link)
    seen: list[Any] = []
    table.subscribe(seen.append)
    return table, thread, driver, seen


def _online(seen: list[Any]) -> bool:
    return any(type(e).__name__ == "DeviceNoted" and e.detail == "DeviceOnline" for e in seen)


def test_backlog_before_the_round_is_ruled_outside_it(
        sim: ShufflerSim, link: str, open_writer: Callable[..., JournalWriter]) -> None:
    """The device counts as offline ("No more bets" waits) until it has resent what it held
    (the driver reports it online only then); the hand dispensed before the restart is then a card with no round
    in progress, not used (RWS-NC3P 5.17), and the next round closes and deals normally."""
    from controller.table import commands as cmd

    table, thread, driver, seen = _restarted_with_backlog(link, open_writer())
    dealer = dict(actor="dana", role=cmd.Role.DEALER)
    assert "resend what it holds" in table.table.machine.offline["shuffler"]  # not started yet
    thread.start()
    driver.start()
    try:
        wait_until(lambda: sim.unacked_events == 0 and _online(seen),
                   "online with every event acknowledged", timeout=WAIT)
        thread.put(cmd.OpenRound(**dealer))
        thread.put(cmd.PlaceWager(**dealer, wager_id="w1", position="1", bet="main",
                                  amount=1000, player="p1"))
        thread.put(cmd.CloseBets(**dealer))
        wait_until(lambda: any(type(e).__name__ == "BetsClosed" for e in seen),
                   "a BetsClosed", timeout=WAIT)
    finally:
        _stop(thread, driver)
    kinds = [type(e).__name__ for e in seen]
    ignored = [e for e in seen if type(e).__name__ == "CardIgnored"]
    assert len(ignored) == 3 and {e.clause for e in ignored} == {"RWS-NC3P 5.17"}
    assert kinds.index("CardIgnored") < kinds.index("RoundOpened")
    assert "CardAssigned" not in kinds and "RoundVoided" not in kinds


def test_backlog_in_a_round_opened_meanwhile_is_held_for_a_supervisor(
        sim: ShufflerSim, link: str, open_writer: Callable[..., JournalWriter]) -> None:
    """A round opened before the device was back: its bets cannot close while the backlog is
    due, and the old hand arriving while bets are offered is never dealt to a box; it is held
    for a Pit Supervisor as a card drawn during betting (RWS-NC3P 5.17)."""
    from controller.table import commands as cmd

    table, thread, driver, seen = _restarted_with_backlog(link, open_writer())
    dealer = dict(actor="dana", role=cmd.Role.DEALER)
    table.process(cmd.OpenRound(**dealer))  # before the thread starts: on this thread
    table.process(cmd.PlaceWager(**dealer, wager_id="w1", position="1", bet="main",
                                 amount=1000, player="p1"))
    table.process(cmd.CloseBets(**dealer))
    assert "resend what it holds" in seen[-1].reason
    thread.start()
    driver.start()
    try:
        wait_until(lambda: sim.unacked_events == 0 and _online(seen),
                   "online with every event acknowledged", timeout=WAIT)
    finally:
        _stop(thread, driver)
    kinds = [type(e).__name__ for e in seen]
    held = [e for e in seen if type(e).__name__ == "SupervisorRequired"]
    assert held and held[0].clause == "RWS-NC3P 5.17"
    assert "CardAssigned" not in kinds and "BetsClosed" not in kinds
