"""Liveness of the rulings as a property (issue 23): "every ruling that removes, reconstructs or
replaces hands leaves a round that can be settled or voided". The service's own wiring, a
shuffler on a REAL pty, three games whose rulings differ (RWS-NC3P 5.7 / 5.9, MBS-R3P 5.5-5.7 /
5.13.1, RWS-3CP 5.1.4 and the Play decision); random sequences of short and long sets (a box
given two or four cards), irregularities reported at any moment (options opened, holds during
the options, after the reveal too), supervisor decisions of every kind (a bare reconstruct, a
reconstruct with hands, not reconstructable, continue, void) and players' options.

Whatever happened: once the deal is complete no box in play holds other than three cards, a
revealed round is never refused settlement, a supervisor's void after the reveal returns no bet
the revealed hands decided, no wager is settled twice, and following what the status names
(a hold's own options, never a void the hold does not offer first) ends the round settled or
voided with a clause.

CI-sized: a dozen examples of a dozen steps each; every wait is on the event stream or the
status with a timeout (the rig's ``until``), never a sleep.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from controller.games.cards import parse_card
from controller.table import commands as cmd
from firmware_sim.faults import FaultKind, FaultSpec
from tests.controller.service.document_sim import DocumentShuffler
from tests.controller.service.operator_rig import DEALER, SUPERVISOR, Rig

A = cmd.SupervisorAction
K = cmd.IrregularityKind
NO_ROUND = ("idle", "settled", "voided")
COMPLETE = ("decisions", "dealt", "revealed")
"""States in which the deal is complete and every box in play holds its hand."""
WAGERS: dict[str, list[tuple[str, str, int, str]]] = {
    "rws-nc-three-pictures": [("1", "main", 500, "ann"), ("2", "main", 1000, "bob"),
                              ("2", "tie", 500, "cid")],
    "mbs-royal-three-pictures": [("1", "main", 500, "ann"), ("2", "main", 500, "bob"),
                                 ("1", "tie", 500, "ann")],
    "rws-three-card-poker": [("1", "ante", 500, "ann"), ("2", "ante", 1000, "bob"),
                             ("2", "pair_plus", 500, "bob")],
}
REPORTS = [K.OTHER_DEALING_ERROR, K.DEALT_INCORRECTLY, K.WRONG_COUNT_PLAYER, K.EXPOSED_CARD,
           K.INTERRUPTION]
PREFERENCE = ("not_reconstructable", "continue", "in_device", "by_dealer", "interrupts",
              "order", "reconstruct", "void")
"""How the closing supervisor answers a hold: the clause's own way on first, a void last."""
MAX_SUPERVISOR_ACTIONS = 8


