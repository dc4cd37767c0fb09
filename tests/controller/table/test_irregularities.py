"""Every irregularity clause, on the machine alone, parametrized where games share it."""

from __future__ import annotations

import pytest

from controller.table import commands as cmd
from controller.table import events as ev
from drivers import events as dev
from tests.controller.table.conftest import (
    CASINO_GAMES,
    DEALER,
    LIVE_BURNS,
    SUPERVISOR,
    cards,
    standard_hands,
)

K = cmd.IrregularityKind
A = cmd.SupervisorAction


def _voided(table, clause: str) -> None:  # noqa: ANN001
    voided = table.last(ev.RoundVoided)
    assert table.state == "voided"
    assert clause in voided.clause
    assert {r.outcome.value for r in voided.settlement.results} == {"returned"}
    assert len(voided.settlement.results) == len(table.machine.wagers)


def _first_events(table, n: int):  # noqa: ANN001, ANN202
    hands = standard_hands(table.rules.id.value)
    burns = LIVE_BURNS if table.rules.id.value == "live-three-pictures" else ()
    return table.card_events(hands, burns)[:n]


FOREIGN = {"rws-nc-three-pictures": "RWS-NC3P 5.5.1", "mbs-three-pictures": "MBS-3P 5.1",
           "mbs-royal-three-pictures": "MBS-R3P 5.1", "rws-three-card-poker": "RWS-3CP 5.1.1"}
COUNT = {"rws-nc-three-pictures": "RWS-NC3P 5.5.2", "mbs-three-pictures": "MBS-3P 5.2",
         "mbs-royal-three-pictures": "MBS-R3P 5.1, 5.9", "rws-three-card-poker": "RWS-3CP 5.1.3"}


@pytest.mark.parametrize("game", CASINO_GAMES)
def test_foreign_card_voids(make, game) -> None:
    """A card not of the deck in use voids the round (RWS-NC3P 5.5.1, MBS-3P 5.1, MBS-R3P 5.1,
    RWS-3CP 5.1.1); all wagers are returned."""
    table = make(game)
    table.ready()
    table.send(_first_events(table, 1)[0])
    table.send(dev.ForeignCard(device="shuffler", barcode="999", deck_id="other"))
    _voided(table, FOREIGN[game])


@pytest.mark.parametrize("game", CASINO_GAMES)
def test_second_copy_of_a_card_voids(make, game) -> None:
    """A second copy of a card in the round is a card not of the set / an excess: void."""
    table = make(game, "shoe")
    table.ready()
    table.send(dev.CardRead(device="shoe", card=cards("AS")[0]))
    table.send(dev.CardRead(device="shoe", card=cards("AS")[0]))
    _voided(table, FOREIGN[game].split(" ")[0])
    assert table.last(ev.IrregularityRuled).kind == "duplicate_card"


@pytest.mark.parametrize("game", CASINO_GAMES)
def test_shuffler_count_mismatch_voids_and_blocks(make, game) -> None:
    """ShuffleDone(counted != expected) is a shortage/excess (RWS-NC3P 5.5.2, MBS-3P 5.2,
    MBS-R3P 5.1/5.9, RWS-3CP 5.1.3): void, and dealing stays blocked until the deck is
    replaced or counted."""
    table = make(game)
    table.open()
    table.default_bets()
    table.close()
    table.send(dev.ShuffleDone(device="shuffler", counted=51, expected=52))
    _voided(table, COUNT[game])
    assert table.last(ev.DeckBlocked).clause == COUNT[game]
    table.open()
    table.default_bets()
    table.close()
    out = table.send(cmd.ConfirmShuffle(**DEALER))
    assert isinstance(out[-1], ev.CommandRefused) and "blocked" in out[-1].reason
    table.send(dev.ShuffleDone(device="shuffler", counted=52, expected=52))
    assert table.state == "closed"
    table.send(cmd.ReplaceDeck(**DEALER))
    table.shuffle()
    assert table.state == "shuffled"


def test_manual_count_wrong_voids(make) -> None:
    """MBS-R3P 5.9: the dealer counts the cards; too many or too few voids the round."""
    table = make("mbs-royal-three-pictures")
    table.ready()
    table.send(cmd.DeckCounted(**DEALER, count=53))
    _voided(table, "MBS-R3P 5.1, 5.9")


@pytest.mark.parametrize("game,clause", [("rws-nc-three-pictures", "RWS-NC3P 5.5.3"),
                                         ("mbs-royal-three-pictures", "MBS-R3P 5.1")])
