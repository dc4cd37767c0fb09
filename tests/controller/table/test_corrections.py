"""Machine gaps closed in issue 4: a settled round corrected before the next round, a device
offline while bets are offered, a shuffler reboot before the deal, a jam."""

from __future__ import annotations

import pytest

from controller.table import commands as cmd
from controller.table import events as ev
from drivers import events as dev
from tests.controller.table.conftest import (
    CASINO_GAMES,
    DEALER,
    SUPERVISOR,
    cards,
    standard_hands,
)

K = cmd.IrregularityKind


def _settled(make, game: str):
    table = make(game)
    table.ready()
    table.deal(standard_hands(game))
    table.finish()
    assert table.state == "settled"
    return table


CORRECTIONS = [
    ("rws-nc-three-pictures", K.WRONG_COUNT_PLAYER, "RWS-NC3P 5.9"),
    ("rws-nc-three-pictures", K.WRONG_COUNT_DEALER, "RWS-NC3P 5.5.5"),
    ("mbs-royal-three-pictures", K.WRONG_COUNT_PLAYER, "MBS-R3P 5.5"),
    ("rws-three-card-poker", K.WRONG_COUNT_DEALER, "RWS-3CP 5.1.5"),
]


@pytest.mark.parametrize(("game", "kind", "clause"), CORRECTIONS)
def test_wrong_count_after_settlement_before_next_round_corrects(make, game, kind,
                                                                 clause) -> None:
    """RWS-NC3P 5.9 / 5.5.5, MBS-R3P 5.5 and RWS-3CP 5.1.5 apply "provided that this is noticed
    before the commencement of the next round": noticed after settlement but before the next
    "Place your bets", the settlement is corrected (player: that box's wagers returned; dealer:
    the round void). Reversing a settlement is a supervisor's decision."""
    table = _settled(make, game)
    table.send(cmd.ReportIrregularity(**DEALER, kind=kind, position="1"))
    assert "Pit Supervisor" in table.last(ev.CommandRefused).reason
    table.send(cmd.ReportIrregularity(**SUPERVISOR, kind=kind, position="1"))
    if clause != "MBS-R3P 5.5":  # "... and the cards cannot be Reconstructed": asked
        table.send(cmd.SupervisorDecision(**SUPERVISOR,
                                          action=cmd.SupervisorAction.NOT_RECONSTRUCTABLE))
    corrected = table.last(ev.SettlementCorrected)
    assert corrected.clause == clause
    outcomes = {r.wager_id: r.outcome.value for r in corrected.settlement.results}
    if kind is K.WRONG_COUNT_DEALER:
        assert corrected.voided and set(outcomes.values()) == {"returned"}
    else:
        box1 = {w.id for w in table.machine.wagers.values() if w.position == "1"}
        assert not corrected.voided and corrected.position == "1"
        assert {outcomes[w] for w in box1} == {"returned"}
        assert "returned" not in {o for w, o in outcomes.items() if w not in box1}
    assert table.machine.last_settlement is corrected.settlement


@pytest.mark.parametrize(("game", "kind", "clause"), [
    ("mbs-three-pictures", K.WRONG_COUNT_DEALER, "MBS-3P 1.1.4, 5.4"),
    ("rws-nc-three-pictures", K.FOREIGN_CARD, "RWS-NC3P 1.14, 5.6"),
    ("rws-three-card-poker", K.WRONG_COUNT_PLAYER,
     "RWS-3CP (no clause; house: a settled game stands)"),
    ("mbs-royal-three-pictures", K.WRONG_COUNT_DEALER, "MBS-R3P 1.1.3, 5.4"),
])
def test_other_errors_after_settlement_stand(make, game, kind, clause) -> None:
    """Every other irregularity is one "found during the Round of play", which concluded at
    settlement (RWS-NC3P 1.14): the settlement stands."""
    table = _settled(make, game)
    before = table.machine.last_settlement
    table.send(cmd.ReportIrregularity(**SUPERVISOR, kind=kind, position="1"))
    ruled = table.last(ev.IrregularityRuled)
    assert (ruled.action, ruled.clause) == ("stands", clause)
    assert table.of(ev.SettlementCorrected) == [] and table.machine.last_settlement is before


def test_after_next_round_commenced_nothing_changes(make) -> None:
    """RWS-NC3P 5.6, 5.12: once the next round has commenced the previous one stands, even for
    a wrong count."""
    table = _settled(make, "rws-nc-three-pictures")
    table.open()
    table.send(cmd.ReportIrregularity(**SUPERVISOR, kind=K.WRONG_COUNT_PLAYER, position="1",
                                      round_number=1))
    ruled = table.last(ev.IrregularityRuled)
    assert (ruled.action, ruled.clause) == ("stands", "RWS-NC3P 5.6, 5.12")
    assert table.of(ev.SettlementCorrected) == []


