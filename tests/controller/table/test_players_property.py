"""Issue 23, as a property over rounds with several players per box: no ruling moves one
player's money because of another player's choice.

Each example plays the same round (same wagers, same cards, same irregularity) twice, with two
random sets of choices; for every player whose own choice is the same in both runs, each of his
wagers settles identically (outcome, amount won or lost, stake in play). The options covered:
RWS-NC3P 5.7 (a dealing error after the deal), MBS-R3P 5.6-5.7 (dealt incorrectly, noticed
after handling) and MBS-R3P 5.13.1 (a power failure with no outcome established, the deal then
going on), sometimes with a supervisor's hold in the middle of the options (they outlive it).
Where a clause does move another player's money it is named in the record; none of these do,
so the property is strict. Also: an option record lists only the answering player's wagers, and
no wager is returned under an option's clause unless its player withdrew.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.games.cards import Card, parse_card
from controller.settlement.limits import seated_players
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.layout import TableLayout
from controller.table.machine import RoundMachine
from drivers import events as dev
from tests.controller.table.conftest import DEALER, SUPERVISOR, Harness

PLAYERS = ("ann", "bob", "cat", "dan")
BOXES = ("1", "2", "3")
DECK = tuple(parse_card(rank + suit) for rank in "A23456789TJQK" for suit in "SHDC")
SCENARIOS = {
    "rws-5.7": ("rws-nc-three-pictures", "RWS-NC3P 5.7"),
    "mbs-5.7": ("mbs-royal-three-pictures", "MBS-R3P 5.6, 5.7"),
    "mbs-5.13.1": ("mbs-royal-three-pictures", "MBS-R3P 5.13.1"),
}
CHOICES = ("continue", "withdraw", "unanswered")


@dataclass(frozen=True)
class Bet:
    player: str
    box: str
    bet: str
    amount: int


_BET = st.builds(Bet, st.sampled_from(PLAYERS), st.sampled_from(BOXES),
                 st.sampled_from(("main", "main", "tie")), st.sampled_from((500, 1_000, 2_500)))


def _play(scenario: str, bets: list[Bet], deck: list[Card], choices: dict[str, str],
          hold_after: int | None) -> Harness:
    game, clause = SCENARIOS[scenario]
    events: list[ev.RoundEvent] = []
    table = Harness(RoundMachine(TableLayout.for_game(game, "shoe"), events.append), events)
    table.open()
    for index, bet in enumerate(bets):
        table.send(cmd.PlaceWager(**DEALER, wager_id=f"w{index}", position=bet.box, bet=bet.bet,
                                  amount=bet.amount, player=bet.player))
    table.close()
    table.send(dev.ShuffleDone(device="shoe", counted=52, expected=52))
    assert table.machine.deal is not None
    receiving = list(dict.fromkeys(step.position for step in table.machine.deal.plan))
    hands = {position: [deck[3 * i + k].code for k in range(3)]
             for i, position in enumerate(receiving)}
    cards = table.card_events(hands)
    if scenario == "mbs-5.13.1":
        table.send(cards[0])
        table.send(dev.DeviceRebooted(device="shoe"))
        rest = cards[1:]
    else:
        for event in cards:
            table.send(event)
        kind = (cmd.IrregularityKind.OTHER_DEALING_ERROR if scenario == "rws-5.7"
                else cmd.IrregularityKind.DEALT_INCORRECTLY)
        table.send(cmd.ReportIrregularity(**DEALER, kind=kind, handled=True))
        rest = []
    offered = table.last(ev.PlayerOptionsOffered)
    assert offered.clause == clause
    answered = 0
    for who in offered.players:
        if table.machine.offer is None or who not in table.machine.offer.pending:
            continue  # settled by his answer at another box (MBS-R3P 5.13.1)
        if hold_after is not None and answered == hold_after:
            table.send(cmd.ReportIrregularity(**DEALER, kind=cmd.IrregularityKind.OTHER,
                                              details="a question for the pit"))
            assert table.state == "hold"
            table.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.CONTINUE))
            assert table.last(ev.PlayerOptionsOffered).resumed
        choice = choices[who.player or ""]
        if choice != "unanswered":
            table.send(cmd.PlayerOption(**DEALER, position=who.position, player=who.player,
                                        option=cmd.Option(choice)))
            answered += 1
    if table.state == "options":
        table.send(cmd.CloseOptions(**DEALER))
    for event in rest:
        table.send(event)
    table.finish()
    return table


def _settled(table: Harness) -> dict[str, tuple[str, int, int, str]]:
    settlement = table.last(ev.RoundSettled).settlement
    return {r.wager_id: (r.outcome.value, r.net, r.stake, r.rule) for r in settlement.results}


def _check_own_records(table: Harness, owners: dict[str, str], choices: dict[str, str],
                       clause: str) -> None:
    """Option records list only the answering player's wagers; a wager returned under the
    option's clause belongs to a player who withdrew."""
    for taken in table.of(ev.PlayerOptionTaken):
        assert all(owners[wid] == taken.player for wid in taken.wager_ids), taken
    option_clauses = {clause, "RWS-NC3P 5.7.3"}
    for wid, (outcome, _, _, rule) in _settled(table).items():
        if outcome == "returned" and rule in option_clauses:
            assert choices[owners[wid]] == "withdraw", (wid, rule)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=st.sampled_from(sorted(SCENARIOS)),
       bets=st.lists(_BET, min_size=2, max_size=6).filter(
           lambda bets: any(b.bet == "main" for b in bets)),
       deck=st.permutations(DECK),
       first=st.fixed_dictionaries({p: st.sampled_from(CHOICES) for p in PLAYERS}),
       second=st.fixed_dictionaries({p: st.sampled_from(CHOICES) for p in PLAYERS}),
       hold_first=st.one_of(st.none(), st.integers(0, 3)),
       hold_second=st.one_of(st.none(), st.integers(0, 3)))
