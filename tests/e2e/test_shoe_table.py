"""End to end: seeded dealing shoes of every serial dialect (framed, plain barcode scanner with
its deck map, Bee-Tek) over REAL ptys -> the shoe drivers -> Table -> settlement.

A manual device deals one card at a time to each box with an initial wager and then the dealer,
three rounds (RWS-NC3P 3.12, MBS-R3P 3.12.1, RWS-3CP 3.6). The framed shoe (seed 11) deals
2H 6C 3D JH 4H 4C 2D 6H KC ...: box 1 2H JH 2D, box 2 6C 4H 6H, dealer 3D 4C KC. The scanner and
Bee-Tek shoes deal 7H 6S 6H 4H AD 7D JC QS TS ...: box 1 7H 4H JC, box 2 6S AD QS, dealer 6H 7D TS.
"""

from __future__ import annotations

import pytest

from controller.games.cards import parse_cards
from controller.table import commands as cmd
from controller.table import events as ev
from firmware_sim.faults import FaultKind, FaultSpec
from tests.e2e.conftest import (
    DEALER,
    FRAMED_DECK,
    LINE_DECK,
    MANUAL_GAMES,
    SUPERVISOR,
    Rig,
    all_returned,
    results,
)

A = cmd.SupervisorAction
DIALECTS = ["framed", "scanner", "beetek"]
FRAMED_NORMAL = {
    # box 1 Single Picture Four, box 2 Plain Six, dealer Single Picture Seven
    "rws-nc-three-pictures": {"w1": ("lose", -1000), "w2": ("lose", -1000)},
    "mbs-royal-three-pictures": {"w1": ("lose", -1000), "w2": ("lose", -1000)},
    # 3CP: pairs of twos and sixes beat the dealer's qualifying King high (3.10.1, 4.1)
    "rws-three-card-poker": {"w1": ("win", 1000), "w1:play": ("win", 1000),
                             "w2": ("win", 1000), "w2:play": ("win", 1000)},
}
GENERAL = {"rws-nc-three-pictures": "RWS-NC3P 5.17", "mbs-royal-three-pictures": "MBS-R3P 6.1",
           "rws-three-card-poker": "RWS-3CP (no clause; house: supervisor decides)"}


def _hands(deck):
    return [("1", (deck[0], deck[3], deck[6])), ("2", (deck[1], deck[4], deck[7])),
            ("dealer", (deck[2], deck[5], deck[8]))]


def _ready(rig: Rig) -> None:
    rig.bets()
    rig.shuffle()


def _framed_normal(rig: Rig, settled: ev.RoundSettled) -> None:
    assert list(settled.hands) == _hands(FRAMED_DECK)
    assert results(settled) == FRAMED_NORMAL[rig.game]


@pytest.mark.parametrize("rig", [(g, ("framed",), "shoe") for g in MANUAL_GAMES], indirect=True)
def test_manual_deal_one_card_at_a_time(rig: Rig) -> None:
    """RWS-NC3P 3.12, MBS-R3P 3.12.1, RWS-3CP 3.6: box 1, box 2, dealer, three times."""
    _ready(rig)
    rig.draw(9)
    assigned = rig.all(ev.CardAssigned)
    assert [(a.position, a.index) for a in assigned] == [
        (p, i) for i in range(3) for p in ("1", "2", "dealer")]
    rig.wait(ev.DealComplete)
    _framed_normal(rig, rig.finish())


@pytest.mark.parametrize("rig", [("rws-nc-three-pictures", (d,), "shoe") for d in DIALECTS],
                         indirect=True)
def test_manual_deal_from_each_dialect(rig: Rig) -> None:
    """The same procedure whatever the shoe speaks; RWS-NC3P 3.13 settles it."""
    _ready(rig)
    rig.draw(9)
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    deck = FRAMED_DECK if "framed" in rig.devices else LINE_DECK
    assert list(settled.hands) == _hands(deck)
    expected = ({"w1": ("lose", -1000), "w2": ("lose", -1000)} if deck is FRAMED_DECK else
                # Single Picture One loses, Single Picture Seven beats Plain Three
                {"w1": ("lose", -1000), "w2": ("win", 1000)})
    assert results(settled) == expected


FOREIGN = {"rws-nc-three-pictures": "RWS-NC3P 5.5.1", "mbs-royal-three-pictures": "MBS-R3P 5.1",
           "rws-three-card-poker": "RWS-3CP 5.1.1"}
DUPLICATE = {"rws-nc-three-pictures": "RWS-NC3P 5.5.1, 5.5.2",
             "mbs-royal-three-pictures": "MBS-R3P 5.1", "rws-three-card-poker": "RWS-3CP 5.1.1"}


@pytest.mark.parametrize("rig", [(g, (d,), "shoe") for g in MANUAL_GAMES for d in DIALECTS],
                         indirect=True)
