"""End to end: the seeded simulated shuffler over a REAL pty, with the fault injected ->
drivers.shuffler -> Table (its one input queue) -> settlement; asserting outcome, clause and net.

Seed 11 deals the sets 2H 6C 3D | JH 4H 4C | 2D 6H KC | 6S 8C TS | ... (tests/e2e/conftest.py):
box 1 holds a plain One, box 2 and the dealer a Single Picture Eight each.
"""

from __future__ import annotations

import pytest

from controller.games.cards import parse_cards
from controller.table import commands as cmd
from controller.table import events as ev
from drivers.errors import DeviceFault
from firmware_sim.faults import FaultKind, FaultSpec
from tests.e2e.conftest import (
    DEALER,
    SHUFFLER_GAMES,
    SUPERVISOR,
    Rig,
    all_returned,
    result_rules,
    results,
    shuffler_deck,
)

A = cmd.SupervisorAction

NORMAL = {
    # box 1 plain One loses to the dealer's Single Picture Eight; box 2 ties on the same rank
    # (RWS-NC3P 3.13.3, MBS-3P 3.13, MBS-R3P 3.16): the initial bet pushes.
    "rws-nc-three-pictures": {"w1": ("lose", -1000), "w2": ("push", 0)},
    "mbs-three-pictures": {"w1": ("lose", -1000), "w2": ("push", 0)},
    "mbs-royal-three-pictures": {"w1": ("lose", -1000), "w2": ("push", 0)},
    # 3CP: the dealer's King high qualifies (3.10); box 1's six high loses Ante and Play, box 2's
    # pair of fours wins both at 1 to 1 (4.1).
    "rws-three-card-poker": {"w1": ("lose", -1000), "w1:play": ("lose", -1000),
                             "w2": ("win", 1000), "w2:play": ("win", 1000)},
}
HANDS = [("1", parse_cards(["2H", "6C", "3D"])), ("2", parse_cards(["JH", "4H", "4C"])),
         ("dealer", parse_cards(["2D", "6H", "KC"]))]


def _deal_normally(rig: Rig) -> ev.RoundSettled:
    for _ in range(3):
        rig.hand()
    rig.wait(ev.DealComplete)
    return rig.finish()


def _assert_normal(rig: Rig, settled: ev.RoundSettled) -> None:
    assert list(settled.hands) == HANDS
    assert results(settled) == NORMAL[rig.game]


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_round_settles_end_to_end(rig: Rig) -> None:
    """Shuffle, three sets (boxes 1, 2, dealer: RWS-NC3P 3.12.1, MBS-R3P 3.12, RWS-3CP 3.7),
    decisions (3CP), reveal and settlement, through the pty, with the exact nets."""
    rig.bets()
    rig.shuffle()
    _assert_normal(rig, _deal_normally(rig))


COUNT = {"rws-nc-three-pictures": "RWS-NC3P 5.5.2", "mbs-three-pictures": "MBS-3P 5.2",
         "mbs-royal-three-pictures": "MBS-R3P 5.1, 5.9", "rws-three-card-poker": "RWS-3CP 5.1.3"}
FOREIGN = {"rws-nc-three-pictures": "RWS-NC3P 5.5.1", "mbs-three-pictures": "MBS-3P 5.1",
           "mbs-royal-three-pictures": "MBS-R3P 5.1", "rws-three-card-poker": "RWS-3CP 5.1.1"}
DUPLICATE = {"rws-nc-three-pictures": "RWS-NC3P 5.5.1, 5.5.2",
             "mbs-three-pictures": "MBS-3P 5.1, 5.2", "mbs-royal-three-pictures": "MBS-R3P 5.1",
             "rws-three-card-poker": "RWS-3CP 5.1.1, 5.1.3"}