@pytest.mark.parametrize("game", CASINO_GAMES)
def test_offline_during_betting_blocks_close_until_back(make, game) -> None:
    """No card dealt: a device going offline while bets are offered establishes nothing and
    voids nothing; "No more bets" waits until it is back."""
    table = make(game)
    table.open()
    table.default_bets()
    table.send(dev.DeviceOffline(device="shuffler", reason="unplugged"))
    assert table.state == "betting" and table.of(ev.RoundVoided) == []
    table.close()
    assert "offline" in table.last(ev.CommandRefused).reason and table.state == "betting"
    table.send(dev.DeviceOnline(device="shuffler"))
    table.close()
    assert table.state == "closed"


def test_shuffler_reboot_before_the_deal_loses_the_shuffle(make) -> None:
    """A shuffler that reboots after its shuffle but before the first card has lost that deck:
    the round waits for a new shuffle. The reboot is also an interruption, ruled as a device
    going offline would be (MBS-3P: a supervisor; here the round goes on)."""
    table = make("mbs-three-pictures")
    table.ready()
    assert table.state == "shuffled"
    table.send(dev.DeviceRebooted(device="shuffler", old_boot_id=1, new_boot_id=2))
    assert table.state == "hold" and table.of(ev.RoundVoided) == []
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.CONTINUE))
    assert table.state == "closed"
    table.shuffle()
    table.deal(standard_hands("mbs-three-pictures"))
    assert table.finish().__class__ is ev.RoundSettled


@pytest.mark.parametrize("game", CASINO_GAMES[1:])
def test_jam_goes_to_a_supervisor(make, game) -> None:
    """Only LIVE-3P has a jam clause (T&C 6) and RWS-NC3P asks whether the jam stops the round
    (5.4; test_conditions.py); elsewhere a supervisor decides (continue or void)."""
    table = make(game)
    table.ready()
    table.send(table.card_events(standard_hands(game))[0])
    table.send(dev.FaultRaised(device="shuffler", fault=dev.Fault.JAM, detail="jam"))
    required = table.last(ev.SupervisorRequired)
    assert required.kind == "jammed" and required.options == ("void", "continue")


def test_device_fault_echo_after_the_void_does_not_touch_the_next_round(make) -> None:
    """The shuffler reports a second copy twice: the repeated card in the set, then its fault
    bit. The set voids the round (RWS-NC3P 5.5.1, 5.5.2); when the fault bit arrives only after
    the next "Place your bets" it is the same event, noted, and the new round is untouched."""
    table = make("rws-nc-three-pictures")
    table.ready()
    table.send(dev.CardSetDispensed(device="shuffler", cards=cards("AS", "KH", "AS")))
    assert table.last(ev.RoundVoided).clause == "RWS-NC3P 5.5.1, 5.5.2"
    table.open()
    table.default_bets()
    table.send(dev.FaultRaised(device="shuffler", fault=dev.Fault.DUPLICATE_CARD, detail="AS"))
    assert table.state == "betting" and len(table.of(ev.RoundVoided)) == 1
    assert "already counted" in table.last(ev.DeviceNoted).detail


@pytest.mark.parametrize("game", CASINO_GAMES)
def test_count_fault_echo_after_the_deck_is_replaced_does_not_void_the_next_round(make,
                                                                                  game) -> None:
    """The shuffler reports a wrong count twice: in its shuffle result, then its fault bit. The
    result voids the round and blocks the deck; the deck is replaced and the next round opened
    before the fault bit arrives. It is the same count, noted; the new round is untouched."""
    table = make(game)
    table.open()
    table.default_bets()
    table.close()
    table.send(dev.ShuffleDone(device="shuffler", counted=51, expected=52))
    assert len(table.of(ev.RoundVoided)) == 1
    table.send(cmd.ReplaceDeck(**SUPERVISOR))
    table.open()
    table.default_bets()
    table.send(dev.FaultRaised(device="shuffler", fault=dev.Fault.COUNT_MISMATCH,
                               detail="counted 51 of 52"))
    assert table.state == "betting" and len(table.of(ev.RoundVoided)) == 1
    assert "already counted" in table.last(ev.DeviceNoted).detail
    # a count fault of its own, with no shuffle result before it, is ruled as before
    table.send(dev.FaultRaised(device="shuffler", fault=dev.Fault.COUNT_MISMATCH,
                               detail="counted 53 of 52"))
    assert table.last(ev.DeckBlocked).reason.endswith("counted 53 of 52")


def test_exposed_flag_and_fault_count_once_3cp(make) -> None:
    """RWS-3CP 5.1.2 voids for two or more exposed cards: a shuffler that flags one exposed
    card in the set and then raises the exposed fault has exposed one card, not two."""
    table = make("rws-three-card-poker")
    table.ready()
    first = cards("AS", "AH", "2C")
    table.send(dev.CardSetDispensed(device="shuffler", cards=first, exposed=first[:1]))
    table.send(dev.FaultRaised(device="shuffler", fault=dev.Fault.EXPOSED_CARD, detail="AS"))
    assert table.machine.exposed == 1 and table.state == "hold"
    assert table.of(ev.RoundVoided) == []
