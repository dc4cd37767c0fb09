"""Liveness as a property (issue 10): the service's own wiring, a shuffler on a REAL pty,
random sequences of device faults (jam, exposed card, count mismatch, door), reboots,
disconnects and operator verbs. Whatever happened, after at most a few supervisor actions the
round ends settled or voided with a clause, and no wager is lost or settled twice.

CI-sized: a few examples of a few steps each; every wait is on the event stream or the
status with a timeout (the rig's ``until``), never a sleep.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from controller.table import commands as cmd
from firmware_sim.faults import FaultKind, FaultSpec
from tests.controller.service.document_sim import DocumentShuffler
from tests.controller.service.operator_rig import DEALER, SUPERVISOR, Rig

MAX_SUPERVISOR_ACTIONS = 6
"""A supervisor may need: clear-fault, continue (or void), count the deck, per trouble."""
NO_ROUND = ("idle", "settled", "voided")
FAULTS = {"jam": lambda sim: sim.jam_next_hand(),
          "exposed": lambda sim: sim.inject(FaultSpec(FaultKind.EXPOSED)),
          "count": lambda sim: sim.inject(FaultSpec(FaultKind.COUNT, 51.0)),
          "door": lambda sim: sim.inject(FaultSpec(FaultKind.DOOR_OPEN)),
          "faceup": lambda sim: sim.inject(FaultSpec(FaultKind.FACE_UP))}


class ServiceUnderFaults(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="liveness-"))
        self.sim = DocumentShuffler()
        self.rig = Rig(self.tmp, sim=self.sim).start()
        self.rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")
        self.rounds = 0
        self.unplugged = False
        self.in_round = False
        """The model's own state: preconditions never read the live service (hypothesis
        must replay the same choices)."""

    def teardown(self) -> None:
        try:
            if self.in_round:
                self._end_the_round()
        finally:
            self.rig.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    # the table ------------------------------------------------------------------------------
    @precondition(lambda self: not self.in_round and not self.unplugged)
    @rule()
    def open_a_round(self) -> None:
        self.in_round = True
        if self.rig.status().get("deck_blocked"):
            self.rig.send(cmd.DeckCounted(**DEALER, count=52))
        self.rounds += 1
        self.rig.open_and_close(self.rounds)

    @precondition(lambda self: self.in_round)
    @rule()
    def play_the_round_out(self) -> None:
        self._end_the_round()

    # the device -----------------------------------------------------------------------------
    @rule(fault=st.sampled_from(sorted(FAULTS)))
    def a_device_fault(self, fault: str) -> None:
        FAULTS[fault](self.sim)

    @rule()
    def a_reboot(self) -> None:
        self.sim.reboot()

    @precondition(lambda self: not self.unplugged)
    @rule()
    def unplug(self) -> None:
        self.rig.server.unplug()
        self.unplugged = True

    @precondition(lambda self: self.unplugged)
    @rule()
    def replug(self) -> None:
        self.rig.server.replug()
        self.unplugged = False

    # supervisor verbs at random moments -----------------------------------------------------
    @rule(verb=st.sampled_from(["clear-fault", "continue", "void"]))
    def a_supervisor_verb(self, verb: str) -> None:
        if verb == "clear-fault":
            self.rig.send(cmd.ClearDeviceFault(**SUPERVISOR))
        else:
            self.rig.send(cmd.SupervisorDecision(**SUPERVISOR,
                                                 action=cmd.SupervisorAction(verb),
                                                 reason="property test"))

    @invariant()
    def no_wager_settled_twice(self) -> None:
        settled: dict[str, int] = {}
        for event in self.rig.published:
            if event.get("type") in ("RoundSettled", "RoundVoided"):
                for result in event["settlement"]["results"]:
                    settled[result["wager_id"]] = settled.get(result["wager_id"], 0) + 1
        assert all(count == 1 for count in settled.values()), settled

    # the liveness check ---------------------------------------------------------------------
    def _end_the_round(self) -> None:
        """Play the round out as the people at the table would, following what status says
        it waits for; a supervisor acts only when the status names a supervisor's verb."""
        rig = self.rig
        if self.unplugged:
            rig.server.replug()
            self.unplugged = False
        supervisor = 0
        for _ in range(30):
            status = rig.status()
            state = status["state"]
            if state in NO_ROUND:
                break
            if state == "betting":
                # "No more bets" is refused while the device is offline: the dealer calls it
                # again once it is back (the status names the device's wait)
                rig.send(cmd.CloseBets(**DEALER))
                self._progress(state)
            elif state == "decisions":
                for position in status["decisions_due"]:
                    rig.send(cmd.PlayerDecision(**DEALER, position=position,
                                                choice=cmd.Choice.PLAY))
            elif state == "dealt":
                rig.send(cmd.RevealDealer(**DEALER))
            elif state == "revealed":
                rig.send(cmd.SettleRound(**DEALER))
            elif state == "options":
                rig.send(cmd.CloseOptions(**DEALER))
            elif status.get("deck_blocked"):
                rig.send(cmd.DeckCounted(**DEALER, count=52))
            elif self._needs_supervisor(status):
                supervisor += 1
                self._supervise(status, supervisor)
            else:
                self._progress(state)
        status = rig.status()
        assert status["state"] in ("settled", "voided"), status
        self.in_round = False
        assert supervisor <= MAX_SUPERVISOR_ACTIONS, supervisor
        wagers = {w["id"] for w in status["wagers"]}
        rig.until(lambda: self._ended(wagers) is not None, timeout=5.0,
                  what="the settlement event of every wager")  # published after the snapshot
        last = self._ended(wagers)
        assert last is not None
        if last["type"] == "RoundVoided":
            assert last["clause"], last

    def _ended(self, wagers: set[str]) -> dict[str, Any] | None:
        """The settlement event that gives every one of these wagers its result."""
        for event in self.rig.published:
            if event.get("type") in ("RoundSettled", "RoundVoided") and wagers <= {
                    r["wager_id"] for r in event["settlement"]["results"]}:
                return dict(event)
        return None

    def _needs_supervisor(self, status: dict[str, Any]) -> bool:
        operator = status["device"]["operator"]
        return status["state"] == "hold" or operator["state"] in ("fault", "held")

    def _supervise(self, status: dict[str, Any], attempt: int) -> None:
        rig = self.rig
        operator = status["device"]["operator"]
        if operator["state"] in ("fault", "held") and attempt < 4:
            rig.send(cmd.ClearDeviceFault(**SUPERVISOR, reason="fixed"))
        if status["state"] == "hold" or attempt >= 3:
            rig.send(cmd.SupervisorDecision(**SUPERVISOR, action=self._choice(attempt),
                                            reason="liveness"))
        self._progress(status["state"])

    def _choice(self, attempt: int) -> cmd.SupervisorAction:
        """What the held ruling offers (its SupervisorRequired options, which status names as
        the way out): continue while that is offered, void from the third attempt; a hold that
        asks a fact and offers neither (where a card was seen, whether a jam stops the round)
        is answered with its first answer, as a supervisor who looked would."""
        options: tuple[str, ...] = ()
        for event in reversed(self.rig.published):
            if event.get("type") == "SupervisorRequired":
                options = tuple(event.get("options") or ())
                break
        wanted = "continue" if attempt < 3 else "void"
        if not options or wanted in options:
            return cmd.SupervisorAction(wanted)
        answers = [o for o in options if o not in ("reconstruct", "order")]
        return cmd.SupervisorAction(answers[0] if answers else wanted)

    def _progress(self, state: str) -> None:
        """Wait (bounded) for the round or the operator to move on."""
        rig = self.rig
        before = (state, rig.operator()["state"])
        try:
            rig.until(lambda: (rig.status()["state"], rig.operator()["state"]) != before,
                      timeout=2.5, what="progress")
        except AssertionError:
            pass  # no movement: the next pass acts on what status names


ServiceUnderFaults.TestCase.settings = settings(
    max_examples=25, stateful_step_count=20, deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # CI-sized: no shrinking
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_service_under_faults = ServiceUnderFaults.TestCase
