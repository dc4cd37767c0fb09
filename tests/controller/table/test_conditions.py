"""The conditions the irregularity clauses attach (issue 12): phase, source, number of cards,
to whom, and whether an outcome is established. Each test fails if its condition is ignored."""

from __future__ import annotations

import pytest

from controller.service.protocol import VERBS
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
FACE_UP = dev.FaultRaised(device="shuffler", fault=dev.Fault.EXPOSED_CARD,
                          detail="card found face up while shuffling")


def _dealt(make, game: str, device: str | None = None):  # noqa: ANN001, ANN202
    table = make(game, device)
    table.ready()
    table.deal(standard_hands(game), LIVE_BURNS if game.startswith("live") else ())
    return table


def _ruled(table):  # noqa: ANN001, ANN202
    ruled = table.last(ev.IrregularityRuled)
    return ruled.action, ruled.clause


# -- 1. RWS-NC3P 5.10 (found in the device) vs 5.7 (exposed by the dealer) ------------------

@pytest.mark.parametrize("after_deal", [False, True])
def test_rws_card_exposed_by_the_dealer_gives_the_options_of_5_7(make, after_deal) -> None:
    """RWS-NC3P 5.7: a card the dealer exposes (while dealing or after the deal) is a dealing
    error not described in 5.5 or 5.9: every player may take the bet back (5.7.3). Only a card
    *found* face up in the shoe or shuffler is used as the next card (5.10)."""
    table = make("rws-nc-three-pictures", "shuffler")
    table.ready()
    box_1, box_2, dealer = table.card_events(standard_hands("rws-nc-three-pictures"))
    sent = [box_1, box_2, dealer] if after_deal else [box_1]
    for event in sent:
        table.send(event)
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.EXPOSED_CARD, source=cmd.Source.DEALER))
    assert _ruled(table) == ("player_options", "RWS-NC3P 5.7")
    assert table.state == "options"
    table.send(cmd.PlayerOption(**DEALER, position="2", option=cmd.Option.WITHDRAW))
    table.send(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.CONTINUE))
    if not after_deal:  # box 2's hand is invalidated: the next set is the dealer's
        table.send(dealer)
    table.finish()
    settled = table.last(ev.RoundSettled).settlement
    rules = {r.wager_id: (r.outcome.value, r.rule) for r in settled.results}
    assert rules["w1"][0] == "win" and rules["w2"] == ("returned", "RWS-NC3P 5.7.3")


def test_rws_card_found_in_the_device_is_the_next_card(make) -> None:
    """RWS-NC3P 5.10: the same report with the card found face up in the shoe: no options, the
    card is used as the next card."""
    table = make("rws-nc-three-pictures", "shoe")
    table.ready()
    table.send(table.card_events(standard_hands("rws-nc-three-pictures"))[0])
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.EXPOSED_CARD, source=cmd.Source.DEVICE))
    assert _ruled(table) == ("continue", "RWS-NC3P 5.10") and table.state == "dealing"


def test_a_card_drawn_during_betting_is_the_tables_to_see_not_a_persons_to_report(
        make) -> None:
    """One ``Source`` for where an exposed card was seen: ``drawn`` (LIVE-3P T&C 2) is what
    the table sees itself, so a report naming it is refused by name and nothing is ruled; the
    protocol's and the CLI's choices are the reported sources only."""
    table = make("rws-nc-three-pictures", "shoe")
    table.ready()
    before = table.state
    out = table.send(cmd.ReportIrregularity(**DEALER, kind=K.EXPOSED_CARD,
                                            source=cmd.Source.DRAWN))
    assert isinstance(out[-1], ev.CommandRefused) and "'drawn'" in out[-1].reason
    assert table.state == before and not any(isinstance(e, ev.IrregularityRuled) for e in out)
    assert [s.value for s in cmd.REPORTED_SOURCES] == ["device", "dealer"]
    source = next(a for a in VERBS["irregularity.report"].args if a.name == "source")
    assert source.choices == ("device", "dealer")


