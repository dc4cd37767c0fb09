"""The device operator's decisions, one input at a time (the machine is pure: the device's
answers are typed values; the wire is exercised in test_operator_issues.py)."""

from __future__ import annotations

from controller.games.cards import parse_card
from controller.journal.recorder import Phase
from controller.service.operator import DeviceAction, DeviceMachine, HoldReason, Op, Stage
from controller.service.operator.machine import TRANSITIONS
from controller.table import events as ev
from controller.table.awaited import AwaitedOptions
from drivers import events as dev
from drivers.errors import CommandRejected, DeviceDisconnected, DeviceFault
from drivers.framed.device import DeviceStatus
from drivers.framed.messages import DeviceState, NakReason

BAD_STATE = CommandRejected("rejected: BAD_STATE", NakReason.BAD_STATE)
HAND = tuple(parse_card(c) for c in ("AS", "KD", "2C"))


def status(state: DeviceState, *faults: dev.Fault) -> DeviceStatus:
    return DeviceStatus(state, frozenset(faults), 1, 0, 52)


def online(state: DeviceState = DeviceState.IDLE) -> DeviceMachine:
    machine = DeviceMachine("shuffler")
    machine.device(dev.DeviceOnline("shuffler", 0.0), 0.0)
    assert machine.next_action() is DeviceAction.STATUS
    machine.succeeded(DeviceAction.STATUS, 0.0, status(state))
    return machine


def closed(machine: DeviceMachine) -> DeviceMachine:
    machine.round_events([ev.RoundOpened(round=1, game="g", table="t"),
                          ev.BetsClosed(round=1, wagers=(), receiving=("1",))], 1.0)
    return machine


def test_a_round_is_shuffled_dealt_and_ended() -> None:
    """SHUFFLE after No more bets, a hand per lift, END_ROUND once the round is settled."""
    machine = closed(online())
    assert machine.next_action() is DeviceAction.SHUFFLE
    machine.succeeded(DeviceAction.SHUFFLE, 1.0)
    assert machine.state is Op.SHUFFLING and machine.next_action() is None
    machine.device(dev.ShuffleDone("shuffler", 1.1, counted=52), 1.1)
    machine.round_events([ev.ShuffleConfirmed(round=1, source="shuffler")], 1.1)
    assert machine.next_action() is DeviceAction.DISPENSE_HAND
    machine.succeeded(DeviceAction.DISPENSE_HAND, 1.2)
    machine.device(dev.CardSetDispensed("shuffler", 1.3, cards=HAND, hand_number=1), 1.3)
    assert machine.state is Op.PRESENTED and machine.next_action() is None
    machine.round_events([ev.DealComplete(round=1)], 1.3)
    machine.device(dev.HandTaken("shuffler", 1.4, hand_number=1), 1.4)
    assert machine.state is Op.READY and machine.next_action() is None  # the deal is done
    machine.round_events([ev.RoundVoided(round=1, reason="r", clause="c",
                                         settlement=None)], 2.0)  # type: ignore[arg-type]
    assert machine.next_action() is DeviceAction.END_ROUND
    machine.succeeded(DeviceAction.END_ROUND, 2.0)
    assert machine.state is Op.IDLE and machine.next_action() is None


def test_a_refused_shuffle_ends_the_round_and_tries_once_more() -> None:
    """Decision 1: SHUFFLE refused with BAD_STATE -> END_ROUND, SHUFFLE again, once."""
    machine = closed(online())
    assert machine.failed(DeviceAction.SHUFFLE, BAD_STATE, 1.0) is None
    assert machine.next_action() is DeviceAction.END_ROUND
    machine.succeeded(DeviceAction.END_ROUND, 1.0)
    assert machine.next_action() is DeviceAction.SHUFFLE
    machine.failed(DeviceAction.SHUFFLE, BAD_STATE, 1.1)
    assert machine.state is Op.BACKING_OFF and machine.next_action() is None
    assert machine.deadline == 1.1 + 0.5


def test_a_refused_dispense_asks_the_device_where_it_is() -> None:
    """DISPENSE_HAND refused: STATUS after the backoff; a presented hand is followed."""
    machine = closed(online(DeviceState.READY))
    machine.round_events([ev.ShuffleConfirmed(round=1, source="shuffler")], 1.0)
    assert machine.next_action() is DeviceAction.DISPENSE_HAND
    machine.failed(DeviceAction.DISPENSE_HAND, BAD_STATE, 1.0)
    assert machine.next_action() is None
    machine.expired(1.5, online=True)
    assert machine.next_action() is DeviceAction.STATUS
    machine.succeeded(DeviceAction.STATUS, 1.5, status(DeviceState.HAND_WAITING))
    assert machine.state is Op.PRESENTED


