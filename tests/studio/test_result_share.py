"""A game server's share of a settlement (issue 28): where every result is its own (one game
server at the table, the studio's normal case) the gateway passes the results' text on as the
watch line carried it, with its ``<game server>/`` cut from each wager id, instead of decoding
and encoding 2,000 results again; what the game server receives is byte for byte what the
general path makes. With two game servers' wagers at one table each still sees only its own."""

from __future__ import annotations

import json
from typing import Any

from controller.journal.record import canonical_json
from controller.service.control.server import watch_text
from controller.settlement.model import Outcome
from controller.studio.book import EncodedEvent, RoundBook
from controller.studio.server import encode_answer
from tests.studio.conftest import Studio

HANDS = [["p1", ["AS", "KD", "QH"]], ["banker", ["2C", "3C", "4C"]]]


def _result(wager_id: str, net: int) -> dict[str, Any]:
    return {"wager_id": wager_id, "outcome": "win" if net > 0 else "lose", "net": net,
            "stake": 500, "rule": "LIVE-3P Pays: Win 1 to 1, \u00e9 \"quoted\"",
            "components": [{"amount": net, "rule": "LIVE-3P Pays", "what": "win"}]}


def _watch_line(kind: str, results: list[dict[str, Any]]) -> tuple[bytes, dict[str, Any]]:
    """A watch line as the service sends a journaled ending: the journal's canonical payload
    text behind ``{"type":...``; and the event it decodes to."""
    payload: dict[str, Any] = {"round": 7, "settlement": {"memory": {"results": []},
                                                         "results": results}}
    if kind == "RoundSettled":
        payload |= {"hands": HANDS, "returned_positions": []}
    else:
        payload |= {"reason": "void", "clause": "LIVE-3P T&C 6"}
    line = b'{"id":3,"event":' + watch_text(kind, canonical_json(payload)) + b"}"
    return line, json.loads(line)["event"]


def _general(book: RoundBook, client: str) -> bytes:
    """The answer the general path gives: the same book read without the received text."""
    state, events = book.read(7, client, 0, 0)
    for event in events:
        assert not isinstance(event, EncodedEvent)
    return encode_answer({"ok": True, "round": 7, "state": state, "next": len(events),
                          "events": events})


def _answer(book: RoundBook, client: str) -> tuple[bytes, list[Any]]:
    state, events = book.read(7, client, 0, 0)
    return encode_answer({"ok": True, "round": 7, "state": state, "next": len(events),
                          "events": events}), events


def test_one_game_servers_settlement_is_passed_on_as_received() -> None:
    """gs1's every result: its answer holds the received text (no result decoded again to
    be encoded), byte for byte the general path's answer, each id without ``gs1/``; gs2
    (whose share is none) gets no result."""
    results = [_result(f"gs1/w{i}", (-1) ** i * 500) for i in range(300)]
    for kind in ("RoundSettled", "RoundVoided"):
        line, event = _watch_line(kind, results)
        book, general = RoundBook(), RoundBook()
        book.add({"type": "CardAssigned", "round": 7, "position": "p1", "card": "AS",
                  "index": 0}, b"")
        general.add({"type": "CardAssigned", "round": 7, "position": "p1", "card": "AS",
                     "index": 0})
        book.add(event, line)
        general.add(event)  # no line: the general path
        fast, events = _answer(book, "gs1")
        assert isinstance(events[-1], EncodedEvent)
        assert fast == _general(general, "gs1")
        shown = json.loads(fast)["events"][-1]
        assert shown["type"] == kind and shown["round"] == 7
        assert [r["wager_id"] for r in shown["results"]] == [f"w{i}" for i in range(300)]
        assert shown["results"][1] == {**results[1], "wager_id": "w1"}
        other, events = _answer(book, "gs2")
        assert not isinstance(events[-1], EncodedEvent)
        assert json.loads(other)["events"][-1]["results"] == []