@pytest.mark.parametrize(("answer", "expected"), [
    (A.IN_DEVICE, ("continue", "RWS-NC3P 5.10", "dealing")),
    (A.BY_DEALER, ("player_options", "RWS-NC3P 5.7", "options"))])
def test_rws_exposure_of_unknown_source_asks_the_supervisor_where(make, answer,
                                                                   expected) -> None:
    """Where the card was seen is a fact the table cannot know from a bare report: the round is
    held and the supervisor is asked exactly that (options: in the device, by the dealer)."""
    table = make("rws-nc-three-pictures", "shoe")
    table.ready()
    table.send(table.card_events(standard_hands("rws-nc-three-pictures"))[0])
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.EXPOSED_CARD))
    assert table.state == "hold"
    assert table.last(ev.SupervisorRequired).options == ("in_device", "by_dealer")
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=answer))
    action, clause, state = expected
    assert _ruled(table) == (action, clause) and table.state == state


def test_rws_face_up_fault_while_bets_are_offered_is_ruled_5_10(make) -> None:
    """RWS-NC3P 5.10: the shuffler's exposed-card fault bit (a card found face up inside it,
    outside a formed hand) during betting is ruled, not only logged: used as the next card."""
    table = make("rws-nc-three-pictures")
    table.open()
    table.default_bets()
    table.send(FACE_UP)
    assert _ruled(table) == ("continue", "RWS-NC3P 5.10") and table.state == "betting"


# -- 2. RWS-3CP 5.1.2: two or more exposed DURING THE DEAL -----------------------------------

def test_3cp_two_exposures_after_the_deal_do_not_void(make) -> None:
    """RWS-3CP 5.1.2 voids for two or more cards exposed *during the deal*; after the deal it
    has no clause and a supervisor decides (house rule)."""
    table = _dealt(make, "rws-three-card-poker", "shoe")
    for _ in range(2):
        table.send(cmd.ReportIrregularity(**DEALER, kind=K.EXPOSED_CARD,
                                          source=cmd.Source.DEALER))
        assert table.state == "hold" and table.of(ev.RoundVoided) == []
        assert "no clause" in table.last(ev.SupervisorRequired).clause
        table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
    assert table.state == "decisions"


def test_3cp_one_exposed_card_during_the_deal_goes_to_a_supervisor(make) -> None:
    """RWS-3CP 5.1.2 voids only for two or more: one exposed card has no clause, so a supervisor
    decides (the project's rule for a case with no clause); a second one during the deal then
    voids."""
    table = make("rws-three-card-poker", "shoe")
    table.ready()
    events = table.card_events(standard_hands("rws-three-card-poker"))
    table.send(dev.CardRead(device="shoe", card=events[0].card, exposed=True))
    assert table.state == "hold" and "no clause" in table.last(ev.SupervisorRequired).clause
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
    table.send(dev.CardRead(device="shoe", card=events[1].card, exposed=True))
    assert table.last(ev.RoundVoided).clause == "RWS-3CP 5.1.2"


def test_3cp_one_exposure_in_the_deal_and_one_after_do_not_void(make) -> None:
    """Only exposures during the deal count toward 5.1.2's two."""
    table = make("rws-three-card-poker", "shoe")
    table.ready()
    events = table.card_events(standard_hands("rws-three-card-poker"))
    table.send(dev.CardRead(device="shoe", card=events[0].card, exposed=True))
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
    for event in events[1:]:
        table.send(event)
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.EXPOSED_CARD, source=cmd.Source.DEALER))
    assert table.of(ev.RoundVoided) == [] and table.state == "hold"


