"""Players, not boxes (issue 23): a box holds a Seated Player and Standing Players (RWS-NC3P 1.15,
1.16), and each has his own priority, options and answers. Driven on the round machine; the same
findings through the service's wiring are in tests/controller/service/test_players_service.py."""

from __future__ import annotations

import pytest

from controller.settlement.model import BetLimit
from controller.table import commands as cmd
from controller.table import events as ev
from drivers import events as dev
from tests.controller.table.conftest import DEALER, SUPERVISOR, Harness, standard_hands

A = cmd.SupervisorAction
K = cmd.IrregularityKind
LIMITS = {"main": BetLimit(500, 10_000)}


def place(table: Harness, wager_id: str, position: str, amount: int, player: str,
          seated: bool | None = None, bet: str = "main") -> list[ev.RoundEvent]:
    return table.send(cmd.PlaceWager(**DEALER, wager_id=wager_id, position=position, bet=bet,
                                      amount=amount, player=player, seated=seated))


def option(table: Harness, position: str, player: str | None, choice: cmd.Option
           ) -> list[ev.RoundEvent]:
    return table.send(cmd.PlayerOption(**DEALER, position=position, player=player,
                                       option=choice))


def results(table: Harness) -> dict[str, tuple[str, int]]:
    settled = table.last(ev.RoundSettled).settlement
    return {r.wager_id: (r.outcome.value, r.net) for r in settled.results}


def rules(table: Harness) -> dict[str, str]:
    settled = table.last(ev.RoundSettled).settlement
    return {r.wager_id: r.rule for r in settled.results}


# -- RWS-NC3P 5.1: the Seated Player's priority at placement ----------------------------------

def test_seated_player_displaces_an_earlier_standing_excess(make) -> None:
    """RWS-NC3P 5.1: box maximum 10,000; a Standing Player's 8,000 came first. The Seated
    Player's 5,000 is accepted (priority "whoever bet first") and the standing wager is cut to
    the 5,000 left, 3,000 returned, journaled with the clause."""
    table = make("rws-nc-three-pictures", limits=LIMITS)
    table.open()
    place(table, "bob", "1", 8_000, "bob", seated=False)
    out = place(table, "ann", "1", 5_000, "ann", seated=True)
    assert not any(isinstance(e, ev.WagerRefused) for e in out)
    reduced = next(e for e in out if isinstance(e, ev.WagerReduced))
    assert (reduced.wager_id, reduced.player, reduced.amount, reduced.returned,
            reduced.clause) == ("bob", "bob", 5_000, 3_000, "RWS-NC3P 5.1")
    assert {w.id: w.amount for w in table.machine.active_wagers()} == {"bob": 5_000,
                                                                        "ann": 5_000}
    table.close()
    table.shuffle()
    table.deal(standard_hands("rws-nc-three-pictures"))
    table.finish()
    assert results(table)["bob"] == ("win", 5_000)  # 1 to 1 on 5,000, not on 8,000


def test_standing_wager_cut_under_the_minimum_is_returned_whole(make) -> None:
    """RWS-NC3P 5.1 with 3.5-3.6: the room left for the Standing Player (300) is under the
    minimum 500, so his wager is returned whole rather than played below the minimum."""
    table = make("rws-nc-three-pictures", limits=LIMITS)
    table.open()
    place(table, "bob", "1", 2_000, "bob", seated=False)
    out = place(table, "ann", "1", 9_700, "ann", seated=True)
    reduced = next(e for e in out if isinstance(e, ev.WagerReduced))
    assert (reduced.amount, reduced.returned) == (0, 2_000)
    assert [w.id for w in table.machine.active_wagers()] == ["ann"]


def test_standing_players_keep_their_order_among_themselves(make) -> None:
    """RWS-NC3P 5.1: "following which Standing Players may place their Bets subject to and
    until the maximum Bet has been reached": the earliest standing wager keeps its place, the
    later one gives way first."""
    table = make("rws-nc-three-pictures", limits=LIMITS)
    table.open()
    place(table, "bob", "1", 4_000, "bob", seated=False)
    place(table, "cat", "1", 4_000, "cat", seated=False)
    place(table, "ann", "1", 4_000, "ann", seated=True)
    assert {w.id: w.amount for w in table.machine.active_wagers()} == {
        "bob": 4_000, "cat": 2_000, "ann": 4_000}