def test_cards_not_shuffled_void(make, game, clause) -> None:
    """A card dealt with no shuffle confirmed for this deck: void (RWS-NC3P 5.5.3,
    MBS-R3P 5.1)."""
    table = make(game, "shoe")
    table.open()
    table.default_bets()
    table.close()
    table.send(dev.CardRead(device="shoe", card=cards("AS")[0]))
    _voided(table, clause)


@pytest.mark.parametrize("game", ["mbs-three-pictures", "rws-three-card-poker",
                                  "live-three-pictures"])
def test_not_shuffled_without_clause_goes_to_supervisor(make, game) -> None:
    """MBS-3P, RWS-3CP and LIVE-3P have no clause for unshuffled cards: the round is held for a
    supervisor (general provision, documented)."""
    table = make(game)
    table.open()
    table.default_bets()
    table.close()
    table.send(dev.CardRead(device="shoe", card=cards("AS")[0]))
    assert table.state == "hold"
    assert "no clause" in table.last(ev.SupervisorRequired).clause
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="unshuffled"))
    assert table.state == "voided"


def test_wrong_set_count_to_player_removes_hand_rws(make) -> None:
    """RWS-NC3P 5.9: a player's hand with the wrong number of cards is removed and its bets
    returned when the cards cannot be reconstructed (supervisor says so); others settle."""
    table = make("rws-nc-three-pictures")
    table.ready()
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards("KS", "QH")))
    assert table.state == "hold"
    assert table.last(ev.SupervisorRequired).clause == "RWS-NC3P 5.9"
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.NOT_RECONSTRUCTABLE))
    assert table.last(ev.HandRemoved).position == "1"
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards("2D", "3C", "AH")))
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards("5S", "3H", "TC")))
    table.finish()
    results = {r.wager_id: r for r in table.last(ev.RoundSettled).settlement.results}
    assert results["w1"].outcome.value == "returned" and "5.9" in results["w1"].rule
    assert results["w2"].outcome.value == "lose"


def test_wrong_count_to_player_after_viewing_mbs_r3p(make) -> None:
    """MBS-R3P 5.5: noticed after the player viewed the hand, the hand is removed."""
    table = make("mbs-royal-three-pictures", "shoe")
    table.ready()
    table.deal(standard_hands("mbs-royal-three-pictures"))
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.WRONG_COUNT_PLAYER, position="2",
                                      handled=True))
    assert table.last(ev.HandRemoved).clause == "MBS-R3P 5.5"
    table.send(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.CONTINUE))  # 5.7
    table.finish()
    assert table.outcomes() == {"w1": "win", "w2": "returned"}


@pytest.mark.parametrize("game,clause", [("rws-nc-three-pictures", "RWS-NC3P 5.5.5"),
                                         ("rws-three-card-poker", "RWS-3CP 5.1.5")])
def test_wrong_count_to_dealer_void_unless_reconstructed(make, game, clause) -> None:
    """Wrong number of cards to the dealer: void unless reconstructable (RWS-NC3P 5.5.5,
    RWS-3CP 5.1.5)."""
    table = make(game)
    table.ready()
    hands = standard_hands(game)
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards(*hands["1"])))
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards(*hands["2"])))
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards(*hands["dealer"], "7D")))
    assert table.state == "hold" and table.last(ev.SupervisorRequired).clause == clause
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.NOT_RECONSTRUCTABLE))
    _voided(table, clause)


def test_wrong_count_to_dealer_reconstructed_continues(make) -> None:
    """RWS-NC3P 5.5.5: when the supervisor reconstructs the dealer's hand the round goes on."""
    table = make("rws-nc-three-pictures")
    table.ready()
    hands = standard_hands("rws-nc-three-pictures")
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards(*hands["1"])))
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards(*hands["2"])))
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards(*hands["dealer"], "7D")))
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT,
                                      hands=(("dealer", cards(*hands["dealer"])),)))
    table.finish()
    assert table.outcomes() == {"w1": "win", "w2": "lose"}


def test_wrong_count_to_dealer_mbs_3p_voids_outright(make) -> None:
    """MBS-3P 5.4: an incorrect number of cards to the Dealer's hand voids the round."""
    table = make("mbs-three-pictures")
    table.ready()
    hands = standard_hands("mbs-three-pictures")
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards(*hands["1"])))
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards(*hands["2"])))
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards("5S", "3H")))
    _voided(table, "MBS-3P 5.4")


