"""Positions and clauses an operator types are checked against the table before anything acts
on them (issue 24, finding 7): a box that is not on the cloth, or a clause the game's rule text
does not have, is refused with what the table does have, and never reaches a ruling, a hold or
the journal's outcome records."""

from __future__ import annotations

import pytest

from controller.games.catalog import GAMES
from controller.table import commands as cmd
from controller.table import events as ev
from tests.controller.table.conftest import DEALER, SUPERVISOR, Harness, cards, standard_hands

THREE_CARD = "rws-three-card-poker"
"""Seven boxes (RWS-3CP Appendix A)."""


def _refusal(events: list[ev.RoundEvent]) -> str:
    refused = [e for e in events if isinstance(e, ev.CommandRefused)]
    assert refused, f"not refused: {[type(e).__name__ for e in events]}"
    assert len(events) == len(refused), events  # nothing else happened
    return refused[0].reason


def test_an_irregularity_at_a_box_the_table_does_not_have_is_refused(make) -> None:  # noqa: ANN001
    """``report exposed_card --position 42`` on a 7-box table: refused naming the boxes (and
    the dealer's hand, which an irregularity may concern); nothing is ruled."""
    table: Harness = make(THREE_CARD)
    table.ready()
    out = table.send(cmd.ReportIrregularity(**DEALER, kind=cmd.IrregularityKind.EXPOSED_CARD,
                                            position="42"))
    assert _refusal(out) == ("position 42 is not on this table: its hands are "
                             "1, 2, 3, 4, 5, 6, 7, dealer")
    assert not table.of(ev.IrregularityRuled)
    assert table.state == "shuffled"


def test_an_irregularity_at_a_box_of_the_table_is_ruled(make) -> None:  # noqa: ANN001
    """The check refuses only what the table does not have: box 7 is on the cloth."""
    table: Harness = make(THREE_CARD)
    table.ready()
    out = table.send(cmd.ReportIrregularity(**DEALER, kind=cmd.IrregularityKind.EXPOSED_CARD,
                                            position="7"))
    assert not [e for e in out if isinstance(e, ev.CommandRefused)]
    assert table.of(ev.IrregularityRuled)


def test_a_decision_for_a_box_the_table_does_not_have_names_the_boxes(make) -> None:  # noqa: ANN001
    """RWS-3CP 3.8: only a box of the table decides; box 8 is not on a 7-box cloth."""
    table: Harness = make(THREE_CARD)
    table.ready()
    table.deal(standard_hands(THREE_CARD))
    assert table.state == "decisions"
    out = table.send(cmd.PlayerDecision(**DEALER, position="8", choice=cmd.Choice.PLAY))
    assert _refusal(out) == "box 8 is not on this table: its boxes are 1, 2, 3, 4, 5, 6, 7"


def test_an_option_for_a_box_the_table_does_not_have_names_the_boxes(make) -> None:  # noqa: ANN001
    """A player's option (RWS-NC3P 5.7) at a box off the configured cloth is refused."""
    table: Harness = make("rws-nc-three-pictures", "shuffler", boxes=("1", "2", "3"))
    table.ready()
    out = table.send(cmd.PlayerOption(**DEALER, position="5", option=cmd.Option.WITHDRAW))
    assert _refusal(out) == "box 5 is not on this table: its boxes are 1, 2, 3"


def test_a_reconstruction_naming_a_box_the_table_does_not_have_is_refused(
        make) -> None:  # noqa: ANN001
    """Moves and hands of a reconstruction (RWS-NC3P 5.5.4) name only the table's hands;
    the hold stays for a decision that does."""
    table: Harness = make("rws-nc-three-pictures", "shuffler", boxes=("1", "2", "3"))
    table.ready()
    table.deal(standard_hands("rws-nc-three-pictures"))
    table.send(cmd.ReportIrregularity(**DEALER, kind=cmd.IrregularityKind.DEALT_INCORRECTLY,
                                      handled=False))
    assert table.state == "hold"
    out = table.send(cmd.SupervisorDecision(**SUPERVISOR,
                                            action=cmd.SupervisorAction.RECONSTRUCT,
                                            moves=(("1", "9"), ("9", "1"))))
    assert _refusal(out) == ("move 9 is not on this table: its hands are 1, 2, 3, dealer")
    out = table.send(cmd.SupervisorDecision(
        **SUPERVISOR, action=cmd.SupervisorAction.RECONSTRUCT,
        hands=(("x\u202e", cards("KS", "QH", "9C")),)))
    assert _refusal(out) == ("hand 'x\\u202e' is not on this table: its hands are "
                             "1, 2, 3, dealer")
    assert table.state == "hold"
    assert not table.of(ev.HandsMoved)


def test_a_void_citing_a_clause_the_game_does_not_have_is_refused(make) -> None:  # noqa: ANN001
    """``supervisor void --clause "XYZ 99.99 made up"``: refused naming the game's void
    clauses; the round goes on, unvoided."""
    table: Harness = make("rws-nc-three-pictures", "shuffler")
    table.ready()
    out = table.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.VOID,
                                            reason="camera fault", clause="XYZ 99.99 made up"))
    assert _refusal(out) == (
        "'XYZ 99.99 made up' is not a void clause of RWS-NC3P; its void clauses are: 5.4, "
        "5.4.2, 5.5, 5.5.1, 5.5.2, 5.5.3, 5.5.4, 5.5.5, 5.11, 5.17")
    assert not table.of(ev.RoundVoided)
    assert table.state == "shuffled"


def test_a_void_citing_another_games_clause_is_refused(make) -> None:  # noqa: ANN001
    """MBS-3P has no 5.17 (that is RWS-NC3P's general provision): refused on an MBS-3P
    table, even with the right game's cite missing."""
    table: Harness = make("mbs-three-pictures", "shuffler")
    table.ready()
    out = table.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.VOID,
                                            reason="r", clause="RWS-NC3P 5.17"))
    assert "its void clauses are: 5.1, 5.1.1, 5.2, 5.3, 5.4" in _refusal(out)


@pytest.mark.parametrize(("given", "cited"), [
    ("5.5.3", "RWS-NC3P 5.5.3"), ("RWS-NC3P 5.5.2", "RWS-NC3P 5.5.2"),
    ("5.5.1, 5.5.2", "RWS-NC3P 5.5.1, 5.5.2"),
])
def test_a_void_citing_a_void_clause_of_the_game_voids_under_it(make, given: str,  # noqa: ANN001
                                                                cited: str) -> None:
    """A clause of the game's text under which a round is void: the void cites it in the
    game's own form (RWS-NC3P 5.5, 5.15)."""
    table: Harness = make("rws-nc-three-pictures", "shuffler")
    table.ready()
    table.send(cmd.SupervisorDecision(**SUPERVISOR, action=cmd.SupervisorAction.VOID,
                                      reason="deck not shuffled", clause=given))
    assert table.last(ev.RoundVoided).clause == cited


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_void_clause_is_in_its_game_text_section(game: str) -> None:
    """Each game's void clauses are clause numbers of its irregularity sections (5, 6) or,
    for LIVE-3P, of its numbered terms and conditions: no invented clause can be cited."""
    rules = GAMES[game]
    assert rules.void_clauses
    for clause in rules.void_clauses:
        assert clause.split()[-1].split(".")[0] in {"5", "6", "1", "2", "4"}, clause
        assert rules.void_clause(clause) == f"{rules.cite} {clause}"