def test_seated_players_own_excess_is_rejected_and_standing_players_give_way(make) -> None:
    """RWS-NC3P 5.1: priority is up to the maximum. The Seated Player's second wager is
    accepted and cut to the 4,000 left after her first (her own excess, 1,000, rejected), and
    the Standing Player, who has no priority, gives way: his 2,000 is returned whole."""
    table = make("rws-nc-three-pictures", limits=LIMITS)
    table.open()
    place(table, "bob", "1", 2_000, "bob", seated=False)
    place(table, "ann", "1", 6_000, "ann", seated=True)
    out = place(table, "ann2", "1", 5_000, "ann", seated=True)
    cuts = {e.wager_id: (e.amount, e.returned) for e in out if isinstance(e, ev.WagerReduced)}
    assert cuts == {"bob": (0, 2_000), "ann2": (4_000, 1_000)}
    assert [type(e).__name__ for e in out] == ["WagerReduced", "WagerAccepted", "WagerReduced"]
    assert {w.id: w.amount for w in table.machine.active_wagers()} == {"ann": 6_000,
                                                                        "ann2": 4_000}


def test_a_standing_bet_over_what_is_left_is_cut_to_it(make) -> None:
    """Issue 34, RWS-NC3P 5.1 ("Standing Players may place their Bets ... until the maximum Bet
    has been reached"): maximum 10,000; seated 5,000, standing 3,000, then standing 4,000: 2,000
    of the 4,000 in action and 2,000 returned at once, journaled with the clause; settled on
    the 2,000 (a main win pays 1 to 1)."""
    table = make("rws-nc-three-pictures", limits=LIMITS)
    table.open()
    place(table, "ann", "1", 5_000, "ann", seated=True)
    place(table, "bob", "1", 3_000, "bob", seated=False)
    out = place(table, "cat", "1", 4_000, "cat", seated=False)
    assert [type(e).__name__ for e in out] == ["WagerAccepted", "WagerReduced"]
    assert (out[1].wager_id, out[1].amount, out[1].returned, out[1].clause) == (
        "cat", 2_000, 2_000, "RWS-NC3P 5.1")
    assert "excess rejected" in out[1].reason
    _deal_box_1_wins(table)
    assert results(table) == {"ann": ("win", 5_000), "bob": ("win", 3_000),
                              "cat": ("win", 2_000)}


def test_nobody_seated_the_highest_bet_has_the_priority(make) -> None:
    """Issue 34, RWS-NC3P 1.15 with 5.1: nobody marked seated, so the Seated Player is "the
    Player with the highest Bet on the betting box". Maximum 10,000: 3,000, then another
    player's 8,000: the 8,000 is in action whole and the 3,000 is cut to 2,000 (1,000
    returned); both settled on what is in action."""
    table = make("rws-nc-three-pictures", limits=LIMITS)
    table.open()
    place(table, "bob", "1", 3_000, "bob")
    out = place(table, "ann", "1", 8_000, "ann")
    assert [type(e).__name__ for e in out] == ["WagerReduced", "WagerAccepted"]
    assert (out[0].wager_id, out[0].amount, out[0].returned) == ("bob", 2_000, 1_000)
    assert "highest Initial Bet, 1.15" in out[0].reason
    _deal_box_1_wins(table)
    assert results(table) == {"ann": ("win", 8_000), "bob": ("win", 2_000)}


def test_a_bet_under_the_minimum_is_refused_naming_the_minimum(make) -> None:
    """Issue 34, RWS-NC3P 5.2: the controller knows the minimum before the bets close, so the
    Dealer has noticed: a 400 under a 500 minimum is refused naming the clause and the minimum,
    nothing is placed, and the Player may place 500 instead."""
    table = make("rws-nc-three-pictures", limits=LIMITS)
    table.open()
    out = place(table, "bob", "1", 400, "bob")
    assert isinstance(out[0], ev.WagerRefused)
    assert "under the minimum 500" in out[0].reason and "RWS-NC3P 5.2" in out[0].reason
    assert table.machine.wagers == {}
    assert isinstance(place(table, "bob", "1", 500, "bob")[0], ev.WagerAccepted)


def test_a_withdrawal_frees_room_and_reinstates_nothing(make) -> None:
    """A withdrawal lowers the box's total, so it cuts nothing; the 2,000 an earlier cut
    returned went back to the player and stays returned; the room freed takes a new wager."""
    table = make("rws-nc-three-pictures", limits=LIMITS)
    table.open()
    place(table, "ann", "1", 5_000, "ann", seated=True)
    place(table, "cat", "1", 7_000, "cat", seated=False)  # cut to 5,000
    out = table.send(cmd.WithdrawWager(**DEALER, wager_id="ann"))
    assert [type(e).__name__ for e in out] == ["WagerWithdrawn"]
    assert {w.id: w.amount for w in table.machine.active_wagers()} == {"cat": 5_000}
    assert isinstance(place(table, "dan", "1", 5_000, "dan")[0], ev.WagerAccepted)


def _deal_box_1_wins(table: Harness) -> None:
    table.close()
    table.shuffle()
    table.deal(standard_hands("rws-nc-three-pictures"))
    table.finish()


# -- RWS-NC3P 5.7: each player's option --------------------------------------------------------

