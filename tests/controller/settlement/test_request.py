"""The JSON settlement request and result (issue 2 "Command-line contract": ``tablectl settle``),
parsed and rendered without the CLI."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from controller.errors import (
    CardError,
    HandError,
    RequestError,
    TablectlError,
    UnknownGameError,
    WagerError,
)
from controller.settlement import settle
from controller.settlement.request import parse_request, render


@pytest.fixture(name="request_doc")
def fixture_request_doc() -> dict[str, Any]:
    """A valid RWS-NC3P request: box 1 Double Pictures Nine against the dealer's Plain Five."""
    return {
        "game": "rws-nc-three-pictures",
        "hands": {"1": ["QD", "JH", "9C"], "2": ["3h", "2♥", "A♦"], "dealer": ["2D", "2S", "AC"]},
        "wagers": [
            {"id": "a", "position": "1", "bet": "main", "amount": 100},
            {"id": "b", "position": "1", "bet": "tie", "amount": 10},
            {"id": "c", "position": "2", "bet": "main", "amount": 25, "player": "ann",
             "seated": True},
        ],
    }


def settle_doc(doc: dict[str, Any]) -> dict[str, Any]:
    round_ = parse_request(doc)
    return render(round_, settle(round_))


def test_result_shape_and_values(request_doc: dict[str, Any]) -> None:
    """The result holds each hand's cards and name and one entry per wager in request order,
    with id, outcome, net and rule (issue 2 settle contract; RWS-NC3P 3.13.1, 4.1, 1.8)."""
    out = settle_doc(request_doc)
    assert out["hands"]["1"] == {"cards": ["QD", "JH", "9C"], "name": "Double Pictures Nine"}
    assert out["hands"]["2"] == {"cards": ["3H", "2H", "AD"], "name": "Plain Six"}
    assert out["hands"]["dealer"]["name"] == "Plain Five"
    assert [r["id"] for r in out["results"]] == ["a", "b", "c"]
    for entry in out["results"]:
        assert {"id", "outcome", "net", "rule"} <= set(entry)
        assert entry["outcome"] in {"win", "lose", "push", "returned"}
    by_id = {r["id"]: r for r in out["results"]}
    assert (by_id["a"]["outcome"], by_id["a"]["net"]) == ("win", 100)
    assert (by_id["b"]["outcome"], by_id["b"]["net"]) == ("lose", -10)
    assert (by_id["c"]["outcome"], by_id["c"]["net"]) == ("win", 12)  # 1 to 2 on 25, unit 1


def test_rounding_unit_in_the_request(request_doc: dict[str, Any]) -> None:
    """``rounding_unit`` sets the table's smallest unit: 1 to 2 on 25 pays 10 at unit 5."""
    request_doc["rounding_unit"] = 5
    by_id = {r["id"]: r for r in settle_doc(request_doc)["results"]}
    assert by_id["c"]["net"] == 10


def test_limits_in_the_request(request_doc: dict[str, Any]) -> None:
    """``limits`` apply per bet type: a 100 main bet in a box capped at 60 plays 60 (RWS-NC3P
    5.1.1)."""
    request_doc["limits"] = {"main": {"min": 10, "max": 60}}
    by_id = {r["id"]: r for r in settle_doc(request_doc)["results"]}
    assert by_id["a"]["net"] == 60


def test_three_card_poker_request_reports_the_meter() -> None:
    """A 3CP request carries the jackpot meter in and the meter after the round out (RWS-3CP
    4.4); an Ante with Play plays, an Ante alone has folded (3.8)."""
    doc = {
        "game": "rws-three-card-poker",
        "hands": {"1": ["AS", "KS", "QS"], "2": ["6s", "4h", "2d"], "dealer": ["QC", "7D", "3D"]},
        "wagers": [
            {"id": "a1", "position": "1", "bet": "ante", "amount": 100},
            {"id": "p1", "position": "1", "bet": "play", "amount": 100},
            {"id": "j1", "position": "1", "bet": "progressive", "amount": 500},
            {"id": "a2", "position": "2", "bet": "ante", "amount": 100},
        ],
        "progressive_jackpot": 2_000_000,
    }
    out = settle_doc(doc)
    by_id = {r["id"]: r for r in out["results"]}
    assert by_id["a1"]["net"] == 100 + 5 * 100       # 4.1 + 4.3 straight flush bonus
    assert by_id["p1"]["net"] == 100
    assert by_id["j1"]["net"] == 2_000_000 - 500      # 100% of the meter, paid for the stake
    assert by_id["a2"]["net"] == -100                 # fold (3.8.1)
    assert out["progressive_jackpot"] == 0
    assert "components" in by_id["a1"]