class RulingsUnderTest(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="liveness-rulings-"))
        self.rig: Rig | None = None
        self.rounds = 0
        self.in_round = False
        """The model's own state: preconditions never read the live service (hypothesis must
        replay the same choices), so a round a rule ended stays "in round" until
        ``play_the_round_out``, which then finds it ended; the rules between are refused."""

    @initialize(game=st.sampled_from(sorted(WAGERS)))
    def start(self, game: str) -> None:
        self.rig = Rig(self.tmp, game, sim=DocumentShuffler()).start()
        self.rig.wait("DeviceNoted", where=lambda e: e["detail"] == "DeviceOnline")

    def teardown(self) -> None:
        try:
            if self.rig is not None and self.in_round:
                self._end_the_round()
        finally:
            if self.rig is not None:
                self.rig.close()
            shutil.rmtree(self.tmp, ignore_errors=True)

    @property
    def table(self) -> Rig:
        assert self.rig is not None
        return self.rig

    # the dealer -----------------------------------------------------------------------------
    @precondition(lambda self: not self.in_round)
    @rule(fault=st.sampled_from(["none", "set2", "set4"]))
    def open_a_round(self, fault: str) -> None:
        rig = self.table
        if fault != "none":
            rig.sim.inject(FaultSpec(FaultKind(fault)))  # box 1's set
        self.rounds += 1
        self.in_round = True
        rig.send(cmd.OpenRound(**DEALER))
        for index, (position, bet, amount, player) in enumerate(WAGERS[rig.game]):
            rig.send(cmd.PlaceWager(**DEALER, wager_id=f"r{self.rounds}-{index}",
                                    position=position, bet=bet, amount=amount, player=player))
        rig.send(cmd.CloseBets(**DEALER))
        rig.until(lambda: rig.status()["state"] not in ("closed", "shuffled"), timeout=60.0,
                  what="the deal under way")

    @precondition(lambda self: self.in_round)
    @rule()
    def a_dealer_step(self) -> None:
        """The next step of the procedure, whatever the state asks for."""
        rig = self.table
        status = rig.status()
        state = status["state"]
        if state == "decisions" and status["decisions_due"]:
            rig.send(cmd.PlayerDecision(**DEALER, position=status["decisions_due"][0],
                                        choice=cmd.Choice.PLAY))
        elif state == "dealt":
            rig.send(cmd.RevealDealer(**DEALER))
        elif state == "revealed":
            self._settle()
        elif state == "options":
            rig.send(cmd.CloseOptions(**DEALER))

    @precondition(lambda self: self.in_round)
    @rule(kind=st.sampled_from(REPORTS), position=st.sampled_from(["1", "2"]),
          handled=st.booleans())
    def an_irregularity_reported(self, kind: K, position: str, handled: bool) -> None:
        self.table.send(cmd.ReportIrregularity(
            **DEALER, kind=kind, position=position, handled=handled,
            source=cmd.Source.DEALER if kind is K.EXPOSED_CARD else None, details="property"))

    # the supervisor and the players ---------------------------------------------------------
    @precondition(lambda self: self.in_round)
    @rule(action=st.sampled_from([A.RECONSTRUCT, A.NOT_RECONSTRUCTABLE, A.CONTINUE, A.VOID]),
          with_hands=st.booleans())
    def a_supervisor_decision(self, action: A, with_hands: bool) -> None:
        rig = self.table
        status = rig.status()
        hands: tuple[tuple[str, tuple[Any, ...]], ...] = ()
        if action is A.RECONSTRUCT and with_hands:  # each long hand back to its first three
            hands = tuple((position, tuple(parse_card(c) for c in cards[:3]))
                          for position, cards in status["hands"].items() if len(cards) > 3)
        rig.send(cmd.SupervisorDecision(**SUPERVISOR, action=action, hands=hands,
                                        reason="property"))
        if action is A.VOID and status["state"] == "revealed":
            self._check_void_after_the_reveal(status)

    @precondition(lambda self: self.in_round)
    @rule(position=st.sampled_from(["1", "2"]),
          option=st.sampled_from([cmd.Option.WITHDRAW, cmd.Option.CONTINUE]))
    def a_players_option(self, position: str, option: cmd.Option) -> None:
        self.table.send(cmd.PlayerOption(**DEALER, position=position, option=option))

    @precondition(lambda self: self.in_round)
    @rule()
    def play_the_round_out(self) -> None:
        self._end_the_round()

    # the properties -------------------------------------------------------------------------
    @invariant()
    def every_box_in_play_holds_three_cards_once_dealt(self) -> None:
        if self.rig is None:
            return
        status = self.table.status()
        if status["state"] not in COMPLETE:
            return
        in_play = self._boxes_in_play(status)
        short = {p: len(c) for p, c in status["hands"].items()
                 if (p in in_play or p == "dealer") and len(c) != 3}
        assert not short, (status["state"], short, status["hands"])

    @invariant()
    def no_wager_settled_twice(self) -> None:
        if self.rig is None:
            return
        settled: dict[str, int] = {}
        for event in list(self.table.published):
            if event.get("type") in ("RoundSettled", "RoundVoided"):
                for result in event["settlement"]["results"]:
                    settled[result["wager_id"]] = settled.get(result["wager_id"], 0) + 1
        assert all(count == 1 for count in settled.values()), settled

    def _settle(self) -> None:
        out = self.table.send(cmd.SettleRound(**DEALER))
        assert not (out and out[-1]["type"] == "CommandRefused"), (
            "a revealed round was refused settlement", out, self.table.status())

    def _check_void_after_the_reveal(self, before: Mapping[str, Any]) -> None:
        """A supervisor's void after the reveal settles every box holding three cards: none of
        those bets comes back returned (withdrawn and removed ones aside)."""
        rig = self.table
        if rig.status()["state"] != "voided":
            return  # refused (another decision was pending): nothing to check
        wagers = {w["id"] for w in before["wagers"]}
        voided = self._ended(wagers)
        assert voided is not None and voided["type"] == "RoundVoided", voided
        if len(before["hands"].get("dealer", ())) != 3:
            return
        in_play = self._boxes_in_play(before)
        decided = {w["id"] for w in before["wagers"] if w["position"] in in_play
                   and len(before["hands"].get(w["position"], ())) == 3} - self._withdrawn()
        returned = {r["wager_id"] for r in voided["settlement"]["results"]
                    if r["outcome"] == "returned" and r["wager_id"] in decided
                    and "no hand of three cards" not in r["rule"]}
        assert not returned, (returned, voided)

    # the round's bookkeeping, from the published events -----------------------------------
    def _this_round(self) -> list[Mapping[str, Any]]:
        events = list(self.table.published)
        opened = max((i for i, e in enumerate(events) if e.get("type") == "RoundOpened"),
                     default=0)
        return events[opened:]

    def _withdrawn(self) -> set[str]:
        return {wid for e in self._this_round() if e.get("type") == "PlayerOptionTaken"
                for wid in e.get("wager_ids", ())}

    def _boxes_in_play(self, status: Mapping[str, Any]) -> set[str]:
        removed = {e["position"] for e in self._this_round() if e.get("type") == "HandRemoved"}
        withdrawn = self._withdrawn()
        return {w["position"] for w in status["wagers"] if w["id"] not in withdrawn} - removed

    def _ended(self, wagers: set[str]) -> dict[str, Any] | None:
        for event in list(self.table.published):
            if event.get("type") in ("RoundSettled", "RoundVoided") and wagers <= {
                    r["wager_id"] for r in event["settlement"]["results"]}:
                return dict(event)
        return None

    # the liveness check ---------------------------------------------------------------------
    def _end_the_round(self) -> None:
        """Play the round out as the people at the table would, following what the status
        names; a held round is answered from its own options, a void the last of them."""
        rig = self.table
        supervisor, tried = 0, 0
        held_by: str | None = None
        for _ in range(40):
            status = rig.status()
            state = status["state"]
            if state in NO_ROUND:
                break
            if state == "betting":
                rig.send(cmd.CloseBets(**DEALER))
            elif state == "decisions":
                for position in status["decisions_due"]:
                    out = rig.send(cmd.PlayerDecision(**DEALER, position=position,
                                                      choice=cmd.Choice.PLAY))
                    assert out and out[-1]["type"] != "CommandRefused", out
            elif state == "dealt":
                rig.send(cmd.RevealDealer(**DEALER))
            elif state == "revealed":
                self._settle()
            elif state == "options":
                rig.send(cmd.CloseOptions(**DEALER))
            elif state == "hold":
                if status["held_for"] != held_by:
                    held_by, tried = status["held_for"], 0
                supervisor += 1
                tried = self._answer_the_hold(tried)
            else:
                before = state
                try:
                    rig.until(lambda: rig.status()["state"] != before, timeout=2.5,
                              what="the deal to move on")
                except AssertionError:
                    pass  # no movement: the next pass acts on what status names
        status = rig.status()
        assert status["state"] in ("settled", "voided"), status
        assert supervisor <= MAX_SUPERVISOR_ACTIONS, supervisor
        self.in_round = False
        wagers = {w["id"] for w in status["wagers"]}
        rig.until(lambda: self._ended(wagers) is not None, timeout=60.0,
                  what="the settlement event of every wager")
        last = self._ended(wagers)
        assert last is not None
        if last["type"] == "RoundVoided":
            assert last["clause"], last

    def _answer_the_hold(self, tried: int) -> int:
        """The next of the hold's own options in :data:`PREFERENCE` order; a refused answer
        (a continue that would leave a short box) moves on to the next, round the list (the
        status can show the hold a moment before its ``SupervisorRequired`` is published)."""
        rig = self.table
        offered: tuple[str, ...] = ()
        for event in reversed(rig.published):
            if event.get("type") == "SupervisorRequired":
                offered = tuple(event.get("options") or ())
                break
        ordered = [o for o in PREFERENCE if o in offered] or ["void"]
        choice = ordered[tried % len(ordered)]
        cards: tuple[Any, ...] = ()
        if choice == "order":  # nothing was drawn that the property did not deal: void
            choice = "void"
        rig.send(cmd.SupervisorDecision(**SUPERVISOR, action=A(choice), cards=cards,
                                        reason="liveness"))
        return tried + 1


RulingsUnderTest.TestCase.settings = settings(
    max_examples=12, stateful_step_count=12, deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # CI-sized: no shrinking
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
test_rulings_leave_a_round_to_end = RulingsUnderTest.TestCase