def _rws_two_players_at_box_1(make) -> Harness:  # noqa: ANN001
    table = make("rws-nc-three-pictures", "shoe")
    table.open()
    place(table, "ann", "1", 1_000, "ann", seated=True)
    place(table, "bob", "1", 1_000, "bob", seated=False)
    place(table, "bob2", "2", 1_000, "bob", seated=False)
    place(table, "cat", "2", 1_000, "cat", seated=True)
    table.close()
    table.shuffle()
    return table


def test_rws_5_7_standing_withdrawal_leaves_the_seated_players_hand(make) -> None:
    """RWS-NC3P 5.7: "all Players on the gaming table shall have the option". Bob (standing at
    box 1) has his Bet returned (5.7.3); Ann, seated at the same box, continues her Hand and is
    settled on it; Bob's wager at box 2 is not touched by his answer at box 1."""
    table = _rws_two_players_at_box_1(make)
    table.deal(standard_hands("rws-nc-three-pictures"))
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.OTHER_DEALING_ERROR))
    offered = table.last(ev.PlayerOptionsOffered)
    assert offered.players == (ev.PlayerAtBox("1", "ann"), ev.PlayerAtBox("1", "bob"),
                               ev.PlayerAtBox("2", "bob"), ev.PlayerAtBox("2", "cat"))
    assert offered.deadline_s == 120
    taken = next(e for e in option(table, "1", "bob", cmd.Option.WITHDRAW)
                 if isinstance(e, ev.PlayerOptionTaken))
    assert (taken.wager_ids, taken.player) == (("bob",), "bob")
    assert table.of(ev.HandRemoved) == []
    out = option(table, "1", "ann", cmd.Option.CONTINUE)
    assert isinstance(out[0], ev.PlayerOptionTaken)
    table.send(cmd.CloseOptions(**DEALER))
    closed = table.last(ev.PlayerOptionsClosed)
    assert closed.continuing == (ev.PlayerAtBox("2", "bob"), ev.PlayerAtBox("2", "cat"))
    table.finish()
    assert results(table) == {"ann": ("win", 1_000), "bob": ("returned", 0),
                              "bob2": ("lose", -1_000), "cat": ("lose", -1_000)}
    assert rules(table)["bob"] == "RWS-NC3P 5.7.3"


def test_rws_5_7_box_leaves_play_only_when_all_its_players_withdraw(make) -> None:
    """RWS-NC3P 5.7.3: the Hand is invalidated (no more cards to the box) once no player at
    the box continues it; one player's withdrawal alone does not."""
    table = _rws_two_players_at_box_1(make)
    events = table.card_events(standard_hands("rws-nc-three-pictures"))
    for event in events[:3]:
        table.send(event)
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.OTHER_DEALING_ERROR))
    option(table, "1", "bob", cmd.Option.WITHDRAW)
    assert table.of(ev.HandRemoved) == []
    option(table, "1", "ann", cmd.Option.WITHDRAW)
    assert table.last(ev.HandRemoved).clause == "RWS-NC3P 5.7.3"


def test_an_ambiguous_answer_names_the_player(make) -> None:
    """A box of two players: an answer without a player is refused with the reason."""
    table = _rws_two_players_at_box_1(make)
    table.deal(standard_hands("rws-nc-three-pictures"))
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.OTHER_DEALING_ERROR))
    out = option(table, "1", None, cmd.Option.WITHDRAW)
    assert isinstance(out[-1], ev.CommandRefused) and "name the player" in out[-1].reason
    out = option(table, "1", "zed", cmd.Option.WITHDRAW)
    assert isinstance(out[-1], ev.CommandRefused) and "zed" in out[-1].reason
    assert table.machine.withdrawn == {}


def test_a_standing_players_withdrawal_keeps_the_side_bet_of_another(make) -> None:
    """RWS-NC3P 3.9, 5.14: a Tie Bet placed on a box with its Initial Bet stands when the
    Initial Bet's owner later withdraws under 5.7.3; 5.14 returns only a side Bet placed
    without one."""
    table = make("rws-nc-three-pictures", "shoe")
    table.open()
    place(table, "bob", "1", 1_000, "bob", seated=True)
    place(table, "ann-tie", "1", 100, "ann", seated=False, bet="tie")
    table.close()
    table.shuffle()
    table.deal({"1": ["KS", "QH", "5C"], "dealer": ["5S", "KH", "TC"]})
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.OTHER_DEALING_ERROR))
    option(table, "1", "bob", cmd.Option.WITHDRAW)
    option(table, "1", "ann", cmd.Option.CONTINUE)
    table.finish()
    assert results(table)["ann-tie"][0] == "win"


# -- MBS-R3P 5.13.1: one answer per player -----------------------------------------------------