def test_live_request_uses_banker_and_p_positions() -> None:
    """LIVE-3P positions are p1..p3 and the dealer hand is "banker" (issue 2 settle contract)."""
    doc = {"game": "live-three-pictures",
           "hands": {"p1": ["JS", "3H", "6D"], "banker": ["QS", "10H", "9D"]},
           "wagers": [{"id": "t", "position": "p1", "bet": "tie", "amount": 10}]}
    out = settle_doc(doc)
    assert out["hands"]["p1"]["name"] == "Single Knights Nine"
    assert out["results"][0]["net"] == 8 * 10


Mutation = Callable[[dict[str, Any]], object]

INVALID: list[tuple[str, Mutation, type[TablectlError], str]] = [
    ("unknown game", lambda d: d.update(game="blackjack"), UnknownGameError, "blackjack"),
    ("bad card token", lambda d: d["hands"]["1"].__setitem__(2, "QX"), CardError, "QX"),
    ("duplicate card", lambda d: d["hands"]["1"].__setitem__(2, "2D"), CardError, "2D"),
    ("two-card hand", lambda d: d["hands"]["1"].pop(), HandError, "1"),
    ("unknown bet", lambda d: d["wagers"][0].update(bet="bogus"), WagerError, "bogus"),
    ("bad position", lambda d: d["wagers"][0].update(position="9"), WagerError, "9"),
    ("dealer hand named banker", lambda d: d["hands"].update(banker=["3D", "4D", "5D"]),
     RequestError, "banker"),
    ("missing dealer hand", lambda d: d["hands"].pop("dealer"), RequestError, "dealer"),
    ("float amount", lambda d: d["wagers"][0].update(amount=10.5), RequestError,
     "wagers[0].amount"),
    ("string amount", lambda d: d["wagers"][0].update(amount="100"), RequestError,
     "wagers[0].amount"),
    ("boolean amount", lambda d: d["wagers"][0].update(amount=True), RequestError,
     "wagers[0].amount"),
    ("negative amount", lambda d: d["wagers"][0].update(amount=-5), RequestError, "-5"),
    ("amount 10**35", lambda d: d["wagers"][0].update(amount=10**35), RequestError,
     "is outside 0-1000000000000 minor units"),
    ("amount 1e35 as a float", lambda d: d["wagers"][0].update(amount=1e35), RequestError,
     "wagers[0].amount"),
    ("jackpot 10**26", lambda d: d.update(progressive_jackpot=10**26), RequestError,
     "progressive_jackpot"),
    ("progressive stake -100", lambda d: d.update(progressive_stake=-100), RequestError,
     "progressive_stake: -100"),
    ("progressive stake 0", lambda d: d.update(progressive_stake=0), RequestError,
     "progressive_stake: must be at least 1"),
    ("unknown request field", lambda d: d.update(limts={}), RequestError,
     "request: unknown field 'limts'"),
    ("unknown wager field", lambda d: d["wagers"][0].update(ammount=5), RequestError,
     "wagers[0]: unknown field 'ammount'"),
    ("unknown limit field", lambda d: d.update(limits={"main": {"min": 1, "max": 9, "x": 1}}),
     RequestError, "limits.main: unknown field 'x'"),
    ("removed hand at no position", lambda d: d.update(removed_hands={"9": "RWS-NC3P 5.9"}),
     RequestError, "removed_hands"),
    ("removed hand without a clause", lambda d: d.update(removed_hands={"1": ""}),
     RequestError, "removed_hands.1"),
    ("void without a clause", lambda d: d.update(void=True), RequestError, "void"),
    ("zero amount", lambda d: d["wagers"][0].update(amount=0), WagerError, "amount"),
    ("missing amount", lambda d: d["wagers"][0].pop("amount"), RequestError,
     "wagers[0].amount"),
    ("missing id", lambda d: d["wagers"][0].pop("id"), RequestError, "id"),
    ("missing bet", lambda d: d["wagers"][0].pop("bet"), RequestError, "bet"),
    ("missing hands", lambda d: d.pop("hands"), RequestError, "hands"),
    ("missing wagers", lambda d: d.pop("wagers"), RequestError, "wagers"),
    ("missing game", lambda d: d.pop("game"), RequestError, "game"),
    ("duplicate wager id", lambda d: d["wagers"][1].update(id="a"), WagerError, "a"),
    ("hand not a list", lambda d: d["hands"].update({"1": "QD JH 9C"}), RequestError, "hands.1"),
    ("float limit", lambda d: d.update(limits={"main": {"min": 1.5, "max": 100}}), RequestError,
     "limits.main.min"),
    ("limit for unknown bet", lambda d: d.update(limits={"bogus": {"min": 1, "max": 100}}),
     WagerError, "bogus"),
    ("seated not a bool", lambda d: d["wagers"][2].update(seated="yes"), RequestError,
     "seated"),
    ("rounding unit zero", lambda d: d.update(rounding_unit=0), RequestError, "rounding"),
]