DEALT_INCORRECTLY = {"rws-nc-three-pictures": "RWS-NC3P 5.5.4", "mbs-three-pictures": "MBS-3P 5.3",
                     "mbs-royal-three-pictures": "MBS-R3P 5.4",
                     "rws-three-card-poker": "RWS-3CP 5.1.4"}


@pytest.mark.parametrize("game", CASINO_GAMES)
def test_dealt_incorrectly_before_handling_void(make, game) -> None:
    """Dealt incorrectly, no player handled the cards: void unless reconstructable by moving
    complete hands (RWS-NC3P 5.5.4, MBS-3P 5.3, MBS-R3P 5.4, RWS-3CP 5.1.4)."""
    table = make(game)
    table.ready()
    table.send(_first_events(table, 1)[0])
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.DEALT_INCORRECTLY))
    assert table.last(ev.SupervisorRequired).clause == DEALT_INCORRECTLY[game]
    out = table.send(cmd.SupervisorDecision(**DEALER, action=A.VOID))
    assert isinstance(out[-1], ev.CommandRefused)
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.NOT_RECONSTRUCTABLE))
    _voided(table, DEALT_INCORRECTLY[game])


@pytest.mark.parametrize("game", CASINO_GAMES)
def test_dealt_incorrectly_reconstructed_by_moving_hands(make, game) -> None:
    """The supervisor confirms a reconstruction by moving complete hands: the round goes on with
    the moved hands (RWS-NC3P 5.5.4 and the same clause of each game)."""
    table = make(game)
    table.ready()
    events = _first_events(table, 2)
    for event in events:
        table.send(event)
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.DEALT_INCORRECTLY))
    out = table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT,
                                            moves=(("1", "2"), ("2", "1"))))
    assert any(isinstance(e, ev.HandsMoved) for e in out)
    table.send(table.card_events(standard_hands(game))[2])
    table.finish()
    assert table.outcomes()["w1"] == "lose" and table.outcomes()["w2"] == "win"


def test_dealt_incorrectly_after_handling_mbs_r3p_withdraw_option(make) -> None:
    """MBS-R3P 5.6-5.7: noticed after handling, the round is played to a conclusion and a
    dissatisfied player may withdraw the wager."""
    table = make("mbs-royal-three-pictures")
    table.ready()
    table.deal(standard_hands("mbs-royal-three-pictures"))
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.DEALT_INCORRECTLY))
    assert table.last(ev.PlayerOptionsOffered).clause == "MBS-R3P 5.6, 5.7"
    table.send(cmd.PlayerOption(**DEALER, position="2", option=cmd.Option.WITHDRAW))
    table.send(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.CONTINUE))
    table.finish()
    assert table.outcomes() == {"w1": "win", "w2": "returned"}


def test_other_dealing_error_rws_options(make) -> None:
    """RWS-NC3P 5.7: any other dealing error gives every player the option to continue or have
    the bet returned and the hand invalidated (5.7.3). The invalidated box receives no more
    cards: the rest go to box 2 and the dealer in order (3.12 deals only to boxes in play)."""
    table = make("rws-nc-three-pictures", "shoe")
    table.ready()
    events = table.card_events(standard_hands("rws-nc-three-pictures"))
    for event in events[:4]:
        table.send(event)
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.OTHER_DEALING_ERROR))
    assert table.state == "options"
    table.send(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.WITHDRAW))
    table.send(cmd.CloseOptions(**DEALER))
    assert table.state == "dealing"
    assert [s.position for s in table.machine.deal.plan[4:]] == ["2", "dealer", "2", "dealer"]
    for event in (*events[4:6], *events[7:]):  # events[6] was box 1's third card
        table.send(event)
    assert table.machine.deal.hands["1"] == list(cards("KS", "QH"))
    table.finish()
    results = {r.wager_id: r for r in table.last(ev.RoundSettled).settlement.results}
    assert results["w1"].outcome.value == "returned" and "5.7.3" in results["w1"].rule
    assert results["w2"].outcome.value == "lose"


