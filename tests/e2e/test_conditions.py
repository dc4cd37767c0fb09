"""End to end, the conditions the irregularity clauses attach (issue 12), where a device can
cause them: a card found face up inside the shuffler while bets are offered or before the deal
(the shuffler's exposed-card fault bit, no card read: protocol decision 3), and a power failure
whose withdrawal takes every wager of the player (MBS-R3P 5.13.1). Seeded simulators over REAL
ptys -> real drivers -> the Table thread -> settlement."""

from __future__ import annotations

import pytest

from controller.table import commands as cmd
from controller.table import events as ev
from drivers.events import Fault
from firmware_sim.faults import FaultKind, FaultSpec
from tests.e2e.conftest import (
    DEALER,
    SHUFFLER_GAMES,
    SUPERVISOR,
    Rig,
    all_returned,
    result_rules,
    results,
)

A = cmd.SupervisorAction
LIVE_WITH_SHUFFLER = ("live-three-pictures", ("beetek", "shuffler"), None)


def _face_up_while_shuffling(rig: Rig) -> None:
    """The shuffler reports a card found face up inside it while shuffling: its fault bit 6
    with no card read. Through the simulator's ``faceup`` fault where it has one (docs/
    protocols.md), else by raising the same fault frame on the simulator directly."""
    sim = rig.shuffler.sim
    if "faceup" in {kind.value for kind in FaultKind}:
        rig.inject(FaultSpec(FaultKind("faceup")), "shuffler")
        rig.shuffler.driver.shuffle()
        return
    with sim.lock:
        sim._fault(Fault.EXPOSED_CARD, "card found face up while shuffling")


FACE_UP_WHILE_BETTING = {
    "rws-nc-three-pictures": ("continue", "RWS-NC3P 5.10"),
    "mbs-three-pictures": ("supervisor", "MBS-3P (no clause; house: supervisor decides)"),
    "mbs-royal-three-pictures": ("supervisor", "MBS-R3P 6.1"),
    "rws-three-card-poker": ("supervisor", "RWS-3CP (no clause; house: supervisor decides)"),
}


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_face_up_in_the_shuffler_while_bets_are_offered_is_ruled(rig: Rig) -> None:
    """A card found face up inside the shuffler while bets are offered is ruled, not only
    logged: RWS-NC3P 5.10 uses it as the next card (the round goes on); MBS-R3P 5.8 is about a
    card dealt, so 6.1 applies; MBS-3P and RWS-3CP have no clause: a supervisor decides. The
    supervisor then voids (management void, every wager returned)."""
    rig.bets(close=False)
    _face_up_while_shuffling(rig)
    ruled = rig.wait(ev.IrregularityRuled, lambda e: e.kind == "exposed_card")
    assert (ruled.action, ruled.clause) == FACE_UP_WHILE_BETTING[rig.game]
    rig.sync()
    state = rig.state
    assert state == ("betting" if ruled.action == "continue" else "hold")
    if state == "hold":
        rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="card face up"))
    else:
        # a management void: the exposure's clause (5.10) voids nothing, so it is not cited
        # (a void cites one of the game's void clauses, or none: rules-coverage 41)
        rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="closing the table"))
    assert all_returned(rig.wait(ev.RoundVoided))


@pytest.mark.parametrize("rig", [LIVE_WITH_SHUFFLER], indirect=True)
def test_live_face_up_during_shuffling_goes_to_management(rig: Rig) -> None:
    """LIVE-3P T&C 2, second bullet: a card exposed during shuffling (after "No more bets",
    before the burn) is for management, "depending on the stage of shuffling and number of
    exposed cards": the round is held (void or continue), the count named; management voids."""
    rig.bets()
    _face_up_while_shuffling(rig)
    required = rig.wait(ev.SupervisorRequired)
    assert (required.kind, required.clause) == ("exposed_card", "LIVE-3P T&C 2")
    assert set(required.options) == {"void", "continue"}
    ruled = rig.wait(ev.IrregularityRuled, lambda e: e.kind == "exposed_card")
    assert "1 card this round" in ruled.note
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="face up, early stage"))
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause == "LIVE-3P T&C 2" and all_returned(voided)


@pytest.mark.parametrize("rig", ["mbs-royal-three-pictures"], indirect=True)
def test_power_failure_withdrawal_takes_all_the_players_wagers(rig: Rig) -> None:
    """MBS-R3P 5.13.1: "A Player taking the option to withdraw must withdraw all his wagers".
    Alice plays boxes 1 and 3; the shuffler drops off after box 1's set with nothing
    established; her withdrawal at box 1 (no player named) returns her box 3 wager too."""
    rig.put(cmd.OpenRound(**DEALER))
    rig.wait(ev.RoundOpened)
    for number, (box, player) in enumerate((("1", "alice"), ("2", "bob"), ("3", "alice")), 1):
        rig.put(cmd.PlaceWager(**DEALER, wager_id=f"w{number}", position=box, bet="main",
                               amount=1000, player=player))
        rig.wait(ev.WagerAccepted)
    rig.put(cmd.CloseBets(**DEALER))
    rig.wait(ev.BetsClosed)
    rig.shuffle()
    rig.hand()
    rig.inject(FaultSpec(FaultKind.DISCONNECT, 0.3))
    assert rig.wait(ev.PlayerOptionsOffered).clause == "MBS-R3P 5.13.1"
    rig.put(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.WITHDRAW))
    taken = rig.wait(ev.PlayerOptionTaken)
    assert set(taken.wager_ids) == {"w1", "w3"}
    rig.put(cmd.PlayerOption(**DEALER, position="2", option=cmd.Option.CONTINUE))
    rig.wait(ev.PlayerOptionTaken)
    rig.note("DeviceOnline")
    for _ in range(3):
        rig.hand()
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    outcomes = results(settled)
    assert outcomes["w1"] == ("returned", 0) and outcomes["w3"] == ("returned", 0)
    assert outcomes["w2"][0] != "returned"
    assert result_rules(settled)["w3"] == "MBS-R3P 5.13.1"
