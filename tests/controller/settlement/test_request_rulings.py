"""``tablectl settle`` judges a round as the table would (issue 34): what a request cites is
printed as the rule that applied, so a clause, seat, removed box or table memory the game does
not have is refused with one line naming the problem, and what the texts settle is settled."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from controller.cli import main
from controller.errors import RequestError, TablectlError, WagerError
from controller.games.catalog import GAMES
from controller.games.rules import LimitPolicy
from controller.settlement import settle
from controller.settlement.request import parse_request, render

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"
SCHEMA = json.loads((ROOT / "schemas" / "settle-request.schema.json").read_text("utf-8"))

NC3P = "rws-nc-three-pictures"
MBS_3P = "mbs-three-pictures"
MBS_R3P = "mbs-royal-three-pictures"
LIVE = "live-three-pictures"
TCP = "rws-three-card-poker"


def example(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / f"settle-{name}.json").read_text(encoding="utf-8"))


def settled(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    round_ = parse_request(copy.deepcopy(doc))
    return {r["id"]: r for r in render(round_, settle(round_))["results"]}


def refusal(doc: dict[str, Any], error: type[TablectlError] = RequestError) -> str:
    with pytest.raises(error) as caught:
        settled(doc)
    message = str(caught.value)
    assert "\n" not in message
    return message


def three_pictures(game: str, *wagers: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """Box 1 Double Pictures Nine against the dealer's Plain Five, box 2 Plain Six."""
    hands = {"1": ["QD", "JH", "9C"], "2": ["3H", "2H", "AD"], "dealer": ["2D", "2S", "AC"]}
    return {"game": game, "hands": hands, "wagers": list(wagers), **extra}


def main_bet(wid: str, box: str, amount: int, player: str | None = None,
             seated: bool | None = None, bet: str = "main") -> dict[str, Any]:
    wager: dict[str, Any] = {"id": wid, "position": box, "bet": bet, "amount": amount}
    if player is not None:
        wager["player"] = player
    if seated is not None:
        wager["seated"] = seated
    return wager


# -- 1. void and removal clauses come from the game's own lists ----------------------------

@pytest.mark.parametrize(("given", "mentions"), [
    ("RWS-NC3P 9.99 (invented)", "'RWS-NC3P 9.99 (invented)' is not a void clause of RWS-NC3P"),
    ("MBS-R3P 5.9", "'MBS-R3P 5.9' is not a void clause of RWS-NC3P"),
    ("RWS-NC3P 5.5.2, 5.99", "'5.99' is not a void clause"),
    ("RWS-NC3P 5.9", "'RWS-NC3P 5.9' is not a void clause"),  # removes a hand, voids nothing
])
def test_a_void_clause_the_game_does_not_have_is_refused(given: str, mentions: str) -> None:
    """An invented void clause, or another game's, is refused naming the game's void clauses
    (the list a supervisor's void is held to, interpretation 41), so it is never printed as the
    rule that returned every bet (RWS-NC3P 5.15)."""
    doc = example("void")
    doc["void"] = given
    message = refusal(doc)
    assert message.startswith("void: ") and mentions in message
    assert "its void clauses are: 5.4, 5.4.2, 5.5, 5.5.1, 5.5.2" in message


def test_the_void_returns_clause_alone_is_not_a_cause() -> None:
    """RWS-NC3P 5.15 says what a Void round returns, not why it is void: it may stand beside a
    void clause (the example's "5.5.2, 5.15"), never alone."""
    doc = example("void")
    doc["void"] = "RWS-NC3P 5.15"
    assert "cite the clause that voids it too" in refusal(doc)


@pytest.mark.parametrize(("given", "cited"), [
    ("RWS-NC3P 5.5.2, 5.15", "RWS-NC3P 5.5.2, 5.15"),
    ("5.5.3", "RWS-NC3P 5.5.3"),
    ("rws-nc3p 5.4.2", "RWS-NC3P 5.4.2"),
    ("5.17", "RWS-NC3P 5.17"),
])
def test_a_void_clause_of_the_game_returns_every_wager_under_it(given: str, cited: str) -> None:
    """A void clause of the game, with or without its cite, returns every wager under it, cited
    in the game's own form (RWS-NC3P 5.5, 5.15)."""
    doc = example("void")
    doc["void"] = given
    assert {(r["outcome"], r["rule"]) for r in settled(doc).values()} == {("returned", cited)}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_void_clause_of_every_game_is_accepted(game: str) -> None:
    """Each game's void clauses (``void_clauses`` in the catalog) void a request of it."""
    rules = GAMES[game]
    box = rules.bet(rules.initial_bet or "win").positions[0]
    for clause in rules.void_clauses:
        doc = {"game": game, "hands": {}, "void": clause,
               "wagers": [main_bet("w", box, 100, bet=rules.initial_bet or "win")]}
        assert settled(doc)["w"]["rule"] == f"{rules.cite} {clause}"


