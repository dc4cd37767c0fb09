"""End to end: the LIVE-3P studio procedure dealt from a seeded Bee-Tek shoe over a REAL pty (its
``[Manual Burn Cards]`` section marks burns), with the studio's shuffling machine on a second pty
for the jam of T&C 6.

LIVE-3P T&C 1: 4 cards are burned, then one card at a time face up P1 -> P2 -> P3 -> Banker,
three rounds (Game Play). Seed 11: burns 7H 6S 6H 4H, then P1 AD TS KH (Single Knight One),
P2 7D 5S TH (Plain Two), P3 JC TD 7C (Single Knight Seven), Banker QS 2H JH (Double Knights Two).
Bets: Win on P1 (w1), Lose on P2 (w2), Win on P3 (w3), Tie on P1 (w4).
"""

from __future__ import annotations

import pytest

from controller.table import commands as cmd
from controller.table import events as ev
from firmware_sim.faults import FaultKind, FaultSpec
from tests.e2e.conftest import DEALER, LINE_DECK, SUPERVISOR, Rig, all_returned, results

A = cmd.SupervisorAction
K = cmd.IrregularityKind
LIVE = ("live-three-pictures", ("beetek",), None)
LIVE_WITH_SHUFFLER = ("live-three-pictures", ("beetek", "shuffler"), None)
POSITIONS = ("p1", "p2", "p3", "banker")
NORMAL = {"w1": ("lose", -1000), "w2": ("win", 1000), "w3": ("win", 1000), "w4": ("lose", -1000)}


def _hands(cards):
    return [(p, tuple(cards[i::4][:3])) for i, p in enumerate(POSITIONS)]


def _ready(rig: Rig) -> None:
    rig.bets()
    rig.shuffle()


def _burn(rig: Rig, n: int = 4) -> None:
    rig.draw(n, burn=True)


@pytest.mark.parametrize("rig", [LIVE], indirect=True)
def test_live_round_burn_four_then_p1_p2_p3_banker(rig: Rig) -> None:
    """T&C 1 and Game Play: 4 burn cards, then P1 -> P2 -> P3 -> Banker three times, face up
    (no reveal step); Win/Lose/Tie settle against the Banker (Game Play)."""
    _ready(rig)
    _burn(rig)
    rig.draw(12)
    assert [b.card for b in rig.all(ev.BurnCard)] == list(LINE_DECK[:4])
    assert [a.position for a in rig.all(ev.CardAssigned)] == list(POSITIONS) * 3
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    assert list(settled.hands) == _hands(LINE_DECK[4:16])
    assert results(settled) == NORMAL


@pytest.mark.parametrize("rig", [LIVE], indirect=True)
def test_burn_error_before_p1_second_card_reconstructed(rig: Rig) -> None:
    """T&C 1: a fifth card burned, found before Player 1's second card: reconstruction. The
    extra burn card was P1's first card; every card goes back to its intended place."""
    _ready(rig)
    _burn(rig, 5)
    required = rig.wait(ev.SupervisorRequired)
    assert (required.kind, required.clause, required.options) == (
        "burn_error", "LIVE-3P T&C 1", ("reconstruct",))
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT))
    rig.wait(ev.HandsMoved)
    rig.wait(ev.CardAssigned, lambda e: e.position == "p1" and e.card == LINE_DECK[4])
    rig.draw(11)
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    assert list(settled.hands) == _hands(LINE_DECK[4:16])
    assert results(settled) == NORMAL


@pytest.mark.parametrize("rig", [LIVE], indirect=True)
def test_burn_error_found_later_management_voids(rig: Rig) -> None:
    """T&C 1: a burn error discovered after Player 1's second card: "management reserves the
    rights to void the erroneous hand"."""
    _ready(rig)
    _burn(rig)
    rig.draw(5)
    rig.put(cmd.ReportIrregularity(**DEALER, kind=K.BURN_ERROR, details="only 3 burned"))
    required = rig.wait(ev.SupervisorRequired)
    assert (required.clause, required.options) == ("LIVE-3P T&C 1", ("void", "continue"))
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="burn error"))
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause == "LIVE-3P T&C 1" and all_returned(voided)


@pytest.mark.parametrize("rig", [LIVE], indirect=True)
def test_card_drawn_after_the_game_does_not_count(rig: Rig) -> None:
    """T&C 3: an unnecessary card drawn after the game does not affect the result."""
    _ready(rig)
    _burn(rig)
    rig.draw(12)
    rig.wait(ev.DealComplete)
    rig.shoe.sim.draw()
    ignored = rig.wait(ev.CardIgnored)
    assert (ignored.card, ignored.clause) == (LINE_DECK[16], "LIVE-3P T&C 3")
    settled = rig.finish()
    assert list(settled.hands) == _hands(LINE_DECK[4:16]) and results(settled) == NORMAL


@pytest.mark.parametrize("rig", [LIVE], indirect=True)
def test_reversed_sequence_swaps_p1_and_p3(rig: Rig) -> None:
    """T&C 5: the whole hand was dealt P3 -> P2 -> P1 -> Banker: "Settlement will swap the
    result of Player 1 with Player 3". The record is by sequence, so P1's bets settle on the
    first-dealt cards (the result the physical P3 box showed): the swap is journaled."""
    _ready(rig)
    _burn(rig)
    rig.draw(12)
    rig.wait(ev.DealComplete)
    rig.put(cmd.ReportIrregularity(**DEALER, kind=K.REVERSED_SEQUENCE))
    swapped = rig.wait(ev.ResultsSwapped)
    assert (swapped.first, swapped.second, swapped.clause) == ("p1", "p3", "LIVE-3P T&C 5")
    settled = rig.finish()
    assert results(settled) == NORMAL


@pytest.mark.parametrize("rig", [LIVE], indirect=True)
def test_card_exposed_while_bets_are_offered_voids(rig: Rig) -> None:
    """T&C 2: any exposure of in-game cards during bets offering voids the hand."""
    rig.bets(close=False)
    rig.shoe.sim.draw()
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause == "LIVE-3P T&C 2" and all_returned(voided)


@pytest.mark.parametrize("rig", [LIVE_WITH_SHUFFLER], indirect=True)
def test_shuffler_jam_management_voids(rig: Rig) -> None:
    """T&C 6: cards jammed in the shuffling machine: management may void the ongoing hand."""
    _ready(rig)
    _burn(rig)
    rig.draw(3)
    rig.inject(FaultSpec(FaultKind.JAM), "shuffler")
    required = rig.wait(ev.SupervisorRequired)
    assert (required.kind, required.clause) == ("jammed", "LIVE-3P T&C 6")
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="jam"))
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause == "LIVE-3P T&C 6" and all_returned(voided)
