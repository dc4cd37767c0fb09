"""End to end: technical interruptions from the seeded shuffler over a REAL pty: the cable pulled
(``disconnect``: DeviceOffline, then DeviceOnline on the same path) and a reboot mid-hand
(``reboot``: DeviceRebooted). RWS-NC3P 5.4 and MBS-R3P 5.13 turn on whether an outcome is
established; the other texts have no clause and a supervisor decides.

Box 1 is dealt 2H 6C 3D first: a Three Pictures or Royal Pictures bet on it has then conclusively
lost, which establishes an outcome; with Main bets only nothing is established.
"""

from __future__ import annotations

import pytest

from controller.table import commands as cmd
from controller.table import events as ev
from firmware_sim.faults import FaultKind, FaultSpec
from firmware_sim.shuffler import ShufflerSim
from tests.controller.table.test_conditions import BEFORE_FIRST_CARD
from tests.e2e.conftest import (
    DEALER,
    SEED,
    SHUFFLER_GAMES,
    SUPERVISOR,
    Rig,
    all_returned,
    result_rules,
    results,
)

A = cmd.SupervisorAction
UNPLUG = FaultSpec(FaultKind.DISCONNECT, 0.3)


def _unplug_after_box_1(rig: Rig) -> None:
    rig.shuffle()
    rig.hand()
    rig.inject(UNPLUG)
    rig.wait(ev.DealingError, lambda e: e.kind == "interruption")


def _finish_after_replug(rig: Rig) -> ev.RoundSettled:
    rig.note("DeviceOnline")
    rig.hand()
    rig.hand()
    rig.wait(ev.DealComplete)
    return rig.finish()


@pytest.mark.parametrize("rig", ["rws-nc-three-pictures"], indirect=True)
def test_disconnect_nothing_established_voids_rws(rig: Rig) -> None:
    """RWS-NC3P 5.4.2: the shuffler drops off after box 1's set; with Main bets only none has
    conclusively won or lost, so the round is void."""
    rig.bets()
    rig.shuffle()
    rig.hand()
    rig.inject(UNPLUG)
    established = rig.wait(ev.OutcomeEstablished)
    assert (established.established, established.decided) == (False, ())
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause.startswith("RWS-NC3P 5.4.2") and all_returned(voided)
    rig.note("DeviceOnline")


@pytest.mark.parametrize("rig", ["rws-nc-three-pictures"], indirect=True)
def test_disconnect_outcome_established_continues_rws(rig: Rig) -> None:
    """RWS-NC3P 5.4.1: box 1's Three Pictures bet has lost on 2H: an outcome is established,
    play continues when the shuffler is back and the round is concluded."""
    rig.bets([("1", "main", 1000), ("1", "three_pictures", 1000), ("2", "main", 1000)])
    _unplug_after_box_1(rig)
    established = rig.wait(ev.OutcomeEstablished)
    assert established.established and established.decided == (("w2", "lose"),)
    assert rig.wait(ev.IrregularityRuled).clause == "RWS-NC3P 5.4.1"
    settled = _finish_after_replug(rig)
    assert results(settled) == {"w1": ("lose", -1000), "w2": ("lose", -1000), "w3": ("push", 0)}


@pytest.mark.parametrize("rig", ["mbs-royal-three-pictures"], indirect=True)
def test_disconnect_nothing_established_withdraw_option_mbs_r(rig: Rig) -> None:
    """MBS-R3P 5.13.1: no outcome established: each player may withdraw all his wagers; box 1
    does, box 2 continues, and the round is concluded after the shuffler returns."""
    rig.bets()
    _unplug_after_box_1(rig)
    offered = rig.wait(ev.PlayerOptionsOffered)
    assert (offered.clause, offered.positions) == ("MBS-R3P 5.13.1", ("1", "2"))
    rig.put(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.WITHDRAW,
                             player="player-1"))
    rig.put(cmd.PlayerOption(**DEALER, position="2", option=cmd.Option.CONTINUE))
    assert rig.wait(ev.PlayerOptionTaken).wager_ids == ("w1",)
    settled = _finish_after_replug(rig)
    assert results(settled) == {"w1": ("returned", 0), "w2": ("push", 0)}
    assert result_rules(settled)["w1"] == "MBS-R3P 5.13.1"


@pytest.mark.parametrize("rig", ["mbs-royal-three-pictures"], indirect=True)
def test_disconnect_outcome_established_continues_mbs_r(rig: Rig) -> None:
    """MBS-R3P 5.13.2: box 1's Royal Pictures bet (no King, no picture) has lost on 2H 6C 3D:
    play continues and the round is concluded."""
    rig.bets([("1", "main", 1000), ("1", "royal_pictures", 1000), ("2", "main", 1000)])
    _unplug_after_box_1(rig)
    assert rig.wait(ev.OutcomeEstablished).established
    assert rig.wait(ev.IrregularityRuled).clause == "MBS-R3P 5.13.2"
    settled = _finish_after_replug(rig)
    assert results(settled) == {"w1": ("lose", -1000), "w2": ("lose", -1000), "w3": ("push", 0)}


@pytest.mark.parametrize("rig", ["mbs-three-pictures", "rws-three-card-poker"], indirect=True)
def test_disconnect_supervisor_elsewhere(rig: Rig) -> None:
    """MBS-3P and RWS-3CP print no interruption clause: a supervisor decides; here play
    continues once the shuffler is back and the round settles exactly as uninterrupted."""
    rig.bets()
    _unplug_after_box_1(rig)
    required = rig.wait(ev.SupervisorRequired)
    assert required.kind == "interruption" and "no clause" in required.clause
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
    rig.wait(ev.SupervisorDecided)
    settled = _finish_after_replug(rig)
    expected = {"mbs-three-pictures": {"w1": ("lose", -1000), "w2": ("push", 0)},
                "rws-three-card-poker": {"w1": ("lose", -1000), "w1:play": ("lose", -1000),
                                         "w2": ("win", 1000), "w2:play": ("win", 1000)}}
    assert results(settled) == expected[rig.game]


