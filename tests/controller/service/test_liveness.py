"""No dead ends, and no false ways out (issue 22): every round state and every device-operator
state names what it waits for and the literal ``tablectl`` command that gets it out; a peer is
offered only the commands its role may send; a hold offers exactly what the table accepts;
``clear-fault`` and ``continue`` are refused when the device makes them pointless."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.cli import build_parser
from controller.service.wiring.handler import TableHandler
from controller.service.wiring.liveness import COMMAND, offered_to, round_waits, waits
from controller.service.operator import DeviceMachine, HoldReason, Op
from controller.service.protocol import Refusal, Request, Role, decode_request
from controller.service.wiring.tablethread import TableThread
from controller.table import commands as cmd
from controller.table.states import RoundState
from tests.controller.service.conftest import DEALER, SUPERVISOR
from tests.controller.service.document_sim import DocumentShuffler
from tests.controller.service.operator_rig import Rig

SURVEILLANCE_PEER = type(DEALER)(12, 1003, 1003, Role.SURVEILLANCE)
SNAPSHOTS: dict[RoundState, dict[str, Any]] = {
    RoundState.HOLD: {"held_for": "exposed_card (RWS-NC3P 5.10, 5.7)",
                      "hold_options": ["in_device", "by_dealer", "void"]},
    RoundState.OPTIONS: {"options_pending": ["2", "5"]},
    RoundState.DECISIONS: {"decisions_due": ["1"]},
}


def sent_by(way_out: str) -> tuple[str, dict[str, Any]]:
    """The verb and arguments a way out sends: parsed by the real ``tablectl`` parser and
    accepted by the service's decoder, so it is a command that works as printed."""
    args = build_parser().parse_args([*shlex.split(way_out)[1:], "--socket", "/x.sock"])
    verb, request_args = args.verb(args)
    decode_request(json.dumps({"id": 1, "verb": verb, "args": request_args}).encode())
    return verb, request_args


def commands(shown: list[dict[str, str]]) -> list[str]:
    return [w["way_out"] for w in shown if w["way_out"].startswith(COMMAND)]


@pytest.mark.parametrize("state", list(RoundState))
def test_every_round_state_has_a_way_out_that_is_a_working_command(state: RoundState) -> None:
    """A wait and a role for each of the table's states (docs/service.md's table); each
    command offered parses as printed and names a verb the service decodes."""
    shown = waits({"state": state.value, **SNAPSHOTS.get(state, {})}, None)
    assert shown and all(w["waits_for"] and w["way_out"] for w in shown)
    for wait in shown:
        assert wait["role"] in ("dealer", "supervisor", "")
        if wait["way_out"].startswith(COMMAND):
            sent_by(wait["way_out"])


@pytest.mark.parametrize("state", list(Op))
def test_every_operator_state_names_its_wait(state: Op) -> None:
    """Each device-side state says what it waits for and how it ends; those that need a
    person name the literal command and its role."""
    machine = DeviceMachine()
    machine.state = state  # the model attribute, as a status reader sees it
    if state is Op.HELD:
        machine.hold_reason = HoldReason.REPEATED_FAILURE
    waits_for, way_out, role = machine.way_out()
    assert waits_for and way_out
    if state in (Op.FAULT, Op.HELD, Op.OFFLINE):
        assert role == "supervisor" and "tablectl supervisor" in way_out
    for one in way_out.split(" | "):
        if one.startswith(COMMAND):
            sent_by(one)


def test_a_fact_question_offers_exactly_its_answers_and_the_void() -> None:
    """RWS-NC3P 5.10 vs 5.7: where was the exposed card seen? The hold offers the two answers
    as ``tablectl supervisor answer ...`` and a void, never ``continue`` (which it refuses)."""
    shown = waits({"state": "hold", "held_for": "exposed_card (RWS-NC3P 5.10, 5.7)",
                   "hold_options": ["in_device", "by_dealer", "void"]}, None)
    assert commands(shown) == ["tablectl supervisor answer in_device",
                               "tablectl supervisor answer by_dealer",
                               "tablectl supervisor void REASON"]
    assert sent_by(commands(shown)[0]) == ("supervisor.answer", {"answer": "in_device"})


def test_a_held_round_shows_its_options_the_clear_fault_and_one_void() -> None:
    """A held round with a faulted shuffler: the hold's options, the clear-fault, a void."""
    shown = waits({"state": "hold", "held_for": "jammed (RWS-NC3P 5.17)",
                   "hold_options": ["void", "continue", "reconstruct"]},
                  {"state": "fault", "waits_for": "a supervisor to clear jam on the shuffler",
                   "way_out": "tablectl supervisor clear-fault", "role": "supervisor"})
    assert commands(shown) == ["tablectl supervisor continue",
                               "tablectl supervisor reconstruct",
                               "tablectl supervisor clear-fault",
                               "tablectl supervisor void REASON"]
    assert "jammed (RWS-NC3P 5.17)" in shown[0]["waits_for"]