@pytest.mark.parametrize(("game", "given", "mentions"), [
    (MBS_R3P, "MBS-R3P 7.7 made up",
     "'MBS-R3P 7.7 made up' is not a clause of MBS-R3P that removes a hand from play; its "
     "clauses that do are: 5.5"),
    (MBS_R3P, "RWS-NC3P 5.9", "'RWS-NC3P 5.9' is not a clause of MBS-R3P"),
    (NC3P, "RWS-NC3P 5.5.2", "its clauses that do are: 5.9, 5.7.3"),  # a void clause
    (NC3P, "RWS-NC3P 5.14", "'RWS-NC3P 5.14' is not a clause of RWS-NC3P"),
])
def test_a_removal_clause_the_game_does_not_have_is_refused(game: str, given: str,
                                                           mentions: str) -> None:
    """An invented clause, another game's or one that does not remove a hand (a void clause;
    5.14 returns side Bets, which settlement does by itself) is refused, naming the game's
    clauses that remove a hand, instead of being printed as the rule that returned the box's
    wagers."""
    doc = three_pictures(game, main_bet("a", "1", 100), main_bet("b", "2", 100),
                         removed_hands={"2": given})
    message = refusal(doc)
    assert message.startswith("removed_hands.2: ") and mentions in message


@pytest.mark.parametrize("game", [MBS_3P, TCP, LIVE])
def test_removed_hands_in_a_game_that_removes_no_hand_are_refused(game: str) -> None:
    """MBS-3P, RWS-3CP and LIVE-3P print no clause that takes one hand out of play (their
    irregularities void the round or are decided by the house): any removed hand is refused."""
    rules = GAMES[game]
    box, bet = rules.positions[0], rules.initial_bet or "win"
    doc = {"game": game, "hands": {}, "void": rules.void_clauses[0],
           "wagers": [main_bet("w", box, 100, bet=bet)],
           "removed_hands": {box: f"{rules.cite} 5.5"}}
    assert f"no clause of {rules.cite} removes one hand from play" in refusal(doc)


@pytest.mark.parametrize(("game", "given", "cited"), [
    (NC3P, "RWS-NC3P 5.9", "RWS-NC3P 5.9"),
    (NC3P, "5.7.3", "RWS-NC3P 5.7.3"),
    (MBS_R3P, "5.5", "MBS-R3P 5.5"),
])
def test_a_removal_clause_of_the_game_returns_the_box(game: str, given: str,
                                                     cited: str) -> None:
    """RWS-NC3P 5.9 (and 5.7.3 when every player at the box took it, as the table records it),
    MBS-R3P 5.5: the box's wagers are returned under the clause in the game's own form."""
    doc = three_pictures(game, main_bet("a", "1", 100), main_bet("b", "2", 100),
                         removed_hands={"2": given})
    by_id = settled(doc)
    assert (by_id["b"]["outcome"], by_id["b"]["rule"]) == ("returned", cited)
    assert by_id["a"]["outcome"] == "win"


# -- 2. under the minimum: refused where no clause settles it, settled where one does -------

@pytest.mark.parametrize(("game", "wager"), [
    (MBS_3P, main_bet("w", "1", 50)),
    (LIVE, main_bet("w", "p1", 50, bet="win")),
    (TCP, main_bet("w", "1", 50, bet="ante")),
])
def test_under_minimum_is_refused_where_no_clause_settles_it(game: str,
                                                            wager: dict[str, Any]) -> None:
    """MBS-3P, LIVE-3P and RWS-3CP print no clause for a wager under the minimum: the table
    refuses it at placement and so does ``settle`` (interpretations 7 and 46)."""
    bet = wager["bet"]
    doc = {"game": game, "hands": {}, "void": GAMES[game].void_clauses[0], "wagers": [wager],
           "limits": {bet: {"min": 100, "max": 1000}}}
    assert "is outside the table limits 100-1000" in refusal(doc, WagerError)