def test_no_player_pays_for_another_players_choice(
        scenario: str, bets: list[Bet], deck: list[Card], first: dict[str, str],
        second: dict[str, str], hold_first: int | None, hold_second: int | None) -> None:
    """RWS-NC3P 5.7 ("all Players ... shall have the option"), MBS-R3P 5.7, 5.13.1: a player
    whose own answers are the same settles the same, whatever the other players at his box
    (or elsewhere) chose, and whether or not a hold interrupted the options."""
    one = _play(scenario, bets, deck, first, hold_first)
    two = _play(scenario, bets, deck, second, hold_second)
    # a side bet placed before any Initial Bet at its box is refused (RWS-NC3P 3.9, 5.14)
    owners = {e.wager.id: e.wager.player or "" for e in one.of(ev.WagerAccepted)}
    clause = SCENARIOS[scenario][1]
    _check_own_records(one, owners, first, clause)
    _check_own_records(two, owners, second, clause)
    settled_one, settled_two = _settled(one), _settled(two)
    for player in PLAYERS:
        own = first[player] if first[player] != "unanswered" else "continue"
        other = second[player] if second[player] != "unanswered" else "continue"
        if own != other:
            continue
        for wid in (w for w, owner in owners.items() if owner == player):
            assert settled_one[wid][:3] == settled_two[wid][:3], (
                f"{player}'s {wid} settled {settled_one[wid]} with choices {first}, "
                f"{settled_two[wid]} with {second}")


_PLACEMENT = st.tuples(st.sampled_from(PLAYERS), st.booleans(),
                       st.sampled_from((300, 500, 1_000, 2_500, 4_000, 6_000, 8_000)))


@settings(max_examples=200, deadline=None)
@given(placements=st.lists(_PLACEMENT, min_size=1, max_size=8),
       marked=st.booleans())
def test_seated_priority_whatever_the_order_of_placement(
        placements: list[tuple[str, bool, int]], marked: bool) -> None:
    """RWS-NC3P 5.1, 5.2 and 1.15 at placement, box maximum 10,000, minimum 500, with one
    Seated Player marked or nobody marked (the highest Initial Bet is then the Seated
    Player's): the box never holds more than the maximum; nothing in action is under the
    minimum; a wager under the minimum is refused, and any other is refused only when less
    than the minimum is left for it, changing nothing; every cut is journaled with the clause
    and returns exactly what it takes from the amount placed; a Seated Player's wager is never
    cut while a Standing Player's wager stays in action at the box; what no cut names is
    untouched."""
    from controller.settlement.model import BetLimit

    layout = TableLayout.for_game("rws-nc-three-pictures", "shoe",
                                  limits={"main": BetLimit(500, 10_000)})
    events: list[ev.RoundEvent] = []
    table = Harness(RoundMachine(layout, events.append), events)
    table.open()
    seated_player = next((player for player, seated, _ in placements if seated), None) \
        if marked else None
    for index, (player, _, amount) in enumerate(placements):
        wager_id = f"w{index}"
        before = {w.id: w.amount for w in table.machine.active_wagers()}
        out = table.send(cmd.PlaceWager(**DEALER, wager_id=wager_id, position="1",
                                        bet="main", amount=amount, player=player,
                                        seated=True if player == seated_player else None))
        after = {w.id: w for w in table.machine.active_wagers()}
        assert sum(w.amount for w in after.values()) <= 10_000
        assert all(w.amount >= 500 for w in after.values())
        if amount < 500:
            assert wager_id not in after and "RWS-NC3P 5.2" in out[-1].reason, out
        elif wager_id not in after:
            assert isinstance(out[0], ev.WagerRefused) and "RWS-NC3P 5.1" in out[0].reason
            assert {i: w.amount for i, w in after.items()} == before, "refused: no change"
        placed = {**before, wager_id: amount}
        cuts = [e for e in out if isinstance(e, ev.WagerReduced)]
        for cut in cuts:
            assert cut.clause == "RWS-NC3P 5.1"
            assert cut.amount + cut.returned == placed[cut.wager_id]
            assert cut.amount == (after[cut.wager_id].amount if cut.amount else 0)
        seated_now = seated_players(list(after.values()), "main")
        standing_in_action = any((w.player or w.id) not in seated_now for w in after.values())
        assert not (standing_in_action and any(
            cut.player in seated_now and cut.wager_id != wager_id for cut in cuts)), out
        named = {cut.wager_id for cut in cuts} | {wager_id}
        assert {i: a for i, a in before.items() if i not in named} == {
            i: w.amount for i, w in after.items() if i not in named}