@pytest.mark.parametrize("count", [51, 53])
@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_count_mismatch_voids_and_blocks(rig: Rig, count: int) -> None:
    """The shuffler counts 51 or 53 cards: shortage or excess (RWS-NC3P 5.5.2, MBS-3P 5.2,
    MBS-R3P 5.1/5.9, RWS-3CP 5.1.3): the round is void, all wagers returned, and dealing stays
    blocked (a dealer's shuffle confirmation is refused) until the deck is counted; the next
    round then deals from the new shuffle."""
    rig.bets()
    rig.inject(FaultSpec(FaultKind.COUNT, float(count)))
    rig.shuffler.driver.shuffle()
    blocked = rig.wait(ev.DeckBlocked)
    voided = rig.wait(ev.RoundVoided)
    assert blocked.clause == COUNT[rig.game] and voided.clause.startswith(COUNT[rig.game])
    assert f"counted {count}" in voided.reason and all_returned(voided)
    rig.bets()
    rig.put(cmd.ConfirmShuffle(**DEALER))
    assert "blocked" in rig.wait(ev.CommandRefused).reason
    with pytest.raises(DeviceFault):
        rig.shuffler.driver.shuffle()  # the device refuses too while its count fault is active
    rig.put(cmd.DeckCounted(**SUPERVISOR, count=52))
    rig.wait(ev.DeckReleased)
    rig.shuffler.driver.clear_fault()
    rig.shuffle()
    settled = _deal_normally(rig)
    deck = shuffler_deck(2)
    assert list(settled.hands) == [("1", deck[0:3]), ("2", deck[3:6]), ("dealer", deck[6:9])]


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_foreign_card_voids(rig: Rig) -> None:
    """A card not of the deck in use (RWS-NC3P 5.5.1, MBS-3P 5.1, MBS-R3P 5.1, RWS-3CP 5.1.1)."""
    rig.bets()
    rig.inject(FaultSpec(FaultKind.FOREIGN))
    rig.shuffler.driver.shuffle()
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause.startswith(FOREIGN[rig.game]) and all_returned(voided)


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_second_copy_voids(rig: Rig) -> None:
    """The second set repeats 2H, already dealt to box 1: a card not of the set / an excess
    (RWS-NC3P 5.5.1-5.5.2, MBS-3P 5.1-5.2, MBS-R3P 5.1, RWS-3CP 5.1.1, 5.1.3)."""
    rig.bets()
    rig.shuffle()
    rig.hand()
    rig.inject(FaultSpec(FaultKind.DUPLICATE))
    rig.shuffler.driver.dispense_hand()
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause.startswith(DUPLICATE[rig.game]) and "2H" in voided.reason
    assert all_returned(voided)


UNSHUFFLED = {"rws-nc-three-pictures": ("void", "RWS-NC3P 5.5.3"),
              "mbs-royal-three-pictures": ("void", "MBS-R3P 5.1"),
              "mbs-three-pictures": ("supervisor", "MBS-3P (no clause; house: supervisor decides)"),
              "rws-three-card-poker": ("supervisor",
                                       "RWS-3CP (no clause; house: supervisor decides)")}


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_unshuffled_deck(rig: Rig) -> None:
    """The shuffler reports the deck left in pack order: void under RWS-NC3P 5.5.3 and MBS-R3P
    5.1; MBS-3P and RWS-3CP print nothing, so a supervisor decides (here: void)."""
    rig.bets()
    rig.inject(FaultSpec(FaultKind.UNSHUFFLED))
    rig.shuffler.driver.shuffle()
    action, clause = UNSHUFFLED[rig.game]
    ruled = rig.wait(ev.IrregularityRuled, lambda e: e.kind == "not_shuffled")
    assert (ruled.action, ruled.clause) == (action, clause)
    if action == "supervisor":
        rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="pack order"))
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause.startswith(clause) and all_returned(voided)


PLAYER_SET2 = {
    "rws-nc-three-pictures": "RWS-NC3P 5.9",
    "mbs-three-pictures": "MBS-3P 5.3",
    "mbs-royal-three-pictures": "MBS-R3P 5.4",
    "rws-three-card-poker": "RWS-3CP 5.1.4",
}


