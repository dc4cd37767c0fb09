"""The clauses under which the table removes one hand from play are the catalog's
``removal_clauses`` (issue 34): the list ``tablectl settle`` holds a request's ``removed_hands``
to, so a round the table settled with a hand removed can be given to ``settle`` as it was
recorded, and nothing else can."""

from __future__ import annotations

import itertools

import pytest

from controller.games.catalog import GAMES
from controller.table import commands as cmd
from controller.table import events as ev
from controller.table.commands import Source
from controller.table.irregularities import Action, Context, Phase, after_settlement, rule
from tests.controller.table.conftest import DEALER, Harness, standard_hands

_CONTEXTS = [
    Context(phase, manual_device=manual, handled=handled, source=source, revealed=revealed,
            first_card=manual)
    for phase, manual, handled, source, revealed in itertools.product(
        Phase, (True, False), (True, False), (None, *Source), (True, False))
]


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_hand_the_rulings_remove_cites_a_removal_clause_of_the_game(game: str) -> None:
    """Every ruling of every irregularity, in every phase, that removes a hand (at once or when
    the cards cannot be reconstructed: RWS-NC3P 5.9, MBS-R3P 5.5) cites one of the game's
    ``removal_clauses``; the games without any never remove one."""
    rules = GAMES[game]
    cited = set()
    for kind in cmd.IrregularityKind:
        rulings = [rule(rules, kind, ctx) for ctx in _CONTEXTS]
        rulings.append(after_settlement(rules, kind))
        for ruling in rulings:
            if Action.REMOVE_HAND in (ruling.action, ruling.declined):
                assert rules.removal_clause(ruling.clause) == ruling.clause
                cited.add(ruling.clause)
    # 5.7.3 is each player's option, not a ruling: the test below
    assert cited == {f"{rules.cite} {c}" for c in rules.removal_clauses} - {"RWS-NC3P 5.7.3"}


def test_the_hand_every_player_withdrew_from_cites_a_removal_clause(make) -> None:  # noqa: ANN001
    """RWS-NC3P 5.7.3: once every player at a box has his Bet returned, the table removes the
    box's Hand under 5.7.3, one of the game's removal clauses."""
    table: Harness = make("rws-nc-three-pictures", "shoe")
    table.open()
    for wager_id, player, seated in (("ann", "ann", True), ("bob", "bob", False)):
        table.send(cmd.PlaceWager(**DEALER, wager_id=wager_id, position="1", bet="main",
                                  amount=1_000, player=player, seated=seated))
    table.close()
    table.shuffle()
    for event in table.card_events(standard_hands("rws-nc-three-pictures"))[:3]:
        table.send(event)
    table.send(cmd.ReportIrregularity(**DEALER, kind=cmd.IrregularityKind.OTHER_DEALING_ERROR))
    for player in ("bob", "ann"):
        table.send(cmd.PlayerOption(**DEALER, position="1", player=player,
                                    option=cmd.Option.WITHDRAW))
    clause = table.last(ev.HandRemoved).clause
    assert GAMES["rws-nc-three-pictures"].removal_clause(clause) == clause == "RWS-NC3P 5.7.3"