def test_exposed_card_rws_used_as_next_card(make) -> None:
    """RWS-NC3P 5.10: a card found face up in the shoe is used as the next card."""
    table = make("rws-nc-three-pictures", "shoe")
    table.ready()
    events = table.card_events(standard_hands("rws-nc-three-pictures"))
    first = events[0]
    table.send(dev.CardRead(device="shoe", card=first.card, exposed=True))
    assert table.last(ev.IrregularityRuled).clause == "RWS-NC3P 5.10"
    for event in events[1:]:
        table.send(event)
    table.finish()
    assert table.outcomes() == {"w1": "win", "w2": "lose"}


def test_exposed_first_card_manual_mbs_r3p_voids(make) -> None:
    """MBS-R3P 5.8.1: the first card from a manual dealing device exposed: void."""
    table = make("mbs-royal-three-pictures", "shoe")
    table.ready()
    table.send(dev.CardRead(device="shoe", card=cards("KS")[0], exposed=True))
    _voided(table, "MBS-R3P 5.8.1")


def test_exposed_later_card_mbs_r3p_turned_down(make) -> None:
    """MBS-R3P 5.8: an exposed card is turned face down and dealing continues."""
    table = make("mbs-royal-three-pictures", "shoe")
    table.ready()
    events = table.card_events(standard_hands("mbs-royal-three-pictures"))
    table.send(events[0])
    table.send(dev.CardRead(device="shoe", card=events[1].card, exposed=True))
    assert table.last(ev.IrregularityRuled).clause == "MBS-R3P 5.8"
    assert table.state == "dealing"


def test_exposed_first_card_from_shuffler_mbs_r3p_continues(make) -> None:
    """MBS-R3P 5.8.1 applies to a manual device only: from a shuffler, dealing continues."""
    table = make("mbs-royal-three-pictures", "shuffler")
    table.ready()
    hands = standard_hands("mbs-royal-three-pictures")
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards(*hands["1"]),
                                    exposed=cards(hands["1"][0])))
    assert table.state == "dealing"


def test_two_exposed_cards_3cp_void(make) -> None:
    """RWS-3CP 5.1.2: two or more cards exposed during the deal void the round; one does not
    (no clause: a supervisor decides)."""
    table = make("rws-three-card-poker", "shoe")
    table.ready()
    events = table.card_events(standard_hands("rws-three-card-poker"))
    table.send(dev.CardRead(device="shoe", card=events[0].card, exposed=True))
    assert table.state == "hold" and table.of(ev.RoundVoided) == []
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
    table.send(dev.CardRead(device="shoe", card=events[1].card, exposed=True))
    _voided(table, "RWS-3CP 5.1.2")


def test_live_exposure_during_betting_voids(make) -> None:
    """LIVE-3P T&C 2: exposure of an in-game card while bets are offered voids the hand."""
    table = make("live-three-pictures")
    table.open()
    table.bet("p1", "win")
    table.send(dev.CardRead(device="shoe", card=cards("KS")[0], exposed=True))
    _voided(table, "LIVE-3P T&C 2")


def test_simultaneous_draw_rws_supervisor_orders_then_options(make) -> None:
    """RWS-NC3P 5.11: the Pit Supervisor decides which card comes first; it is a dealing error
    with the options of 5.7 (5.11.1)."""
    table = make("rws-nc-three-pictures", "shoe")
    table.ready()
    events = table.card_events(standard_hands("rws-nc-three-pictures"))
    table.send(dev.DoubleFeed(device="shoe"))
    table.send(events[1])
    table.send(events[0])
    assert table.state == "hold"
    out = table.send(cmd.SupervisorDecision(**DEALER, action=A.ORDER,
                                            cards=(events[0].card, events[1].card)))
    assert isinstance(out[-1], ev.CommandRefused)
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.ORDER,
                                      cards=(events[0].card, events[1].card)))
    assert table.state == "options"
    assert "5.7" in table.last(ev.PlayerOptionsOffered).clause
    assert [e.position for e in table.of(ev.CardAssigned)] == ["1", "2"]
    table.send(cmd.CloseOptions(**DEALER))
    for event in events[2:]:
        table.send(event)
    table.finish()
    assert table.outcomes() == {"w1": "win", "w2": "lose"}


def test_live_burn_error_before_p1_second_card_reconstructed(make) -> None:
    """LIVE-3P T&C 1: a burn error found before Player 1's second card is reconstructed."""
    table = make("live-three-pictures")
    table.ready()
    events = table.card_events(standard_hands("live-three-pictures"), LIVE_BURNS)
    for event in events[:5]:
        table.send(event)
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.BURN_ERROR))
    assert table.last(ev.SupervisorRequired).options == ("reconstruct",)
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT))
    for event in events[5:]:
        table.send(event)
    table.finish()
    assert table.state == "settled"