def test_3cp_two_exposed_in_one_set_void(make) -> None:
    """Two exposed cards in one dispensed set are two exposures during the deal: void."""
    table = make("rws-three-card-poker")
    table.ready()
    first = cards("AS", "AH", "2C")
    table.send(dev.CardSetDispensed(device="shuffler", cards=first, exposed=first[:2]))
    assert table.last(ev.RoundVoided).clause == "RWS-3CP 5.1.2"


def test_mbs_r3p_exposure_outside_the_deal_is_not_5_8(make) -> None:
    """MBS-R3P 5.8 is about an exposed card *dealt* ("turn the card face down and continue
    dealing"); a card exposed after the deal is not provided for: 6.1, a supervisor decides."""
    table = _dealt(make, "mbs-royal-three-pictures", "shoe")
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.EXPOSED_CARD, source=cmd.Source.DEALER))
    assert table.last(ev.SupervisorRequired).clause == "MBS-R3P 6.1"


# -- 3. MBS-R3P 5.7 after 5.5 ---------------------------------------------------------------

def test_mbs_r3p_wrong_count_after_viewing_offers_withdrawal(make) -> None:
    """MBS-R3P 5.5 removes the hand; 5.7 lets any player dissatisfied with 5.5 withdraw: the
    other players are offered the option, and a withdrawal is returned under 5.7."""
    table = _dealt(make, "mbs-royal-three-pictures", "shoe")
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.WRONG_COUNT_PLAYER, position="2",
                                      handled=True))
    assert table.last(ev.HandRemoved).clause == "MBS-R3P 5.5"
    offered = table.last(ev.PlayerOptionsOffered)
    assert (offered.clause, offered.positions) == ("MBS-R3P 5.7", ("1",))
    table.send(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.WITHDRAW))
    table.finish()
    settled = table.last(ev.RoundSettled).settlement
    assert {r.wager_id: (r.outcome.value, r.rule) for r in settled.results} == {
        "w1": ("returned", "MBS-R3P 5.7"), "w2": ("returned", "MBS-R3P 5.5")}


# -- 4. reconstruction by moving complete hands ---------------------------------------------

@pytest.mark.parametrize("game", CASINO_GAMES)
def test_reconstruction_other_than_moving_complete_hands_is_refused(make, game) -> None:
    """RWS-NC3P 5.5.4, MBS-3P 5.3, MBS-R3P 5.4, RWS-3CP 5.1.4: the void is avoided only by
    moving complete hands. ``hands`` that mix cards of two hands are refused with the clause;
    the same hands swapped whole are accepted."""
    table = make(game)
    table.ready()
    events = table.card_events(standard_hands(game))
    table.send(events[0])
    table.send(events[1])
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.DEALT_INCORRECTLY))
    one, two = table.machine.deal.hands["1"], table.machine.deal.hands["2"]
    mixed = (("1", (one[0], one[1], two[2])), ("2", (two[0], two[1], one[2])))
    out = table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT, hands=mixed))
    refused = out[-1]
    assert isinstance(refused, ev.CommandRefused) and "complete hands" in refused.reason
    assert table.last(ev.SupervisorRequired).clause in refused.reason
    assert table.state == "hold"
    swapped = (("1", tuple(two)), ("2", tuple(one)))
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT, hands=swapped))
    assert table.state == "dealing" and table.machine.deal.hands["1"] == list(two)


# -- 5. MBS-R3P 5.13.1: a player withdraws all his wagers -----------------------------------

