"""No dead ends: every round state and every device-operator state names what it waits for and
the verb (and role) that gets it out; ``supervisor clear-fault`` is a supervisor's verb."""

from __future__ import annotations

import pytest

from controller.service.handler import TableHandler
from controller.service.liveness import ROUND_WAYS, round_wait, waits
from controller.service.operator import DeviceMachine, HoldReason, Op
from controller.service.protocol import Refusal, Request
from controller.service.tablethread import TableThread
from controller.table import commands as cmd
from controller.table.states import RoundState
from tests.controller.service.conftest import DEALER, SUPERVISOR


@pytest.mark.parametrize("state", list(RoundState))
def test_every_round_state_has_a_way_out(state: RoundState) -> None:
    """A verb and a role for each of the table's states (docs/service.md's table)."""
    wait = round_wait({"state": state.value})
    assert wait.waits_for and wait.way_out and wait.role in ("dealer", "supervisor")
    assert set(ROUND_WAYS) == set(RoundState)


@pytest.mark.parametrize("state", list(Op))
def test_every_operator_state_names_its_wait(state: Op) -> None:
    """Each device-side state says what it waits for and how it ends; those that need a
    person name the verb and role."""
    machine = DeviceMachine()
    machine.state = state  # the model attribute, as a status reader sees it
    if state is Op.HELD:
        machine.hold_reason = HoldReason.REPEATED_FAILURE
    waits_for, way_out, role = machine.way_out()
    assert waits_for and way_out
    if state in (Op.FAULT, Op.HELD, Op.OFFLINE):
        assert role == "supervisor" and "tablectl supervisor" in way_out


def test_a_held_round_shows_both_waits_and_the_void() -> None:
    """A held round with a faulted shuffler: the hold, the clear-fault, and a void."""
    shown = waits({"state": "hold", "held_for": "jammed (RWS-NC3P 5.17)"},
                  {"state": "fault", "waits_for": "a supervisor to clear jam on the shuffler",
                   "way_out": "tablectl supervisor clear-fault", "role": "supervisor"})
    assert [w["way_out"].split(" ")[:3] for w in shown] == [
        ["tablectl", "supervisor", "continue"], ["tablectl", "supervisor", "clear-fault"],
        ["tablectl", "supervisor", "void"]]
    assert "jammed (RWS-NC3P 5.17)" in shown[0]["waits_for"]


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
    """``tablectl round status`` shows each wait with its verb and role."""
    from controller.cli.client import describe

    lines = describe("round.status", {
        "table": "T1", "game": "g", "round": 4, "state": "hold", "device": {},
        "waits": waits({"state": "hold", "held_for": "jammed (RWS-NC3P 5.17)"},
                       {"state": "fault", "waits_for": "a supervisor to clear jam",
                        "way_out": "tablectl supervisor clear-fault", "role": "supervisor"})})
    assert "waits for a supervisor to clear jam: tablectl supervisor clear-fault (supervisor)" \
        in lines
    assert any(line.startswith("waits for a supervisor's decision on jammed") for line in lines)