def test_live_burn_error_later_management_void(make) -> None:
    """LIVE-3P T&C 1: found after Player 1's second card, management may void the hand."""
    table = make("live-three-pictures")
    table.ready()
    events = table.card_events(standard_hands("live-three-pictures"), LIVE_BURNS)
    for event in events[:10]:
        table.send(event)
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.BURN_ERROR))
    assert set(table.last(ev.SupervisorRequired).options) == {"void", "continue"}
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="burn"))
    _voided(table, "LIVE-3P T&C 1")


def test_live_extra_flagged_burn_card_is_a_burn_error(make) -> None:
    """LIVE-3P T&C 1: a fifth card marked as a burn card by the shoe is a burn error."""
    table = make("live-three-pictures")
    table.ready()
    for code in [*LIVE_BURNS, "2S"]:
        table.send(dev.CardRead(device="shoe", card=cards(code)[0], burn=True))
    assert table.last(ev.IrregularityRuled).kind == "burn_error"
    assert table.state == "hold"


@pytest.mark.parametrize("exposed,state", [(True, "revealed"), (False, "voided")])
def test_live_dropped_card(make, exposed, state) -> None:
    """LIVE-3P T&C 4: a card dropped out of view during dealing is reused only if it was
    exposed first; otherwise the hand is voided."""
    table = make("live-three-pictures")
    table.ready()
    events = table.card_events(standard_hands("live-three-pictures"), LIVE_BURNS)
    for event in events[:6]:
        table.send(event)
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.DROPPED_CARD,
                                      exposed_before_drop=exposed))
    for event in events[6:]:
        table.send(event)
    assert table.state == state
    if state == "voided":
        _voided(table, "LIVE-3P T&C 4")


def test_live_reversed_sequence_swaps_p1_and_p3(make) -> None:
    """LIVE-3P T&C 5: the whole hand dealt P3 -> P2 -> P1 -> Banker; settlement swaps the
    results of P1 and P3, i.e. P1's bets take the first-dealt cards (the intended P1 hand),
    which the controller records by sequence."""
    table = make("live-three-pictures")
    table.ready()
    table.deal(standard_hands("live-three-pictures"), LIVE_BURNS)
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.REVERSED_SEQUENCE))
    swap = table.last(ev.ResultsSwapped)
    assert (swap.first, swap.second, swap.clause) == ("p1", "p3", "LIVE-3P T&C 5")
    table.finish()
    assert table.outcomes()["w1"] == "win"


def test_live_card_after_game_ignored(make) -> None:
    """LIVE-3P T&C 3: unnecessary cards drawn after the game do not affect the result."""
    table = make("live-three-pictures")
    table.ready()
    table.deal(standard_hands("live-three-pictures"), LIVE_BURNS)
    table.send(dev.CardRead(device="shoe", card=cards("2C")[0]))
    assert table.last(ev.CardIgnored).clause == "LIVE-3P T&C 3"
    table.finish()
    assert table.outcomes() == {"w1": "win", "w2": "lose", "w3": "win"}


def test_live_jammed_shuffler_management_void(make) -> None:
    """LIVE-3P T&C 6: cards jammed in the shuffler: management may void the ongoing hand."""
    table = make("live-three-pictures")
    table.ready()
    table.send(dev.FaultRaised(device="shuffler", fault=dev.Fault.JAM))
    assert table.last(ev.SupervisorRequired).clause == "LIVE-3P T&C 6"
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="jam"))
    _voided(table, "LIVE-3P T&C 6")


def test_interruption_without_outcome_rws_voids(make) -> None:
    """RWS-NC3P 5.4.2: a technical interruption (device offline) with no outcome established
    voids the round."""
    table = make("rws-nc-three-pictures", "shoe")
    table.ready()
    table.send(table.card_events(standard_hands("rws-nc-three-pictures"))[0])
    table.send(dev.DeviceOffline(device="shoe", reason="cable"))
    assert table.last(ev.OutcomeEstablished).established is False
    _voided(table, "RWS-NC3P 5.4.2")