def test_mbs_r3p_power_failure_withdrawal_takes_every_wager_of_the_player(make) -> None:
    """MBS-R3P 5.13.1: "A Player taking the option to withdraw must withdraw all his wagers":
    a withdrawal at box 1 (no player named) takes the player's wagers at box 3 too."""
    table = make("mbs-royal-three-pictures", "shoe")
    table.open()
    table.bet("1", "main", player="alice")
    table.bet("2", "main", player="bob")
    table.bet("3", "main", player="alice")
    table.close()
    table.shuffle()
    hands = {"1": ["KS", "QH", "9C"], "2": ["2D", "3C", "AH"], "3": ["4S", "4H", "TD"],
             "dealer": ["5S", "3H", "TC"]}
    events = table.card_events(hands)
    table.send(events[0])
    table.send(dev.DeviceOffline(device="shoe", reason="power"))
    assert table.last(ev.PlayerOptionsOffered).clause == "MBS-R3P 5.13.1"
    out = table.send(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.WITHDRAW))
    taken = next(e for e in out if isinstance(e, ev.PlayerOptionTaken))
    assert set(taken.wager_ids) == {"w1", "w3"}
    table.send(cmd.PlayerOption(**DEALER, position="2", option=cmd.Option.CONTINUE))
    assert table.state == "dealing"
    table.send(dev.DeviceOnline(device="shoe"))
    for event in events[1:]:
        table.send(event)
    table.finish()
    assert table.outcomes() == {"w2": "lose", "w1": "returned", "w3": "returned"}


def test_mbs_r3p_withdrawal_at_a_box_of_two_players_names_the_player(make) -> None:
    """A box holding two players' wagers: 5.13.1 is a player's option, so the player must be
    named; the refusal says so and nothing is withdrawn."""
    table = make("mbs-royal-three-pictures", "shoe")
    table.open()
    table.bet("1", "main", player="alice")
    table.bet("1", "main", player="carol")
    table.close()
    table.shuffle()
    table.send(dev.CardRead(device="shoe", card=cards("KS")[0]))
    table.send(dev.DeviceOffline(device="shoe", reason="power"))
    out = table.send(cmd.PlayerOption(**DEALER, position="1", option=cmd.Option.WITHDRAW))
    assert isinstance(out[-1], ev.CommandRefused) and "name the player" in out[-1].reason
    assert table.machine.withdrawn == {}


# -- 6. RWS-NC3P 5.4 vs 5.17 for a jam --------------------------------------------------------

def test_rws_jam_asks_whether_it_stops_the_round(make) -> None:
    """RWS-NC3P 5.4: a jam is a technical interruption only if it affects the continuation of
    the round, which the table cannot know: the supervisor is asked exactly that. "interrupts"
    with no outcome established voids (5.4.2); "continue" (cleared) deals on."""
    table = make("rws-nc-three-pictures")
    table.ready()
    table.send(table.card_events(standard_hands("rws-nc-three-pictures"))[0])
    table.send(dev.FaultRaised(device="shuffler", fault=dev.Fault.JAM, detail="jam"))
    required = table.last(ev.SupervisorRequired)
    assert (required.clause, required.options) == ("RWS-NC3P 5.4, 5.17",
                                                   ("continue", "interrupts"))
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.INTERRUPTS))
    assert table.last(ev.RoundVoided).clause == "RWS-NC3P 5.4.2"


def test_rws_jam_with_an_outcome_established_continues(make) -> None:
    """RWS-NC3P 5.4.1: with an outcome established play continues whether or not the jam stops
    the round: nothing to ask."""
    table = make("rws-nc-three-pictures")
    table.open()
    table.bet("1", "main")
    table.bet("1", "three_pictures", 500)
    table.close()
    table.shuffle()
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards("9C", "KS", "QH")))
    table.send(dev.FaultRaised(device="shuffler", fault=dev.Fault.JAM, detail="jam"))
    assert _ruled(table) == ("continue", "RWS-NC3P 5.4.1") and table.state == "dealing"


# -- 7. before the first card: offline and reboot alike --------------------------------------

BEFORE_FIRST_CARD = {"rws-nc-three-pictures": ("void", "RWS-NC3P 5.4.2"),
                     "mbs-royal-three-pictures": ("player_options", "MBS-R3P 5.13.1"),
                     "mbs-three-pictures": ("supervisor",
                                            "MBS-3P (no clause; house: supervisor decides)"),
                     "rws-three-card-poker": ("supervisor",
                                              "RWS-3CP (no clause; house: supervisor decides)")}