def test_a_reboot_mid_deal_holds_for_a_void() -> None:
    """Decision 6: the deck is gone mid-deal; the operator holds (deck_lost), the way out is a
    supervisor's void, and the next round releases it."""
    machine = closed(online(DeviceState.READY))
    machine.round_events([ev.ShuffleConfirmed(round=1, source="shuffler"),
                          ev.CardAssigned(round=1, position="1", card=HAND[0], index=0)], 1.0)
    assert machine.view.stage is Stage.DEALING
    machine.device(dev.DeviceRebooted("shuffler", 2.0, old_boot_id=1, new_boot_id=2), 2.0)
    machine.succeeded(DeviceAction.STATUS, 2.0, status(DeviceState.IDLE))
    assert machine.next_action() is None
    assert machine.state is Op.HELD and machine.hold_reason is HoldReason.DECK_LOST
    assert machine.way_out()[1] == "tablectl supervisor void REASON"
    machine.round_events([ev.RoundOpened(round=2, game="g", table="t")], 3.0)
    assert machine.state is Op.BACKING_OFF


def test_a_fault_waits_for_a_supervisor_then_follows_the_device() -> None:
    """A fault: no command until ``clear-fault``; CLEAR_FAULT, then STATUS (FAULT_CLEARED may
    come before or after the ACK)."""
    machine = closed(online())
    machine.device(dev.FaultRaised("shuffler", 1.0, fault=dev.Fault.DOOR_OPEN), 1.0)
    assert machine.state is Op.FAULT and machine.next_action() is None
    machine.round_events([ev.DeviceFaultClearOrdered(round=1, device="shuffler",
                                                     actor="supervisor:1")], 2.0)
    assert machine.next_action() is DeviceAction.CLEAR_FAULT
    machine.device(dev.FaultCleared("shuffler", 2.0, fault=dev.Fault.DOOR_OPEN), 2.0)
    machine.succeeded(DeviceAction.CLEAR_FAULT, 2.0)
    assert machine.next_action() is DeviceAction.STATUS
    machine.succeeded(DeviceAction.STATUS, 2.1, status(DeviceState.IDLE))
    assert machine.next_action() is DeviceAction.SHUFFLE


def test_a_device_fault_answer_is_checked_not_assumed() -> None:
    """DeviceFault (a fault is active, or the device rebooted under the command): STATUS."""
    machine = closed(online())
    machine.failed(DeviceAction.SHUFFLE, DeviceFault("shuffler rebooted during the command"), 1.0)
    assert machine.next_action() is DeviceAction.STATUS
    machine.succeeded(DeviceAction.STATUS, 1.0, status(DeviceState.FAULT, dev.Fault.JAM))
    assert machine.state is Op.FAULT and machine.faults == {dev.Fault.JAM}


def test_a_blocked_deck_is_not_shuffled() -> None:
    """Issue 10.5: a refused shuffle (blocked deck) is not asked for again until released."""
    machine = closed(online())
    machine.round_events([ev.DeviceNoted(round=1, device="shuffler", detail="x",
                                         cause=ev.NoteCause.SHUFFLE_REFUSED)], 1.0)
    assert machine.next_action() is None
    machine.round_events([ev.DeckReleased(round=1, by="dealer")], 2.0)
    assert machine.next_action() is DeviceAction.SHUFFLE


def test_a_round_may_not_shuffle_without_end() -> None:
    """Runaway guard: a fourth shuffle in one round holds for a void."""
    machine = closed(online())
    for at in (1.0, 2.0, 3.0):
        assert machine.next_action() is DeviceAction.SHUFFLE
        machine.succeeded(DeviceAction.SHUFFLE, at)
        machine.succeeded(DeviceAction.STATUS, at, status(DeviceState.IDLE))
    assert machine.next_action() is None
    assert machine.hold_reason is HoldReason.RUNAWAY


def test_a_hand_presented_when_the_round_ends_is_collected() -> None:
    """Decision 2: END_ROUND in HAND_WAITING collects the presented hand; no HAND_TAKEN."""
    machine = closed(online(DeviceState.HAND_WAITING))
    assert machine.state is Op.PRESENTED and machine.next_action() is None
    machine.round_events([ev.RoundVoided(round=1, reason="r", clause="c",
                                         settlement=None)], 2.0)  # type: ignore[arg-type]
    assert machine.next_action() is DeviceAction.END_ROUND
    machine.succeeded(DeviceAction.END_ROUND, 2.0)
    assert machine.state is Op.IDLE