def test_two_game_servers_each_get_only_their_own() -> None:
    """gs1's and gs2's wagers in one settlement (and one placed at the table itself): the
    received text is not passed on; each reads exactly its own results."""
    results = [_result("gs1/a", 500), _result("gs2/a", -500), _result("table-w", 100),
               _result("gs1/b", -500)]
    line, event = _watch_line("RoundSettled", results)
    book = RoundBook()
    book.add(event, line)
    for client, own in (("gs1", ["a", "b"]), ("gs2", ["a"])):
        answer, events = _answer(book, client)
        assert not isinstance(events[-1], EncodedEvent)
        shown = json.loads(answer)["events"][-1]["results"]
        assert [r["wager_id"] for r in shown] == own
        assert [r["net"] for r in shown] == [r["net"] for r in results
                                             if r["wager_id"].startswith(f"{client}/")]


def test_a_line_not_in_the_journals_form_takes_the_general_path() -> None:
    """A watch line whose results are not its last text (an older service's key order), or
    whose text holds another count of the owner's ids than results, is not cut."""
    results = [_result("gs1/a", 500), _result("gs1/b", -500)]
    event = {"type": "RoundSettled", "round": 7, "hands": HANDS, "returned_positions": [],
             "settlement": {"results": results, "memory": {}}}
    unsorted = json.dumps({"id": 3, "event": event}, separators=(",", ":")).encode()
    line, _ = _watch_line("RoundSettled", results)
    padded = line.replace(b'"components":[{',
                          b'"components":[{"x":"\\"wager_id\\":\\"gs1/",', 1)
    spoofed = line.replace(b'"components":[{', b'"components":[{"x\\"wager_id":"gs1/z",', 1)
    for received in (unsorted, spoofed):
        book = RoundBook()
        book.add(json.loads(received)["event"], received)
        answer, events = _answer(book, "gs1")
        assert not isinstance(events[-1], EncodedEvent), received[:60]
        assert [r["wager_id"] for r in json.loads(answer)["events"][-1]["results"]] == \
            ["a", "b"]
    book = RoundBook()
    book.add(json.loads(padded)["event"], padded)  # an escaped look-alike is not an id
    answer, events = _answer(book, "gs1")
    assert isinstance(events[-1], EncodedEvent)
    result = json.loads(answer)["events"][-1]["results"][0]
    assert result["components"][0]["x"] == '"wager_id":"gs1/'


def test_through_the_gateway_each_game_server_reads_its_own_share(studio: Studio) -> None:
    """The real service, gateway and TLS: gs1's batch, and at the table's own socket a
    wager of gs2's and one of the dealer's in the same round; gs1 reads its two results,
    without its prefix, and nothing else."""
    status, answer = studio.call("POST", "/v1/rounds", {"key": "r-share",
                                                        "betting_seconds": 60})
    assert status == 200, answer
    number = int(answer["round"])
    wager = {"id": "a1", "member": "m1", "position": "p1", "bet": "win", "amount": 500}
    status, answer = studio.call("POST", f"/v1/rounds/{number}/wagers", {
        "key": "b1", "wagers": [wager, {**wager, "id": "a2", "bet": "lose"}]})
    assert status == 200 and answer["accepted"] == 2, answer
    with studio.control() as control:
        for own in ("gs2/a1", "dealer-1"):
            control.request("wager.place", {"wager_id": own, "position": "p2", "bet": "win",
                                            "amount": 500})
        status, answer = studio.call("POST", f"/v1/rounds/{number}/close", {"key": "c1"})
        assert status == 200, answer
    after, results = 0, None
    while results is None:
        status, answer = studio.call("GET", f"/v1/rounds/{number}/events?after={after}&wait=20")
        assert status == 200, answer
        after = answer["next"]
        for event in answer["events"]:
            if event["type"] == "RoundSettled":
                results = event["results"]
    assert sorted(r["wager_id"] for r in results) == ["a1", "a2"]
    # the deal is the shoe's own (unseeded): any outcome the settlement names, a push too
    assert {r["outcome"] for r in results} <= {o.value for o in Outcome}