@pytest.mark.parametrize("game", CASINO_GAMES)
@pytest.mark.parametrize("event", [dev.DeviceOffline(device="shuffler", reason="unplugged"),
                                   dev.DeviceRebooted(device="shuffler", old_boot_id=1,
                                                      new_boot_id=2)],
                         ids=["offline", "reboot"])
def test_offline_and_reboot_before_the_first_card_are_ruled_alike(make, game, event) -> None:
    """RWS-NC3P 5.4.2 (and MBS-R3P 5.13.1, and the supervisor elsewhere) after "No more bets",
    before the first card: a shuffler going offline and one rebooting are the same technical
    interruption; the reboot also loses the shuffle (the round waits for a new one)."""
    table = make(game)
    table.ready()
    table.send(event)
    ruled = table.last(ev.IrregularityRuled)
    assert (ruled.kind, (ruled.action, ruled.clause)) == ("interruption",
                                                          BEFORE_FIRST_CARD[game])
    if ruled.action == "void":
        assert table.state == "voided"


# -- 8. LIVE-3P T&C 2 and exposure faults outside the deal ----------------------------------

def test_live_exposure_during_shuffling_goes_to_management(make) -> None:
    """LIVE-3P T&C 2, second bullet: a card found face up in the shuffler (the device's fault
    bit: during shuffling, not a card drawn) is for management to decide by the stage of
    shuffling and the number of cards; the hold names the count."""
    table = make("live-three-pictures")
    table.ready()
    table.send(FACE_UP)
    required = table.last(ev.SupervisorRequired)
    assert required.clause == "LIVE-3P T&C 2" and set(required.options) == {"void", "continue"}
    assert "1 card" in table.last(ev.IrregularityRuled).note


def test_live_card_drawn_while_bets_are_offered_still_voids(make) -> None:
    """LIVE-3P T&C 2, first bullet, unchanged: a card drawn while bets are offered voids."""
    table = make("live-three-pictures")
    table.open()
    table.bet("p1", "win")
    table.send(dev.CardRead(device="shoe", card=cards("KS")[0]))
    assert table.last(ev.RoundVoided).clause == "LIVE-3P T&C 2"


@pytest.mark.parametrize("game", ["mbs-three-pictures", "mbs-royal-three-pictures",
                                  "rws-three-card-poker"])
def test_face_up_fault_while_bets_are_offered_is_ruled(make, game) -> None:
    """A device exposure fault during betting, with no card read, is ruled: no clause covers a
    card found face up inside the shuffler in these games, so a supervisor decides."""
    table = make(game)
    table.open()
    table.default_bets()
    table.send(FACE_UP)
    assert table.state == "hold" and table.last(ev.SupervisorRequired).kind == "exposed_card"


# -- also: after settlement -----------------------------------------------------------------

@pytest.mark.parametrize(("game", "kind", "clause"), [
    ("rws-nc-three-pictures", K.WRONG_COUNT_PLAYER, "RWS-NC3P 5.9"),
    ("rws-nc-three-pictures", K.WRONG_COUNT_DEALER, "RWS-NC3P 5.5.5"),
    ("rws-three-card-poker", K.WRONG_COUNT_DEALER, "RWS-3CP 5.1.5")])
def test_correction_after_settlement_asks_whether_reconstructable(make, game, kind,
                                                                  clause) -> None:
    """RWS-NC3P 5.9 / 5.5.5 and RWS-3CP 5.1.5 correct a settled round only if "the cards cannot
    be Reconstructed": the supervisor is asked; reconstructable, the settlement (made on the
    recorded sequence) stands, and the next round may not open while the question is open."""
    table = _dealt(make, game)
    table.finish()
    before = table.machine.last_settlement
    table.send(cmd.ReportIrregularity(**SUPERVISOR, kind=kind, position="1"))
    required = table.last(ev.SupervisorRequired)
    assert (required.clause, required.options) == (clause,
                                                   ("reconstruct", "not_reconstructable"))
    assert table.of(ev.SettlementCorrected) == []
    assert isinstance(table.send(cmd.OpenRound(**DEALER))[-1], ev.CommandRefused)
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT))
    assert table.state == "settled" and table.machine.last_settlement is before
    assert table.last(ev.IrregularityRuled).action == "stands"
    table.open()
    assert table.state == "betting"