def test_cards_left_follow_the_device_count_and_each_set() -> None:
    """The dealer's screen shows the shuffler's cards left (issue 13): STATUS and SHUFFLE_DONE
    give the device's own count, each dispensed set takes its cards off, END_ROUND collects the
    rest, and a link that drops or a device that reboots makes the count unknown, not stale."""
    machine = closed(online())
    assert machine.cards_left == 52  # STATUS said so
    machine.succeeded(DeviceAction.SHUFFLE, 1.0)
    machine.device(dev.ShuffleDone("shuffler", 1.1, counted=51, expected=52), 1.1)
    assert machine.cards_left == 51  # a short deck shows as short
    machine.round_events([ev.ShuffleConfirmed(round=1, source="shuffler")], 1.1)
    machine.succeeded(DeviceAction.DISPENSE_HAND, 1.2)
    machine.device(dev.CardSetDispensed("shuffler", 1.3, cards=HAND, hand_number=1), 1.3)
    assert machine.cards_left == 48
    machine.device(dev.DeviceRebooted("shuffler", 1.4), 1.4)
    assert machine.cards_left is None
    machine.succeeded(DeviceAction.STATUS, 1.5, DeviceStatus(DeviceState.READY, frozenset(), 2, 0, 40))
    assert machine.cards_left == 40
    machine.succeeded(DeviceAction.END_ROUND, 2.0)
    assert machine.cards_left == 0
    machine.device(dev.DeviceOffline("shuffler", 2.1), 2.1)
    assert machine.cards_left is None


def test_the_machine_decides_on_device_level_words() -> None:
    """Issue 35: the operator speaks device events, not wire enums: a STATUS answer as a
    :class:`drivers.events.DeviceReport` and a refusal carrying a
    :class:`drivers.events.RefusalCause` decide exactly as the framed link's own values do."""
    machine = closed(online())
    assert machine.failed(DeviceAction.SHUFFLE, CommandRejected("refused", dev.RefusalCause.BAD_STATE),
                          1.0) is None
    assert machine.next_action() is DeviceAction.END_ROUND  # docs/protocols.md 5.2: end, retry once
    machine.succeeded(DeviceAction.END_ROUND, 1.0)
    machine.succeeded(DeviceAction.SHUFFLE, 1.1)
    machine.succeeded(DeviceAction.STATUS, 1.2, dev.DeviceReport(dev.DeviceMode.HAND_WAITING,
                                                           frozenset({dev.Fault.JAM}), 30))
    assert (machine.state, machine.faults, machine.cards_left) == \
        (Op.PRESENTED, {dev.Fault.JAM}, 30)
    machine.succeeded(DeviceAction.STATUS, 1.3, dev.DeviceReport(dev.DeviceMode.DEALING))
    assert (machine.state, machine.faults, machine.cards_left) == \
        (Op.READY, {dev.Fault.JAM}, 30)  # what the report does not say is kept
    machine.succeeded(DeviceAction.STATUS, 1.4, dev.DeviceReport())
    assert machine.state is Op.FAULT  # a state it cannot follow: a supervisor looks


def test_the_transition_list_is_the_machine() -> None:
    """The declarative list is what the model runs: each trigger it names is declared on the
    model and bound by ``transitions``, and a model's ``sync`` follows every device-level
    word in the list's order (the last, unconditional move catches the rest as FAULT)."""
    machine = DeviceMachine()
    declared = set(DeviceMachine.__annotations__) - {"state", "hold_reason"}
    assert {move.trigger for move in TRANSITIONS} == declared
    assert all(callable(getattr(machine, trigger)) for trigger in declared)
    expected = {dev.DeviceMode.IDLE: Op.IDLE, dev.DeviceMode.SHUFFLING: Op.SHUFFLING,
                dev.DeviceMode.READY: Op.READY, dev.DeviceMode.DEALING: Op.READY,
                dev.DeviceMode.DISPENSING: Op.FORMING,
                dev.DeviceMode.HAND_WAITING: Op.PRESENTED, dev.DeviceMode.FAULT: Op.FAULT}
    assert set(expected) == set(dev.DeviceMode)
    for mode, state in expected.items():
        machine.succeeded(DeviceAction.STATUS, 0.0, dev.DeviceReport(mode))
        assert machine.state is state, mode


def _dealing_with_options(machine: DeviceMachine) -> DeviceMachine:
    """A deal interrupted after its first hand, the players' options offered to three
    players (MBS-R3P 5.13.1: each answers for himself)."""
    machine.round_events([ev.ShuffleConfirmed(round=1, source="shuffler")], 1.0)
    machine.succeeded(DeviceAction.DISPENSE_HAND, 1.0)
    machine.device(dev.CardSetDispensed("shuffler", 1.1, cards=HAND, hand_number=1), 1.1)
    machine.round_events([ev.CardAssigned(round=1, position="1", card=HAND[0], index=0)], 1.1)
    machine.device(dev.HandTaken("shuffler", 1.2, hand_number=1), 1.2)
    players = tuple(ev.PlayerAtBox(str(n), f"p{n}") for n in (1, 2, 3))
    machine.round_events([ev.PlayerOptionsOffered(
        round=1, clause="MBS-R3P 5.13.1", positions=("1", "2", "3"), players=players)], 1.3)
    return machine