@pytest.mark.parametrize("rig", ["rws-nc-three-pictures", "mbs-royal-three-pictures"],
                         indirect=True)
def test_reboot_mid_hand_nothing_established(rig: Rig) -> None:
    """The shuffler reboots while forming box 2's set (the command was acknowledged, no hand
    reported); with Main bets only nothing is established: void (RWS-NC3P 5.4.2) or the
    withdraw option (MBS-R3P 5.13.1)."""
    rig.bets()
    rig.shuffle()
    rig.hand()
    rig.inject(FaultSpec(FaultKind.REBOOT))
    rig.shuffler.driver.dispense_hand()
    assert not rig.wait(ev.OutcomeEstablished).established
    if rig.game == "rws-nc-three-pictures":
        voided = rig.wait(ev.RoundVoided)
        assert voided.clause.startswith("RWS-NC3P 5.4.2") and all_returned(voided)
    else:
        assert rig.wait(ev.PlayerOptionsOffered).clause == "MBS-R3P 5.13.1"


@pytest.mark.parametrize("rig", ["rws-nc-three-pictures"], indirect=True)
def test_reboot_mid_hand_outcome_established_continues(rig: Rig) -> None:
    """RWS-NC3P 5.4.1: the shuffler reboots forming box 2's set after box 1's Three Pictures
    bet has lost: an outcome is established, so the round is NOT void and play is to continue
    (the simulator loses its deck on a reboot, so the test stops at the ruling)."""
    rig.bets([("1", "main", 1000), ("1", "three_pictures", 1000), ("2", "main", 1000)])
    rig.shuffle()
    rig.hand()
    rig.inject(FaultSpec(FaultKind.REBOOT))
    rig.shuffler.driver.dispense_hand()
    established = rig.wait(ev.OutcomeEstablished)
    assert established.established and established.decided == (("w2", "lose"),)
    ruled = rig.wait(ev.IrregularityRuled, lambda e: e.kind == "interruption")
    assert (ruled.action, ruled.clause) == ("continue", "RWS-NC3P 5.4.1")
    assert rig.all(ev.RoundVoided) == [] and rig.state == "dealing"


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_offline_during_betting_blocks_no_more_bets(rig: Rig) -> None:
    """The shuffler drops off while bets are offered: no card is dealt, nothing is established
    and nothing is void; "No more bets" is refused until the device is back, then the round is
    dealt and settles exactly as usual."""
    rig.bets(close=False)
    rig.inject(UNPLUG)
    noted = rig.note("interruption: DeviceOffline")
    assert "nothing established" in noted.detail
    rig.put(cmd.CloseBets(**DEALER))
    assert "offline" in rig.wait(ev.CommandRefused, lambda e: e.command == "CloseBets").reason
    rig.note("DeviceOnline")
    rig.put(cmd.CloseBets(**DEALER))
    rig.wait(ev.BetsClosed)
    rig.shuffle()
    for _ in range(3):
        rig.hand()
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    assert results(settled)["w1"] == ("lose", -1000)
    assert rig.all(ev.RoundVoided) == []


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_reboot_before_any_card_reshuffles(rig: Rig) -> None:
    """The shuffler reboots forming the very first set. The round of play began at "Place your
    bets" (RWS-NC3P 1.14) and 5.4.2 makes no exception before the first card, so the reboot is
    ruled exactly as the shuffler going offline there is (RWS-NC3P 5.4.2 void, MBS-R3P 5.13.1
    options, a supervisor elsewhere); the shuffle is lost with the deck, so a round that goes
    on waits for a new shuffle and deals from it."""
    rig.bets()
    rig.shuffle()
    rig.inject(FaultSpec(FaultKind.REBOOT))
    rig.shuffler.driver.dispense_hand()
    assert "shuffle before it is lost" in rig.note("DeviceRebooted").detail
    ruled = rig.wait(ev.IrregularityRuled, lambda e: e.kind == "interruption")
    assert (ruled.action, ruled.clause) == BEFORE_FIRST_CARD[rig.game]
    if ruled.action == "void":
        assert all_returned(rig.wait(ev.RoundVoided))
        return
    if ruled.action == "supervisor":
        rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
        rig.wait(ev.SupervisorDecided)
    else:
        for box in ("1", "2"):
            rig.put(cmd.PlayerOption(**DEALER, position=box, option=cmd.Option.CONTINUE))
        rig.wait(ev.PlayerOptionTaken, lambda e: e.position == "2")
    rig.shuffle()
    for _ in range(3):
        rig.hand()
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    twin = ShufflerSim(seed=SEED)
    twin._finish_shuffle()
    twin.reboot()
    twin._finish_shuffle()
    deck = twin._deck
    assert list(settled.hands) == [("1", tuple(deck[0:3])), ("2", tuple(deck[3:6])),
                                   ("dealer", tuple(deck[6:9]))]
    assert rig.all(ev.RoundVoided) == []


@pytest.mark.parametrize("rig", ["rws-nc-three-pictures"], indirect=True)
def test_offline_before_any_card_voids_as_a_reboot_does(rig: Rig) -> None:
    """RWS-NC3P 5.4.2: the cable pulled after the shuffle, before the first card: void, as for
    the reboot above (both or neither)."""
    rig.bets()
    rig.shuffle()
    rig.inject(UNPLUG)
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause == "RWS-NC3P 5.4.2" and all_returned(voided)
    rig.note("DeviceOnline")