def test_mbs_3p_dealer_count_after_settlement_cites_the_round_definition(make) -> None:
    """MBS-3P 5.4 has no "before the next round" proviso and the round concluded at settlement
    (MBS-3P 1.1.4): it stands, citing that, not the foreign-card clause 5.1.2."""
    table = _dealt(make, "mbs-three-pictures")
    table.finish()
    table.send(cmd.ReportIrregularity(**SUPERVISOR, kind=K.WRONG_COUNT_DEALER))
    assert _ruled(table) == ("stands", "MBS-3P 1.1.4, 5.4")


# -- the remaining rows of the matrix: their phase conditions --------------------------------

def test_deck_count_while_bets_are_offered_blocks_without_voiding(make) -> None:
    """A shortage or excess found while bets are offered: nothing dealt from the deck yet, so it
    is blocked until counted or replaced and the round is not void (RWS-NC3P 5.5.2 voids a
    round dealt from such a deck)."""
    table = make("rws-nc-three-pictures")
    table.open()
    table.default_bets()
    table.send(dev.ShuffleDone(device="shuffler", counted=51, expected=52))
    assert table.state == "betting" and table.of(ev.RoundVoided) == []
    assert table.last(ev.DeckBlocked).clause == "RWS-NC3P 5.5.2"


def test_live_dropped_card_outside_the_deal_is_reused(make) -> None:
    """LIVE-3P T&C 4: a card that falls out of view during burning is picked up and reused,
    exposed or not; only during dealing does an unexposed drop void the hand."""
    table = make("live-three-pictures")
    table.ready()
    events = table.card_events(standard_hands("live-three-pictures"), LIVE_BURNS)
    table.send(events[0])
    assert table.state == "burn"
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.DROPPED_CARD, exposed_before_drop=False))
    assert _ruled(table) == ("continue", "LIVE-3P T&C 4") and table.state == "burn"


def test_live_reversed_sequence_found_during_the_deal_is_reconstructed(make) -> None:
    """LIVE-3P T&C 5: the results are swapped only for a whole hand dealt P3 -> P1; found
    during the deal (before submission) the cards are reconstructed: a supervisor hold."""
    table = make("live-three-pictures")
    table.ready()
    events = table.card_events(standard_hands("live-three-pictures"), LIVE_BURNS)
    for event in events[:6]:
        table.send(event)
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.REVERSED_SEQUENCE))
    assert table.state == "hold" and table.of(ev.ResultsSwapped) == []
    assert set(table.last(ev.SupervisorRequired).options) == {"reconstruct", "void"}


def test_card_after_the_deal_is_held_and_outside_a_round_is_ignored(make) -> None:
    """RWS-NC3P has no clause for a card drawn after the deal: 5.17, a supervisor decides; with
    no round in progress the card is simply not used."""
    table = _dealt(make, "rws-nc-three-pictures", "shoe")
    table.send(dev.CardRead(device="shoe", card=cards("2C")[0]))
    assert table.state == "hold" and table.last(ev.SupervisorRequired).clause == "RWS-NC3P 5.17"
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
    table.finish()
    table.send(dev.CardRead(device="shoe", card=cards("3C")[0]))
    assert table.last(ev.CardIgnored).clause == "RWS-NC3P 5.17" and table.state == "settled"