def test_foreign_card_from_each_dialect_voids(rig: Rig) -> None:
    """A card not of the deck in use voids the round (RWS-NC3P 5.5.1, MBS-R3P 5.1, RWS-3CP
    5.1.1): the framed shoe reports FOREIGN, the scanner reads another deck id from its deck
    map. A Bee-Tek line carries rank and suit only, so a card of another deck shows up as a
    second copy of one already dealt: void too (RWS-NC3P 5.5.1/5.5.2, MBS-R3P 5.1, RWS-3CP
    5.1.1)."""
    _ready(rig)
    rig.draw(2)
    beetek = "beetek" in rig.devices
    rig.inject(FaultSpec(FaultKind.DUPLICATE if beetek else FaultKind.FOREIGN))
    rig.shoe.sim.draw()
    voided = rig.wait(ev.RoundVoided)
    clause = (DUPLICATE if beetek else FOREIGN)[rig.game]
    assert voided.clause.startswith(clause) and all_returned(voided)
    if beetek:
        assert "7H already dealt" in voided.reason


NOT_SHUFFLED = {"rws-nc-three-pictures": ("void", "RWS-NC3P 5.5.3"),
                "mbs-royal-three-pictures": ("void", "MBS-R3P 5.1"),
                "rws-three-card-poker": ("supervisor", GENERAL["rws-three-card-poker"])}


@pytest.mark.parametrize("rig", [(g, ("framed",), "shoe") for g in MANUAL_GAMES], indirect=True)
def test_card_before_shuffle_confirmed_is_unshuffled(rig: Rig) -> None:
    """A card dealt from the shoe before the dealer confirmed the shuffle: cards not shuffled,
    void under RWS-NC3P 5.5.3 and MBS-R3P 5.1; RWS-3CP has no clause (supervisor)."""
    rig.bets()
    rig.shoe.sim.draw()
    action, clause = NOT_SHUFFLED[rig.game]
    ruled = rig.wait(ev.IrregularityRuled)
    assert (ruled.kind, ruled.action, ruled.clause) == ("not_shuffled", action, clause)
    if action == "supervisor":
        rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.VOID, reason="not shuffled"))
    assert all_returned(rig.wait(ev.RoundVoided))


EXPOSED_FIRST = {"rws-nc-three-pictures": ("continue", "RWS-NC3P 5.10"),
                 "mbs-royal-three-pictures": ("void", "MBS-R3P 5.8.1"),
                 "rws-three-card-poker": ("supervisor",
                                          "RWS-3CP (no clause; house: supervisor decides)")}


@pytest.mark.parametrize("rig", [(g, ("framed",), "shoe") for g in MANUAL_GAMES], indirect=True)
def test_first_card_exposed(rig: Rig) -> None:
    """The first card from the shoe comes out face up. RWS-NC3P 5.10: used as the next card;
    MBS-R3P 5.8.1: the first card from a manual device exposed voids the round; RWS-3CP 5.1.2:
    one exposed card does not void (no clause: a supervisor lets the deal continue)."""
    _ready(rig)
    rig.inject(FaultSpec(FaultKind.EXPOSED))
    rig.draw(1)
    action, clause = EXPOSED_FIRST[rig.game]
    ruled = rig.wait(ev.IrregularityRuled)
    assert (ruled.kind, ruled.action, ruled.clause) == ("exposed_card", action, clause)
    if action == "void":
        assert all_returned(rig.wait(ev.RoundVoided))
        return
    if action == "supervisor":
        rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
        rig.wait(ev.SupervisorDecided)
    rig.draw(8)
    rig.wait(ev.DealComplete)
    _framed_normal(rig, rig.finish())


@pytest.mark.parametrize("rig", [("mbs-royal-three-pictures", ("framed",), "shoe")],
                         indirect=True)
def test_later_exposed_card_turned_down_mbs_r(rig: Rig) -> None:
    """MBS-R3P 5.8: an exposed card that is not the first is turned down and dealing
    continues."""
    _ready(rig)
    rig.draw(3)
    rig.inject(FaultSpec(FaultKind.EXPOSED))
    rig.draw(1)
    ruled = rig.wait(ev.IrregularityRuled)
    assert (ruled.action, ruled.clause) == ("continue", "MBS-R3P 5.8")
    rig.draw(5)
    rig.wait(ev.DealComplete)
    _framed_normal(rig, rig.finish())


@pytest.mark.parametrize("rig", [("rws-three-card-poker", (d,), "shoe")
                                 for d in ("framed", "beetek")], indirect=True)
def test_two_exposed_cards_void_3cp(rig: Rig) -> None:
    """RWS-3CP 5.1.2: two cards exposed during the deal void it. The Bee-Tek shoe reports an
    exposure as an E5 alarm after the card: each counts once."""
    _ready(rig)
    rig.inject(FaultSpec(FaultKind.EXPOSED))
    rig.draw(1)
    assert rig.wait(ev.IrregularityRuled).action == "supervisor"  # one: no clause
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
    rig.wait(ev.SupervisorDecided)
    rig.draw(1)
    rig.inject(FaultSpec(FaultKind.EXPOSED))
    rig.draw(1)
    voided = rig.wait(ev.RoundVoided)
    assert voided.clause == "RWS-3CP 5.1.2" and all_returned(voided)
    assert len(rig.all(ev.IrregularityRuled)) == 2