@pytest.mark.parametrize("fault", [FaultKind.SET_OF_TWO, FaultKind.SET_OF_FOUR])
@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_wrong_count_to_a_player(rig: Rig, fault: FaultKind) -> None:
    """Box 1 gets a set of two (or four). RWS-NC3P 5.9: not reconstructable -> that hand is
    removed and its bet returned, the rest play on (box 2 gets the next set). Before anyone
    handled the cards the others treat it as cards dealt incorrectly: void unless complete hands
    can be moved (MBS-3P 5.3, MBS-R3P 5.4, RWS-3CP 5.1.4); a supervisor finds it cannot."""
    rig.bets()
    rig.shuffle()
    rig.inject(FaultSpec(fault))
    rig.shuffler.driver.dispense_hand()
    required = rig.wait(ev.SupervisorRequired)
    assert required.clause == PLAYER_SET2[rig.game] and "not_reconstructable" in required.options
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.NOT_RECONSTRUCTABLE))
    if rig.game != "rws-nc-three-pictures":
        voided = rig.wait(ev.RoundVoided)
        assert voided.clause == PLAYER_SET2[rig.game] and all_returned(voided)
        return
    removed = rig.wait(ev.HandRemoved)
    assert (removed.position, removed.clause) == ("1", "RWS-NC3P 5.9")
    rig.note("HandTaken")
    rig.hand()
    rig.hand()
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    size = 2 if fault is FaultKind.SET_OF_TWO else 4
    deck = shuffler_deck(1)
    assert list(settled.hands) == [("2", deck[size:size + 3]), ("dealer", deck[size + 3:size + 6])]
    # set of two: box 2 3D JH 4H (Single Picture Seven) beats 4C 2D 6H (Plain Two);
    # set of four: box 2 4H 4C 2D (Plain Zero) loses to 6H KC 6S (Single Picture Two).
    expected_box2 = ("win", 1000) if size == 2 else ("lose", -1000)
    assert results(settled) == {"w1": ("returned", 0), "w2": expected_box2}
    assert result_rules(settled)["w1"].startswith("RWS-NC3P 5.9")


DEALER_SET4 = {"rws-nc-three-pictures": ("supervisor", "RWS-NC3P 5.5.5"),
               "mbs-three-pictures": ("void", "MBS-3P 5.4"),
               "mbs-royal-three-pictures": ("supervisor", "MBS-R3P 5.4, 6.1"),
               "rws-three-card-poker": ("supervisor", "RWS-3CP 5.1.5")}


@pytest.mark.parametrize("fault", [FaultKind.SET_OF_TWO, FaultKind.SET_OF_FOUR])
@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_wrong_count_to_the_dealer_voids(rig: Rig, fault: FaultKind) -> None:
    """The dealer's set has two (or four) cards: void outright under MBS-3P 5.4; void unless a
    supervisor reconstructs under RWS-NC3P 5.5.5 and RWS-3CP 5.1.5 (and MBS-R3P 5.4 / 6.1)."""
    rig.bets()
    rig.shuffle()
    rig.hand()
    rig.hand()
    rig.inject(FaultSpec(fault))
    rig.shuffler.driver.dispense_hand()
    action, clause = DEALER_SET4[rig.game]
    ruled = rig.wait(ev.IrregularityRuled, lambda e: e.kind == "wrong_count_dealer")
    assert (ruled.action, ruled.clause) == (action, clause)
    if action == "supervisor":
        rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.NOT_RECONSTRUCTABLE))
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause.startswith(clause) and all_returned(voided)


@pytest.mark.parametrize("rig", ["rws-nc-three-pictures", "rws-three-card-poker"], indirect=True)
def test_dealer_set_of_four_reconstructed(rig: Rig) -> None:
    """RWS-NC3P 5.5.5 / RWS-3CP 5.1.5: "unless the cards can be reconstructed": the supervisor
    puts the dealer's hand back to its first three cards (1.13) and the round settles."""
    rig.bets()
    rig.shuffle()
    rig.hand()
    rig.hand()
    rig.inject(FaultSpec(FaultKind.SET_OF_FOUR))
    rig.shuffler.driver.dispense_hand()
    rig.wait(ev.SupervisorRequired)
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT,
                                   hands=(("dealer", parse_cards(["2D", "6H", "KC"])),)))
    rig.wait(ev.HandsMoved)
    rig.wait(ev.DealComplete)
    _assert_normal(rig, rig.finish())