def _taken(n: int) -> ev.PlayerOptionTaken:
    return ev.PlayerOptionTaken(round=1, position=str(n), option="continue", wager_ids=(),
                                clause="MBS-R3P 5.13.1", player=f"p{n}",
                                players=(ev.PlayerAtBox(str(n), f"p{n}"),))


def test_no_hand_is_dealt_until_the_last_player_has_answered() -> None:
    """One player's answer does not end the options: while the others choose, the table only
    buffers what the device deals, so a hand asked for then (and the next, and the next) would
    drain the deck into that buffer. The deal goes on with the last answer awaited."""
    machine = _dealing_with_options(closed(online(DeviceState.READY)))
    assert machine.next_action() is None
    machine.round_events([_taken(1)], 1.4)
    assert machine.next_action() is None
    machine.round_events([_taken(3)], 1.5)
    assert machine.next_action() is None
    machine.round_events([_taken(2)], 1.6)
    assert machine.next_action() is DeviceAction.DISPENSE_HAND


def test_options_closed_by_the_dealer_let_the_deal_go_on() -> None:
    """``options close`` (PlayerOptionsClosed): those who did not answer continue."""
    machine = _dealing_with_options(closed(online(DeviceState.READY)))
    machine.round_events([_taken(2)], 1.4)
    assert machine.next_action() is None
    machine.round_events([ev.PlayerOptionsClosed(
        round=1, clause="MBS-R3P 5.13.1", by="dealer",
        continuing=(ev.PlayerAtBox("1", "p1"), ev.PlayerAtBox("3", "p3")))], 1.5)
    assert machine.next_action() is DeviceAction.DISPENSE_HAND


def test_after_a_restart_the_options_left_open_are_still_awaited() -> None:
    """Recovery hands the operator the options its tracker left open: an answer from one
    of two players still to answer does not restart the deal."""
    machine = DeviceMachine("shuffler")
    machine.resume(1, Phase.OPTIONS, Phase.DEALING, awaited=AwaitedOptions(
        ["2", "3"], [ev.PlayerAtBox("2", "p2"), ev.PlayerAtBox("3", "p3")]))
    machine.device(dev.DeviceOnline("shuffler", 0.0), 0.0)
    machine.succeeded(DeviceAction.STATUS, 0.0, status(DeviceState.READY))
    machine.round_events([_taken(2)], 1.0)
    assert machine.next_action() is None
    machine.round_events([_taken(3)], 1.1)
    assert machine.next_action() is DeviceAction.DISPENSE_HAND


def test_a_link_lost_under_a_command_waits_for_the_table_to_have_the_device_back() -> None:
    """The cable comes out under DISPENSE_HAND: the operator is offline until the table's
    DeviceOnline, whatever the driver says meanwhile. Before it, the table rules the
    interruption (a hold), so the device back online deals nothing until the ruling: a STATUS
    on the driver's word alone dealt on into the held round, or not, as the threads ran."""
    machine = closed(online(DeviceState.READY))
    machine.round_events([ev.ShuffleConfirmed(round=1, source="shuffler")], 1.0)
    assert machine.next_action() is DeviceAction.DISPENSE_HAND
    lost = DeviceDisconnected("shuffler: the link went down under the command")
    assert machine.failed(DeviceAction.DISPENSE_HAND, lost, 1.0) is None
    assert machine.state is Op.OFFLINE and machine.next_action() is None
    assert machine.deadline == 1.0 + 30.0  # only the long look at the link, not a backoff
    machine.device(dev.DeviceOffline("shuffler", 1.1, reason="unplugged"), 1.1)
    machine.round_events([ev.SupervisorRequired(round=1, kind="interruption",
                                                clause="c", options=("void", "continue"))],
                         1.1)
    machine.device(dev.DeviceOnline("shuffler", 1.5), 1.5)
    assert machine.next_action() is DeviceAction.STATUS
    machine.succeeded(DeviceAction.STATUS, 1.5, status(DeviceState.READY))
    assert machine.state is Op.READY and machine.next_action() is None  # held: no hand
    machine.round_events([ev.SupervisorDecided(round=1, action="continue", actor="s",
                                               reason="r", clause="c")], 2.0)
    assert machine.next_action() is DeviceAction.DISPENSE_HAND