def test_mbs_r3p_5_13_1_each_player_at_a_box_answers(make) -> None:
    """MBS-R3P 5.13.1: after Ann continued at box 1, Bob at the same box may still withdraw
    (all his wagers, box 2 too); Ann's wager is settled."""
    table = make("mbs-royal-three-pictures", "shoe")
    table.open()
    place(table, "ann", "1", 1_000, "ann")
    place(table, "bob", "1", 1_000, "bob")
    place(table, "bob2", "2", 1_000, "bob")
    table.close()
    table.shuffle()
    events = table.card_events(standard_hands("mbs-royal-three-pictures"))
    table.send(events[0])
    table.send(dev.DeviceRebooted(device="shoe"))
    assert table.last(ev.PlayerOptionsOffered).clause == "MBS-R3P 5.13.1"
    option(table, "1", "ann", cmd.Option.CONTINUE)
    assert table.state == "options"
    taken = next(e for e in option(table, "1", "bob", cmd.Option.WITHDRAW)
                 if isinstance(e, ev.PlayerOptionTaken))
    assert set(taken.wager_ids) == {"bob", "bob2"}
    assert set(taken.players) == {ev.PlayerAtBox("1", "bob"), ev.PlayerAtBox("2", "bob")}
    assert table.state == "dealing"
    for event in events[1:]:
        table.send(event)
    table.finish()
    assert {k: v[0] for k, v in results(table).items()} == {
        "ann": "win", "bob": "returned", "bob2": "returned"}


# -- options outlive a hold, and close at their deadline ---------------------------------------

def test_options_outlive_a_hold(make) -> None:
    """A jam ruled and continued during the options does not wipe them: they are announced
    again for the players still to answer, and box 2's withdrawal is taken."""
    table = make("rws-nc-three-pictures")
    table.ready()
    events = table.card_events(standard_hands("rws-nc-three-pictures"))
    table.send(events[0])
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.OTHER_DEALING_ERROR))
    option(table, "1", None, cmd.Option.CONTINUE)
    table.send(dev.FaultRaised(device="shuffler", fault=dev.Fault.JAM, detail="jam"))
    assert table.state == "hold"
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=A.CONTINUE))
    again = table.last(ev.PlayerOptionsOffered)
    assert again.resumed and again.players == (ev.PlayerAtBox("2", "player-2"),)
    assert table.state == "options"
    taken = next(e for e in option(table, "2", None, cmd.Option.WITHDRAW)
                 if isinstance(e, ev.PlayerOptionTaken))
    assert taken.wager_ids == ("w2",)
    assert table.state == "dealing"


def test_options_deadline_continues_the_unanswered(make) -> None:
    """The options deadline (the table thread's input) closes the options: the players who
    did not answer continue, named in the journaled record; a stale deadline is refused."""
    table = make("rws-nc-three-pictures", options_deadline_s=30)
    table.ready()
    table.deal(standard_hands("rws-nc-three-pictures"))
    table.send(cmd.ReportIrregularity(**DEALER, kind=K.OTHER_DEALING_ERROR))
    offered = table.last(ev.PlayerOptionsOffered)
    assert offered.deadline_s == 30
    option(table, "1", None, cmd.Option.WITHDRAW)
    stale = table.send(cmd.OptionsDeadline(actor="options-deadline", deadline_s=30, offer=9))
    assert isinstance(stale[-1], ev.CommandRefused) and table.state == "options"
    table.send(cmd.OptionsDeadline(actor="options-deadline", deadline_s=30,
                                   offer=table.machine.offer.number))
    closed = table.last(ev.PlayerOptionsClosed)
    assert closed.continuing == (ev.PlayerAtBox("2", "player-2"),)
    assert "deadline" in closed.by and table.state == "dealt"


@pytest.mark.parametrize("deadline", [0, -5])
def test_options_deadline_must_be_positive(make, deadline: int) -> None:
    """A layout with no time for the options is refused with a clear error."""
    with pytest.raises(Exception, match="options deadline"):
        make("rws-nc-three-pictures", options_deadline_s=deadline)


def test_a_second_seated_player_at_a_box_is_refused(make) -> None:
    """RWS-NC3P 1.15: one Seated Player a box ("the Player sitting at the betting box"); a
    wager of another player marked seated there is refused, naming both (as `tablectl settle`
    refuses such a round); the Seated Player may add a wager of his own."""
    table = make("rws-nc-three-pictures", limits=LIMITS)
    table.open()
    place(table, "ann", "1", 1_000, "ann", seated=True)
    out = place(table, "bob", "1", 1_000, "bob", seated=True)
    assert isinstance(out[-1], ev.CommandRefused) and "both marked seated" in out[-1].reason
    assert isinstance(place(table, "ann2", "1", 1_000, "ann", seated=True)[0], ev.WagerAccepted)
    assert set(table.machine.wagers) == {"ann", "ann2"}