@pytest.mark.parametrize(("mutate", "error", "mentions"), [i[1:] for i in INVALID],
                         ids=[i[0] for i in INVALID])
def test_invalid_request_raises_a_named_error(request_doc: dict[str, Any], mutate: Mutation,
                                              error: type[TablectlError], mentions: str) -> None:
    """Every invalid request raises the controller's own error, naming the problem, so the CLI
    can print one line (issue 2: invalid input exits 2 with one clear line)."""
    doc = copy.deepcopy(request_doc)
    mutate(doc)
    with pytest.raises(error) as caught:
        settle_doc(doc)
    assert mentions in str(caught.value)
    assert "\n" not in str(caught.value)


def test_removed_hand_returns_its_wagers(request_doc: dict[str, Any]) -> None:
    """``removed_hands`` expresses RWS-NC3P 5.9 from outside: the removed box's bets are
    returned with the clause given, the other box is settled as usual."""
    request_doc["removed_hands"] = {"1": "RWS-NC3P 5.9"}
    by_id = {r["id"]: r for r in settle_doc(request_doc)["results"]}
    assert [(by_id[w]["outcome"], by_id[w]["net"]) for w in "ab"] == [("returned", 0)] * 2
    assert by_id["a"]["rule"] == "RWS-NC3P 5.9"
    assert (by_id["c"]["outcome"], by_id["c"]["net"]) == ("win", 12)


def test_removed_hand_needs_no_cards_mbs_r3p() -> None:
    """MBS-R3P 5.5: a hand removed from play after a wrong count needs no cards in the request
    (it may have had two or four) and its wager is returned."""
    doc = {"game": "mbs-royal-three-pictures", "removed_hands": {"2": "MBS-R3P 5.5"},
           "hands": {"1": ["QD", "JH", "9C"], "dealer": ["2D", "2S", "AC"]},
           "wagers": [{"id": "a", "position": "1", "bet": "main", "amount": 100},
                      {"id": "b", "position": "2", "bet": "main", "amount": 100}]}
    by_id = {r["id"]: r for r in settle_doc(doc)["results"]}
    assert (by_id["a"]["net"], by_id["b"]["outcome"], by_id["b"]["rule"]) == \
        (100, "returned", "MBS-R3P 5.5")


def test_void_round_returns_every_wager(request_doc: dict[str, Any]) -> None:
    """``void`` expresses RWS-NC3P 5.15: every Bet of a Void round is returned, under the
    clause given; no hand is needed."""
    request_doc["void"] = "RWS-NC3P 5.5.2, 5.15"
    request_doc["hands"] = {}
    out = settle_doc(request_doc)
    assert [(r["outcome"], r["net"], r["rule"]) for r in out["results"]] == \
        [("returned", 0, "RWS-NC3P 5.5.2, 5.15")] * 3


def test_request_must_be_an_object() -> None:
    """A JSON array is not a request."""
    with pytest.raises(RequestError):
        parse_request([1, 2, 3])