def test_after_settlement_reconstruction_takes_no_hands(make) -> None:
    """Reconstructable after settlement means the recorded (intended) sequence: hands given
    with the answer are refused and the round stays held."""
    table = _dealt(make, "rws-nc-three-pictures")
    table.finish()
    table.send(cmd.ReportIrregularity(**SUPERVISOR, kind=K.WRONG_COUNT_DEALER))
    hands = (("dealer", tuple(table.machine.deal.hands["dealer"])),)
    out = table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.RECONSTRUCT, hands=hands))
    assert isinstance(out[-1], ev.CommandRefused) and table.state == "hold"


def test_the_new_facts_survive_the_journal() -> None:
    """A report's source and a supervisor's answer are inputs the journal records and a replay
    feeds back unchanged."""
    from controller.journal.codec import decode_input, encode_input
    for item in (cmd.ReportIrregularity(**DEALER, kind=K.EXPOSED_CARD, source=cmd.Source.DEALER),
                 cmd.SupervisorDecision(**SUPERVISOR, action=A.INTERRUPTS),
                 cmd.SupervisorDecision(**SUPERVISOR, action=A.IN_DEVICE)):
        assert decode_input(*encode_input(item)) == item


@pytest.mark.parametrize(("game", "expected"), [
    ("rws-nc-three-pictures", ("continue", "RWS-NC3P 5.10", "betting")),
    ("mbs-three-pictures", ("supervisor", "MBS-3P (no clause; house: supervisor decides)",
                            "hold"))])
def test_face_up_while_shuffling_between_rounds_is_ruled_in_the_next_round(make, game,
                                                                          expected) -> None:
    """The shuffler finds a card face up while it shuffles for the next round (no round open):
    the fault is kept and ruled as the round it belongs to opens, not only logged."""
    table = make(game)
    table.send(FACE_UP)
    assert table.of(ev.IrregularityRuled) == []
    assert "next round" in table.last(ev.DeviceNoted).detail
    assert not table.machine.only_memory_carries_over()
    table.open()
    ruled = table.last(ev.IrregularityRuled)
    assert (ruled.action, ruled.clause, table.state) == expected and ruled.round == 1


def test_rws_exposure_after_the_reveal_changes_nothing(make) -> None:
    """Before the reveal a card the dealer exposes gives the 5.7 options; after it every hand is
    face up, so no player is offered to take a bet back on a known result."""
    table = _dealt(make, "rws-nc-three-pictures")
    table.send(cmd.RevealDealer(**DEALER))
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.EXPOSED_CARD, source=cmd.Source.DEALER))
    assert _ruled(table)[0] == "continue" and table.state == "revealed"
    assert table.of(ev.PlayerOptionsOffered) == []


@pytest.mark.parametrize("game, device, kind", [
    ("rws-nc-three-pictures", "shoe", K.EXPOSED_CARD),  # 5.10 or 5.7: where was it seen?
    ("rws-nc-three-pictures", "shuffler", K.JAMMED),  # 5.4 or 5.17: does the jam stop it?
])
def test_a_supervisor_may_void_a_round_held_on_a_question_of_fact(  # noqa: ANN001
        make, game: str, device: str, kind: cmd.IrregularityKind) -> None:
    """A hold that asks a fact offers only the answers, yet a pit supervisor can always void a
    round in progress (issue 22): the void is accepted, under the game's general provision
    (RWS-NC3P 5.17) unless the supervisor names another clause, and every wager is returned."""
    table = make(game, device)
    table.ready()
    table.send(table.card_events(standard_hands(game))[0])
    table.send(cmd.ReportIrregularity(**DEALER, kind=kind))
    held = table.last(ev.SupervisorRequired)
    assert table.state == "hold" and "void" not in held.options
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.VOID,
                                      reason="camera unclear"))
    voided = table.last(ev.RoundVoided)
    assert table.state == "voided" and voided.clause == "RWS-NC3P 5.17"
    assert {r.wager_id for r in voided.settlement.results} == set(table.machine.wagers)