def test_interruption_with_outcome_rws_continues(make) -> None:
    """RWS-NC3P 5.4.1: with an outcome established (a Three Pictures bet already lost on a
    numeral card) play continues to a conclusion."""
    table = make("rws-nc-three-pictures", "shoe")
    table.open()
    table.bet("1", "main")
    table.bet("1", "three_pictures", 500)
    table.close()
    table.shuffle()
    events = table.card_events({"1": ["9C", "KS", "QH"], "dealer": ["5S", "3H", "TC"]})
    table.send(events[0])
    table.send(dev.DeviceOffline(device="shoe", reason="cable"))
    established = table.last(ev.OutcomeEstablished)
    assert established.established and ("w2", "lose") in [(w, o.value)
                                                          for w, o in established.decided]
    assert table.state == "dealing"
    for event in events[1:]:
        table.send(event)
    table.finish()
    assert table.outcomes() == {"w1": "win", "w2": "lose"}


def test_power_failure_mbs_r3p_players_may_withdraw_all(make) -> None:
    """MBS-R3P 5.13.1: no outcome established: players may withdraw, all their wagers; the
    round then concludes."""
    table = make("mbs-royal-three-pictures", "shoe")
    table.open()
    table.bet("1", "main", player="alice")
    table.bet("1", "tie", 100, player="alice")
    table.bet("2", "main", player="bob")
    table.close()
    table.shuffle()
    events = table.card_events({"1": ["KS", "QH", "9C"], "2": ["2D", "3C", "AH"],
                                "dealer": ["5S", "3H", "TC"]})
    table.send(events[0])
    table.send(dev.DeviceRebooted(device="shoe"))
    assert table.last(ev.PlayerOptionsOffered).clause == "MBS-R3P 5.13.1"
    out = table.send(cmd.PlayerOption(**DEALER, position="1", player="alice",
                                      option=cmd.Option.WITHDRAW))
    taken = [e for e in out if isinstance(e, ev.PlayerOptionTaken)][0]
    assert set(taken.wager_ids) == {"w1", "w2"}
    table.send(cmd.PlayerOption(**DEALER, position="2", option=cmd.Option.CONTINUE))
    for event in events[1:]:
        table.send(event)
    table.finish()
    assert table.outcomes() == {"w3": "lose", "w1": "returned", "w2": "returned"}


@pytest.mark.parametrize("game", ["mbs-three-pictures", "rws-three-card-poker",
                                  "live-three-pictures"])
def test_interruption_without_clause_supervisor(make, game) -> None:
    """MBS-3P, RWS-3CP and LIVE-3P print no interruption clause: a supervisor decides (once a
    card is dealt; before it nothing is affected: test_conditions.py)."""
    table = make(game)
    table.ready()
    first = _first_events(table, 1)[0]
    table.send(first)
    table.send(dev.DeviceOffline(device="shuffler"))
    assert table.state == "hold"
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
    assert table.state in ("dealing", "burn")


@pytest.mark.parametrize("game", CASINO_GAMES + ["live-three-pictures"])
def test_error_noticed_after_next_round_changes_nothing(make, game) -> None:
    """RWS-NC3P 5.6/5.12, MBS-3P 5.1.2, MBS-R3P 5.1.2/5.12, RWS-3CP 5.1.1: an error of an
    earlier round reported during the next round leaves the settled round as it stands."""
    table = make(game)
    table.ready()
    table.deal(standard_hands(game), LIVE_BURNS if game.startswith("live") else ())
    table.finish()
    settled = table.last(ev.RoundSettled)
    table.open()
    out = table.send(cmd.ReportIrregularity(**DEALER, kind=K.DEALT_INCORRECTLY, round_number=1))
    assert out[-1].action == "stands"
    assert table.state == "betting"
    assert table.of(ev.RoundSettled) == [settled]


def test_no_read_supervisor_enters_card(make) -> None:
    """A card the reader missed (no clause in any rule set): a supervisor enters it."""
    table = make("rws-nc-three-pictures", "shoe")
    table.ready()
    events = table.card_events(standard_hands("rws-nc-three-pictures"))
    table.send(dev.NoRead(device="shoe"))
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.ORDER, cards=(events[0].card,)))
    for event in events[1:]:
        table.send(event)
    table.finish()
    assert table.outcomes() == {"w1": "win", "w2": "lose"}


def test_management_void_any_time(make) -> None:
    """A supervisor may void at any point of a round, with a reason and a clause."""
    table = make("live-three-pictures")
    table.ready()
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="studio fault",
                                      clause="LIVE-3P T&C 5"))
    _voided(table, "LIVE-3P T&C 5")