@pytest.mark.parametrize("rig", [(g, (d,), "shoe") for g in MANUAL_GAMES
                                 for d in ("framed", "scanner")] +
                         [("rws-nc-three-pictures", ("beetek",), "shoe")], indirect=True)
def test_no_read_supervisor_enters_the_card(rig: Rig) -> None:
    """The first card passes the reader unidentified. No text provides for it: a supervisor
    (RWS-NC3P 5.17, MBS-R3P 6.1; house rule for RWS-3CP) enters the card seen on the table and
    dealing continues; the round settles as if it had been read."""
    _ready(rig)
    rig.inject(FaultSpec(FaultKind.NO_READ))
    rig.shoe.sim.draw()
    required = rig.wait(ev.SupervisorRequired)
    assert (required.kind, required.clause) == ("no_read", GENERAL[rig.game])
    if "beetek" in rig.devices:
        rig.note("fault unreadable_card")  # the E3 alarm that follows is the same no-read
    deck = LINE_DECK if "framed" not in rig.devices else FRAMED_DECK
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.ORDER, cards=(deck[0],)))
    rig.wait(ev.CardAssigned)
    rig.draw(8)
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    assert list(settled.hands) == _hands(deck)
    assert len(rig.all(ev.SupervisorRequired)) == 1


@pytest.mark.parametrize("rig", [(g, ("framed",), "shoe") for g in MANUAL_GAMES] +
                         [("rws-nc-three-pictures", ("beetek",), "shoe")], indirect=True)
def test_double_feed(rig: Rig) -> None:
    """Two cards come out together (framed DOUBLE_FEED, Bee-Tek E6). RWS-NC3P 5.11: the Pit
    Supervisor decides which is received first; 5.11.1: it is a dealing error and every player
    gets the options of 5.7 (both continue). Elsewhere no clause: the supervisor orders them."""
    _ready(rig)
    rig.inject(FaultSpec(FaultKind.DOUBLE_READ))
    rig.shoe.sim.draw()
    required = rig.wait(ev.SupervisorRequired)
    clause = "RWS-NC3P 5.11, 5.11.1" if rig.game == "rws-nc-three-pictures" else GENERAL[rig.game]
    assert (required.kind, required.clause) == ("simultaneous_draw", clause)
    deck = LINE_DECK if "beetek" in rig.devices else FRAMED_DECK
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.ORDER, cards=deck[:2]))
    if rig.game == "rws-nc-three-pictures":
        offered = rig.wait(ev.PlayerOptionsOffered)
        assert (offered.clause, offered.positions) == ("RWS-NC3P 5.11.1, 5.7", ("1", "2"))
        for box in offered.positions:
            rig.put(cmd.PlayerOption(**DEALER, position=box, option=cmd.Option.CONTINUE))
    rig.draw(7)
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    assert list(settled.hands) == _hands(deck)
    if deck is FRAMED_DECK:
        assert results(settled) == FRAMED_NORMAL[rig.game]


@pytest.mark.parametrize("rig", [("rws-nc-three-pictures", ("scanner",), "shoe")], indirect=True)
def test_scanner_double_read_is_one_card(rig: Rig) -> None:
    """A scanner that reads the same barcode twice reports one card (a warning, not a second
    card or a duplicate): the round is dealt and settles normally."""
    _ready(rig)
    rig.inject(FaultSpec(FaultKind.DOUBLE_READ))
    rig.draw(1)
    rig.note("DeviceWarning")
    rig.draw(8)
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    assert list(settled.hands) == _hands(LINE_DECK)
    assert rig.all(ev.IrregularityRuled) == []


@pytest.mark.parametrize("rig", [("rws-nc-three-pictures", ("framed",), "shoe")], indirect=True)
def test_wrong_count_to_a_player_removes_the_hand_and_replans(rig: Rig) -> None:
    """RWS-NC3P 5.9: box 1 is found with two cards after the first round of cards (the dealer
    gave it box 2's card); not reconstructable: box 1 is removed and its bet returned, and the
    cards still to come go only to box 2 and the dealer, in order."""
    rig.bets([("1", "main", 1000), ("1", "tie", 500), ("2", "main", 1000)])
    rig.shuffle()
    rig.draw(3)
    rig.put(cmd.ReportIrregularity(**DEALER, kind=cmd.IrregularityKind.WRONG_COUNT_PLAYER,
                                   position="1", details="two cards at box 1"))
    assert rig.wait(ev.SupervisorRequired).clause == "RWS-NC3P 5.9"
    rig.put(cmd.SupervisorDecision(**SUPERVISOR, action=A.NOT_RECONSTRUCTABLE))
    rig.wait(ev.HandRemoved)
    rig.draw(4)
    rig.wait(ev.DealComplete)
    settled = rig.finish()
    d = FRAMED_DECK
    assert list(settled.hands) == [("2", (d[1], d[3], d[5])), ("dealer", (d[2], d[4], d[6]))]
    # box 2 6C JH 4C (Single Picture Zero) loses to 3D 4H 2D (Plain Nine)
    assert results(settled) == {"w1": ("returned", 0), "w2": ("returned", 0),
                                "w3": ("lose", -1000)}
    assert parse_cards(["2H"]) == (d[0],)