def test_a_deck_lost_mid_deal_offers_no_continue() -> None:
    """After a reboot mid-deal the shuffler has no deck: continuing could only wait for cards
    that never come, so the hold offers the void alone."""
    shown = waits({"state": "hold", "held_for": "interruption (RWS-3CP (no clause))",
                   "hold_options": ["void", "continue"]},
                  {"state": "idle", "deck_lost": True, "role": "supervisor",
                   "waits_for": "the shuffler lost its deck mid-deal",
                   "way_out": "tablectl supervisor void REASON"})
    assert commands(shown) == ["tablectl supervisor void REASON"]
    assert "lost its deck" in shown[0]["waits_for"]


def test_the_ways_out_name_the_boxes_concerned() -> None:
    """Options and decisions are offered box by box, as commands to type."""
    options = commands(waits({"state": "options", "options_pending": ["2"]}, None))
    assert options[:3] == ["tablectl option 2 continue", "tablectl option 2 withdraw",
                           "tablectl options close"]
    decisions = commands(waits({"state": "decisions", "decisions_due": ["4"]}, None))
    assert decisions[:2] == ["tablectl decide 4 play", "tablectl decide 4 fold"]


def test_no_round_no_void_and_a_journal_hold_offers_only_the_acknowledgement() -> None:
    """Outside a round nothing can be voided; while the journal damage waits for a supervisor
    every other command is refused, so only ``tablectl journal acknowledge`` is offered."""
    offline = {"state": "offline", "role": "supervisor", "waits_for": "the shuffler online",
               "way_out": "reconnect the device | tablectl supervisor void REASON"}
    assert commands(waits({"state": "idle"}, offline)) == ["tablectl round open"]
    held = waits({"state": "dealing", "journal_hold": "chain broken at seq 9"}, offline)
    assert commands(held) == ["tablectl journal acknowledge REASON"]
    assert sent_by(commands(held)[0]) == ("journal.acknowledge", {"reason": "REASON"})


def test_no_round_open_is_offered_while_the_software_is_refused() -> None:
    """``software.verify = "required"`` and not verified: ``round.open`` is refused, so it is
    not offered; the wait says what would get the table out."""
    shown = waits({"state": "idle", "open_refused": "software not verified (tampered)"}, None)
    assert commands(shown) == [] and "verified software" in shown[0]["waits_for"]


@pytest.mark.parametrize(("role", "expected"), [
    (Role.ROOT, ["tablectl supervisor continue", "tablectl supervisor void REASON"]),
    (Role.SUPERVISOR, ["tablectl supervisor continue", "tablectl supervisor void REASON"]),
    (Role.DEALER, []),
    (Role.SURVEILLANCE, []),
])
def test_a_peer_is_offered_only_the_commands_its_role_may_send(role: Role,
                                                               expected: list[str]) -> None:
    """A dealer's status says a supervisor is needed but offers no supervisor's command;
    surveillance is offered none at all."""
    shown = offered_to(waits({"state": "hold", "held_for": "jammed",
                              "hold_options": ["void", "continue"]}, None), role)
    assert commands(shown) == expected
    assert len(shown) == 2 and all(w["role"] == "supervisor" for w in shown)
    dealt = commands(offered_to(waits({"state": "dealt"}, None), role))
    assert ("tablectl round reveal" in dealt) is (role is not Role.SURVEILLANCE)
    assert ("tablectl supervisor void REASON" in dealt) is bool(expected)


def test_clear_fault_is_a_supervisor_verb(table: TableThread) -> None:
    """The verb becomes ``ClearDeviceFault``; from a dealer the table refuses it with the
    reason; from a supervisor it is journaled as an order naming the actor."""
    table.start()
    handler = TableHandler(table, lambda: 0)
    with pytest.raises(Refusal, match="belongs to a Pit Supervisor"):
        handler(Request(1, "supervisor.clear-fault"), DEALER)
    answer = handler(Request(2, "supervisor.clear-fault", {"reason": "jam cleared"},
                             actor="supervisor:9"), SUPERVISOR)
    (event,) = answer["events"]
    assert event["type"] == "DeviceFaultClearOrdered"
    assert event["device"] == "shuffler" and event["actor"].startswith("supervisor:9")
    assert event["reason"] == "jam cleared"
    command = handler.command_for(Request(3, "supervisor.clear-fault", {"device": "shoe"}),
                                  SUPERVISOR)
    assert isinstance(command, cmd.ClearDeviceFault) and command.device == "shoe"