def test_rws_nc3p_under_minimum_not_noticed_is_settled_as_it_stands() -> None:
    """RWS-NC3P 5.2.1: a Bet under the minimum that the Dealer did not notice wins or loses
    accordingly. A request is the layout at "No more bets" (5.13), and a Bet the Dealer
    noticed is increased or withdrawn before then (5.2), so one still under the minimum there
    was not noticed: settled, not refused (interpretation 46)."""
    doc = three_pictures(NC3P, main_bet("a", "1", 50), limits={"main": {"min": 100,
                                                                        "max": 1000}})
    by_id = settled(doc)
    assert (by_id["a"]["outcome"], by_id["a"]["net"]) == ("win", 50)


def test_rws_nc3p_under_minimum_in_a_box_over_the_maximum_is_not_pro_rated() -> None:
    """RWS-NC3P 5.1.2: in a box over its maximum (an excess not rejected, 5.1.1), a Bet under
    the minimum is not pro-rated and wins or loses on its whole amount."""
    doc = three_pictures(NC3P, main_bet("a", "1", 1000, "ann", seated=True),
                         main_bet("b", "1", 600, "bob"), main_bet("c", "1", 50, "cat"),
                         limits={"main": {"min": 100, "max": 1000}})
    by_id = settled(doc)
    assert by_id["c"]["net"] == 50
    assert any(c["rule"] == "RWS-NC3P 5.1.2" for c in by_id["c"]["components"])


def test_mbs_r3p_under_minimum_is_settled_once() -> None:
    """MBS-R3P 5.10: the under-minimum wager is settled one time only; the request's memory
    comes back naming its player."""
    doc = three_pictures(MBS_R3P, main_bet("a", "1", 50, "ann"),
                         limits={"main": {"min": 100, "max": 1000}})
    round_ = parse_request(doc)
    out = render(round_, settle(round_))
    assert out["results"][0]["net"] == 50
    assert out["under_minimum_players"] == ["ann"]


# -- 3. one Seated Player per box (RWS-NC3P 1.15) ------------------------------------------

def test_two_seated_players_at_one_box_are_refused() -> None:
    """RWS-NC3P 1.15: the Seated Player is "the Player sitting at the betting box"; two
    different players marked seated at one box are refused, naming both wagers."""
    doc = example("rws-nc3p")
    doc["wagers"][0]["seated"] = True
    doc["wagers"][1]["seated"] = True
    message = refusal(doc, WagerError)
    assert message == ("box 1: wagers ann-main (player ann) and bob-main (player bob) are "
                       "both marked seated; a box has one Seated Player, the Player sitting "
                       "at it (RWS-NC3P 1.15)")


def test_one_seated_player_at_each_box_is_accepted() -> None:
    """The Seated Player's several wagers at his box, a seated wager without a player id (it
    cannot be told from his), and another Seated Player at another box all stand."""
    doc = three_pictures(NC3P, main_bet("a", "1", 100, "ann", seated=True),
                         main_bet("t", "1", 10, "ann", seated=True, bet="tie"),
                         main_bet("x", "1", 20, seated=True, bet="three_pictures"),
                         main_bet("b", "2", 100, "bob", seated=True),
                         main_bet("c", "2", 100, "ann", seated=False))
    assert settled(doc)["a"]["outcome"] == "win"


@pytest.mark.parametrize("game", [MBS_R3P, TCP])
def test_several_seated_players_at_one_box_elsewhere_are_accepted(game: str) -> None:
    """Outside RWS-NC3P "seated" is a seat at the table: MBS-R3P 3.10 speaks of "the seated
    Player who placed the wager first" on a position several Players bet on, and RWS-3CP 3.12
    of "all other seated Players" for the Envy Bonus."""
    if game == TCP:
        doc = {"game": game, "hands": {"1": ["AS", "KS", "QS"], "dealer": ["QC", "7D", "3D"]},
               "wagers": [main_bet("a", "1", 100, "ann", True, "ante"),
                          main_bet("b", "1", 100, "bob", True, "pair_plus")]}
    else:
        doc = three_pictures(game, main_bet("a", "1", 100, "ann", True),
                             main_bet("b", "1", 100, "bob", True))
    assert len(settled(doc)) == 2


# -- 4. the MBS-R3P 5.10 memory ------------------------------------------------------------