EXPOSED = {"rws-nc-three-pictures": ("continue", "RWS-NC3P 5.10"),
           "mbs-three-pictures": ("supervisor", "MBS-3P (no clause; house: supervisor decides)"),
           "mbs-royal-three-pictures": ("continue", "MBS-R3P 5.8"),
           "rws-three-card-poker": ("continue", "RWS-3CP 5.1.2")}


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_one_exposed_card(rig: Rig) -> None:
    """The first set comes out with 2H face up. RWS-NC3P 5.10: used as the next card; MBS-R3P
    5.8: turned down, dealing continues (5.8.1 is for manual devices); RWS-3CP 5.1.2 voids only
    for two or more; MBS-3P has no clause: a supervisor lets it continue. The shuffler flags
    the card in the hand's exposed mask only, which blocks nothing (docs/protocols.md 5.4)."""
    rig.bets()
    rig.shuffle()
    rig.inject(FaultSpec(FaultKind.EXPOSED))
    rig.shuffler.driver.dispense_hand()
    action, clause = EXPOSED[rig.game]
    ruled = rig.wait(ev.IrregularityRuled, lambda e: e.kind == "exposed_card")
    assert (ruled.action, ruled.clause) == (action, clause)
    if action == "supervisor":
        rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
        rig.wait(ev.SupervisorDecided)
    rig.note("HandTaken")
    rig.hand()
    rig.hand()
    rig.wait(ev.DealComplete)
    _assert_normal(rig, rig.finish())
    assert len(rig.all(ev.IrregularityRuled)) == 1


@pytest.mark.parametrize("rig", ["rws-three-card-poker"], indirect=True)
def test_two_exposed_cards_void_3cp(rig: Rig) -> None:
    """RWS-3CP 5.1.2: two or more cards incorrectly exposed during the deal: void."""
    rig.bets()
    rig.shuffle()
    rig.inject(FaultSpec(FaultKind.EXPOSED))
    rig.hand()
    rig.shuffler.driver.clear_fault()
    rig.inject(FaultSpec(FaultKind.EXPOSED))
    rig.shuffler.driver.dispense_hand()
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause == "RWS-3CP 5.1.2" and all_returned(voided)


JAM = {"rws-nc-three-pictures": "RWS-NC3P 5.17", "mbs-three-pictures":
       "MBS-3P (no clause; house: supervisor decides)", "mbs-royal-three-pictures": "MBS-R3P 6.1",
       "rws-three-card-poker": "RWS-3CP (no clause; house: supervisor decides)"}


@pytest.mark.parametrize("rig", SHUFFLER_GAMES, indirect=True)
def test_jam_supervisor_continues(rig: Rig) -> None:
    """The shuffler jams after the first set. Only LIVE-3P has a jam clause (T&C 6); elsewhere
    the general provision gives it to a supervisor (RWS-NC3P 5.17, MBS-R3P 6.1; house rule for
    MBS-3P and RWS-3CP), who has it cleared: dealing continues with the same deck."""
    rig.bets()
    rig.shuffle()
    rig.hand()
    rig.inject(FaultSpec(FaultKind.JAM))
    required = rig.wait(ev.SupervisorRequired)
    assert (required.kind, required.clause) == ("jammed", JAM[rig.game])
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE, reason="jam cleared"))
    rig.wait(ev.SupervisorDecided)
    rig.shuffler.driver.clear_fault()
    rig.hand()
    rig.hand()
    rig.wait(ev.DealComplete)
    _assert_normal(rig, rig.finish())


@pytest.mark.parametrize("rig", ["rws-nc-three-pictures"], indirect=True)
def test_jam_supervisor_voids(rig: Rig) -> None:
    """The supervisor may instead void the round (RWS-NC3P 5.17): every wager returned."""
    rig.bets()
    rig.shuffle()
    rig.hand()
    rig.inject(FaultSpec(FaultKind.JAM))
    rig.wait(ev.SupervisorRequired)
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="cards damaged"))
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause == "RWS-NC3P 5.17" and all_returned(voided)