def test_tablectl_round_status_prints_the_waits() -> None:
    """``tablectl round status`` shows each wait with its command and role."""
    from controller.cli.client import describe

    lines = describe("round.status", {
        "table": "T1", "game": "g", "round": 4, "state": "hold", "device": {},
        "waits": waits({"state": "hold", "held_for": "jammed (RWS-NC3P 5.17)",
                        "hold_options": ["continue", "void"]},
                       {"state": "fault", "waits_for": "a supervisor to clear jam",
                        "way_out": "tablectl supervisor clear-fault", "role": "supervisor"})})
    assert "waits for a supervisor to clear jam: tablectl supervisor clear-fault (supervisor)" \
        in lines
    assert "waits for a supervisor's decision on jammed (RWS-NC3P 5.17): tablectl supervisor " \
           "continue (supervisor)" in lines


def test_round_waits_cover_every_state() -> None:
    """``round_waits`` answers for every state the snapshot can show."""
    for state in RoundState:
        assert round_waits({"state": state.value, **SNAPSHOTS.get(state, {})})
    assert round_waits({"state": "awaiting_journal"})[0].role == ""


# through the service's wiring: a shuffler on a real pty ------------------------------------
@pytest.fixture(name="rig")
def fixture_rig(tmp_path: Path) -> Iterator[Rig]:
    rig = Rig(tmp_path, "rws-three-card-poker", sim=DocumentShuffler(), auto_take=False).start()
    try:
        rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
        rig.until(lambda: rig.operator()["state"] == "idle", what="the shuffler's STATUS")
        yield rig
    finally:
        rig.close()


def _handler(rig: Rig) -> TableHandler:
    assert rig.wiring is not None and rig.wiring.handler is not None
    return rig.wiring.handler


def test_clear_fault_is_refused_while_the_door_stays_open(rig: Rig) -> None:
    """Issue 22: ``clear-fault`` was "accepted" three times while the shuffler's door stayed
    open. The service now answers with what the device says after CLEAR_FAULT: refused,
    naming the fault, until the door is shut; then accepted, and the fault is gone. With no
    fault at all, it is refused before anything is sent."""
    handler, sim = _handler(rig), rig.sim
    assert isinstance(sim, DocumentShuffler)
    with pytest.raises(Refusal, match="reports no fault"):
        handler(Request(1, "supervisor.clear-fault"), SUPERVISOR)
    sim.open_door()
    rig.until(lambda: rig.operator()["state"] == "fault", what="the door's fault")
    for attempt in range(3):
        with pytest.raises(Refusal, match="still reports door_open"):
            handler(Request(2 + attempt, "supervisor.clear-fault"), SUPERVISOR)
    assert rig.operator()["faults"] == ["door_open"]
    sim.close_door()
    answer = handler(Request(9, "supervisor.clear-fault", {"reason": "door shut"}), SUPERVISOR)
    assert answer["accepted"] is True
    rig.until(lambda: rig.operator()["state"] != "fault", what="the fault cleared")
    assert rig.operator()["faults"] == []


def test_continue_after_a_reboot_mid_deal_is_refused_and_not_offered(rig: Rig) -> None:
    """Issue 22: after a reboot mid-deal, ``supervisor continue`` was accepted and led nowhere
    (the shuffler has no deck). RWS-3CP holds the interruption for a supervisor: the status now
    offers only the void, a continue is refused with the reason, and the void ends the round
    with its clause."""
    handler, sim = _handler(rig), rig.sim
    rig.open_and_close(1)
    rig.wait("CardAssigned")
    sim.reboot()
    rig.until(lambda: rig.status()["state"] == "hold" and rig.operator()["deck_lost"],
              what="the hold with the deck lost")
    status = handler(Request(1, "round.status"), SUPERVISOR)
    offered = commands(status["waits"])
    assert offered == ["tablectl supervisor void REASON"], status["waits"]
    with pytest.raises(Refusal, match="lost its deck mid-deal"):
        handler(Request(2, "supervisor.continue", {"reason": "go on"}), SUPERVISOR)
    verb, args = sent_by(offered[0])
    answer = handler(Request(3, verb, args), SUPERVISOR)
    assert answer["state"] == "voided"
    voided = [e for e in answer["events"] if e["type"] == "RoundVoided"]
    assert voided and voided[0]["clause"]


def test_a_dealers_status_offers_no_supervisor_command(rig: Rig) -> None:
    """The same held round as a dealer sees it over the handler: the waits say a supervisor
    is needed; none of them is a command a dealer may send."""
    handler, sim = _handler(rig), rig.sim
    rig.open_and_close(1)
    rig.wait("CardAssigned")
    sim.reboot()
    rig.until(lambda: rig.status()["state"] == "hold" and rig.operator()["deck_lost"],
              what="the hold with the deck lost")
    shown = handler(Request(1, "round.status"), DEALER)["waits"]
    assert shown and commands(shown) == [], shown
    assert all(w["role"] == "supervisor" and w["way_out"] == "call a supervisor"
               for w in shown), shown
    assert handler(Request(2, "round.status"), SURVEILLANCE_PEER)["waits"] == shown