def test_memory_may_name_a_player_with_no_wager_this_round() -> None:
    """MBS-R3P 5.10-5.12: the memory names players whose under-minimum wager was settled in an
    earlier round; such a player need not bet this round, and is still remembered after it.
    A remembered player's new under-minimum wager is returned (5.10)."""
    doc = three_pictures(MBS_R3P, main_bet("a", "1", 50, "ann"),
                         limits={"main": {"min": 100, "max": 1000}},
                         under_minimum_players=["ann", "zed"])
    round_ = parse_request(doc)
    out = render(round_, settle(round_))
    assert (out["results"][0]["outcome"], out["results"][0]["rule"]) == \
        ("returned", "MBS-R3P 5.10")
    assert out["under_minimum_players"] == ["ann", "zed"]


@pytest.mark.parametrize(("players", "mentions"), [
    ([""], "under_minimum_players[0]: expected a player id (a non-empty string), got ''"),
    (["ann", "  "], "under_minimum_players[1]"),
    (["ann", 7], "under_minimum_players[1]: expected a player id"),
    ("ann", "under_minimum_players: expected a list of player ids"),
])
def test_memory_of_no_player_is_refused(players: Any, mentions: str) -> None:
    """A memory entry must name a player: an empty id, or one that is not a string, names
    nobody and could never match a wager's player."""
    doc = three_pictures(MBS_R3P, main_bet("a", "1", 100, "ann"),
                         under_minimum_players=players)
    assert mentions in refusal(doc)


@pytest.mark.parametrize("game", [NC3P, MBS_3P, LIVE, TCP])
def test_memory_in_a_game_without_5_10_is_refused(game: str) -> None:
    """Only MBS-R3P 5.10 remembers players settled once under the minimum; the memory in a
    request of any other game is refused (the request is probably of another game)."""
    rules = GAMES[game]
    doc = {"game": game, "hands": {}, "void": rules.void_clauses[0],
           "wagers": [main_bet("w", rules.positions[0], 100, "ann",
                               bet=rules.initial_bet or "win")],
           "under_minimum_players": []}
    assert "has no clause that remembers players" in refusal(doc)


def test_a_wager_of_an_empty_player_id_is_refused() -> None:
    """An empty player id names nobody (settlement would take it for a player in the memory
    and for nobody at a box)."""
    doc = example("rws-nc3p")
    doc["wagers"][2]["player"] = ""
    assert "wagers[2].player: expected a player id" in refusal(doc)


# -- 5. a removed hand was dealt ------------------------------------------------------------

@pytest.mark.parametrize(("game", "box", "wagers"), [
    (MBS_R3P, "5", [main_bet("a", "1", 100)]),
    (NC3P, "3", [main_bet("a", "1", 100)]),
    (NC3P, "3", [main_bet("a", "1", 100), main_bet("t", "3", 10, bet="tie")]),
])
def test_removing_a_box_that_was_never_dealt_is_refused(game: str, box: str,
                                                        wagers: list[dict[str, Any]]) -> None:
    """A hand is dealt only to a box with an Initial Bet (RWS-NC3P 3.12; MBS-R3P 3.12 with
    3.5): a box with no hand given and no main wager had no hand to remove (a Tie alone there
    is returned by RWS-NC3P 5.14, not 5.9)."""
    clause = {NC3P: "RWS-NC3P 5.9", MBS_R3P: "MBS-R3P 5.5"}[game]
    doc = three_pictures(game, *wagers, removed_hands={box: clause})
    assert f"removed_hands.{box}: box {box} was never dealt a hand" in refusal(doc)


def test_removing_a_dealt_box_without_its_cards_is_accepted() -> None:
    """A box with a main wager was dealt even when its cards are not given (a wrong count,
    MBS-R3P 5.5: two or four cards)."""
    doc = example("removed-hand")
    assert settled(doc)["m2"]["rule"] == "MBS-R3P 5.5"


# -- 6. a progressive only where the game has one -------------------------------------------

@pytest.mark.parametrize("game", [NC3P, MBS_3P, MBS_R3P, LIVE])
@pytest.mark.parametrize("field", ["progressive_jackpot", "progressive_stake"])
def test_a_progressive_in_a_game_without_one_is_refused(game: str, field: str) -> None:
    """Only RWS-3CP has a progressive wager and meter (3.11-3.13, 4.4): a meter or stake in
    a request of another game is refused, not silently ignored."""
    rules = GAMES[game]
    doc = {"game": game, "hands": {}, "void": rules.void_clauses[0], field: 500,
           "wagers": [main_bet("w", rules.positions[0], 100, bet=rules.initial_bet or "win")]}
    assert refusal(doc) == (f"{field}: {rules.cite} has no progressive jackpot (only a game "
                            f"with a progressive wager keeps a meter and a stake)")


# -- the command line and the schema ---------------------------------------------------------

def _nc3p(change: Any) -> dict[str, Any]:
    doc = example("rws-nc3p")
    change(doc)
    return doc


def _removed(change: Any) -> dict[str, Any]:
    doc = example("removed-hand")
    change(doc)
    return doc


CLI_REFUSALS = [
    ("invented void", _nc3p(lambda d: d.update(void="RWS-NC3P 9.99")), "not a void clause"),
    ("invented removal", _removed(lambda d: d.update(removed_hands={"2": "MBS-R3P 7.7"})),
     "not a clause of MBS-R3P that removes a hand"),
    ("two seated", _nc3p(lambda d: [w.update(seated=True) for w in d["wagers"][:2]]),
     "both marked seated"),
    ("memory of nobody", _removed(lambda d: d.update(under_minimum_players=[""])),
     "under_minimum_players[0]"),
    ("removed box never dealt", _removed(lambda d: d["removed_hands"].update({"5": "5.5"})),
     "box 5 was never dealt a hand"),
    ("jackpot without a progressive", _nc3p(lambda d: d.update(progressive_jackpot=100_000)),
     "RWS-NC3P has no progressive jackpot"),
]


@pytest.mark.parametrize(("doc", "mentions"), [c[1:] for c in CLI_REFUSALS],
                         ids=[c[0] for c in CLI_REFUSALS])
def test_settle_refuses_with_one_line_and_exit_2(capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path, doc: dict[str, Any],
                                                 mentions: str) -> None:
    """``tablectl settle FILE`` refuses each such round with one line naming the problem, no
    traceback and nothing on standard output, exit 2 (issue 34)."""
    path = tmp_path / "round.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert main(["settle", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    assert mentions in lines[0]


def _validator() -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(SCHEMA)
    cls.check_schema(SCHEMA)
    return cls(SCHEMA)


SCHEMA_REFUSALS = [
    ("jackpot without a progressive", _nc3p(lambda d: d.update(progressive_jackpot=0))),
    ("stake without a progressive", _nc3p(lambda d: d.update(progressive_stake=500))),
    ("memory in RWS-NC3P", _nc3p(lambda d: d.update(under_minimum_players=[]))),
    ("memory of nobody", _removed(lambda d: d.update(under_minimum_players=[" "]))),
    ("empty player id", _nc3p(lambda d: d["wagers"][0].update(player=""))),
    ("removed hand in MBS-3P", _removed(lambda d: d.update(
        game=MBS_3P, wagers=d["wagers"][:2], removed_hands={"2": "MBS-3P 5.5"}))),
]


@pytest.mark.parametrize("doc", [c[1] for c in SCHEMA_REFUSALS],
                         ids=[c[0] for c in SCHEMA_REFUSALS])
def test_schema_and_controller_both_refuse(doc: dict[str, Any]) -> None:
    """What the schema can say of these rulings (a field the game has no use for, an empty
    player id), it says, and the controller refuses the same request."""
    assert not _validator().is_valid(doc)
    with pytest.raises(TablectlError):
        settled(doc)


def test_schema_game_conditions_follow_the_catalog() -> None:
    """The schema's per-game conditions name exactly the games the catalog gives a progressive
    wager, the MBS-R3P 5.10 memory and a clause that removes a hand: one truth, two readers."""
    games: dict[str, set[str]] = {}
    for entry in SCHEMA["allOf"]:
        for field in entry["else"]["properties"]:
            games[field] = set(entry["if"]["properties"]["game"]["enum"])
    assert games["progressive_jackpot"] == games["progressive_stake"] == \
        {g for g, r in GAMES.items() if "progressive" in r.bets}
    assert games["under_minimum_players"] == \
        {g for g, r in GAMES.items() if r.limit_policy is LimitPolicy.CAP_AND_MEMORY}
    assert games["removed_hands"] == {g for g, r in GAMES.items() if r.removal_clauses}
