"""Bad input from a game server: each a clear refusal, recorded with the client's identity
(the table's journal for what the table refuses, the gateway's ledger for what it refuses
itself), nothing lost, nothing settled twice."""

from __future__ import annotations

import json
import ssl
from pathlib import Path

import pytest

from controller.journal.reader import iter_records
from tests.studio.conftest import Studio

WAGER = {"id": "a1", "member": "m1", "position": "p1", "bet": "win", "amount": 500}


def _open(studio: Studio, key: str, seconds: int = 60) -> int:
    status, answer = studio.call("POST", "/v1/rounds", {"key": key, "betting_seconds": seconds})
    assert status == 200, answer
    return int(answer["round"])


def _refusals(studio: Studio, code: str) -> list[dict[str, object]]:
    return [r for r in studio.ledger_records() if r["kind"] == "refusal" and r["code"] == code]


def _settled(studio: Studio, number: int) -> list[dict[str, object]]:
    """The round's events to its end, as gs1 reads them; the results."""
    after = 0
    while True:
        status, answer = studio.call("GET", f"/v1/rounds/{number}/events?after={after}&wait=20")
        assert status == 200, answer
        after = answer["next"]
        for event in answer["events"]:
            if event["type"] in ("RoundSettled", "RoundVoided"):
                return list(event["results"])


def test_bad_wagers_are_refused_by_the_table_and_journaled(studio: Studio) -> None:
    """An unknown position and a wager after the window are the table's to refuse: each is
    answered with the table's reason and journaled with the game server's identity; the good
    wagers of the same batch are placed and settled once."""
    number = _open(studio, "r-bad")
    status, answer = studio.call("POST", f"/v1/rounds/{number}/wagers", {"key": "b1", "wagers": [
        WAGER, {**WAGER, "id": "a2", "position": "p9"}]})
    assert status == 200
    assert [w["status"] for w in answer["wagers"]] == ["accepted", "refused"]
    assert "box p9 is not on this table's layout" in answer["wagers"][1]["reason"]
    status, _ = studio.call("POST", f"/v1/rounds/{number}/close", {"key": "c1"})
    assert status == 200
    status, late = studio.call("POST", f"/v1/rounds/{number}/wagers", {"key": "b2", "wagers": [
        {**WAGER, "id": "a3"}]})
    assert status == 200 and late["accepted"] == 0, late
    # the table's own reason, which names its state (closed, dealing or settled by now)
    assert late["wagers"][0]["status"] == "refused" and late["wagers"][0]["reason"], late
    results = _settled(studio, number)
    assert [r["wager_id"] for r in results] == ["a1"]

    refused = [r.payload for r in iter_records([studio.journal])
               if r.event_type == "input_command" and r.payload["type"] == "PlaceWagers"
               and {w["wager_id"] for w in r.payload["fields"]["wagers"]} & {"gs1/a2",
                                                                            "gs1/a3"}]
    assert [p["fields"]["actor"].split(" (")[0] for p in refused] == [
        "gs1 [operator via studio b1]", "gs1 [operator via studio b2]"]


def test_a_resent_batch_gets_the_same_answer_and_a_reused_key_is_refused(
        studio: Studio) -> None:
    """The same key and content: the same answer, nothing placed twice. The same key with
    other content: 409, recorded with the client, nothing placed."""
    number = _open(studio, "r-key")
    body = {"key": "k1", "wagers": [WAGER]}
    first = studio.call("POST", f"/v1/rounds/{number}/wagers", body)
    again = studio.call("POST", f"/v1/rounds/{number}/wagers", body)
    assert first[0] == again[0] == 200
    assert again[1] == {**first[1], "replayed": True}
    status, reused = studio.call("POST", f"/v1/rounds/{number}/wagers", {
        "key": "k1", "wagers": [{**WAGER, "amount": 5000}]})
    assert (status, reused["code"]) == (409, "key_reused"), reused
    assert _refusals(studio, "key_reused")[0]["client"] == "gs1"
    with studio.control() as control:
        assert [w["id"] for w in control.request("wager.list")["wagers"]] == ["gs1/a1"]
    studio.call("POST", f"/v1/rounds/{number}/close", {"key": "c-key"})
    assert [(r["wager_id"], r["stake"]) for r in _settled(studio, number)] == [("a1", 500)]


def test_a_batch_over_the_documented_size_is_refused_whole(studio: Studio) -> None:
    """``studio.max_batch`` (100 here): one more is refused with 413 before any is placed."""
    number = _open(studio, "r-big")
    wagers = [{**WAGER, "id": f"w{n}"} for n in range(101)]
    status, answer = studio.call("POST", f"/v1/rounds/{number}/wagers",
                                 {"key": "big", "wagers": wagers})
    assert (status, answer["code"]) == (413, "batch_too_large"), answer
    assert "at most 100" in answer["message"]
    assert _refusals(studio, "batch_too_large")[0]["client"] == "gs1"
    with studio.control() as control:
        assert control.request("wager.list")["wagers"] == []


def test_clients_without_a_valid_certificate_are_refused(studio: Studio,
                                                         foreign_pki: Path) -> None:
    """No certificate, or one from another CA: the TLS handshake fails; a certificate from
    the right CA for a name not in ``studio.clients``: 403. Each is in the ledger with the
    peer's address or name; none reaches the table."""
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        studio.call("GET", "/v1/status", identity="")
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        studio.call("GET", "/v1/status", identity="gs1", pki=foreign_pki)
    status, answer = studio.call("POST", "/v1/rounds", {"key": "x", "betting_seconds": 5},
                                 identity="intruder")
    assert (status, answer["code"]) == (403, "not_a_client"), answer
    tls = _refusals(studio, "tls")
    assert len(tls) == 2 and all(r["client"] == "unauthenticated 127.0.0.1" for r in tls)
    assert _refusals(studio, "not_a_client")[0]["client"].startswith("unlisted intruder")
    with studio.control() as control:
        assert control.request("round.status")["state"] in ("idle", None)


def test_a_voided_round_tells_the_game_server_which_wagers_return(studio: Studio) -> None:
    """A round voided (LIVE-3P T&C: management may void) returns every wager: the game
    server reads RoundVoided with each of its wagers, net 0; another game server's wagers are
    not shown to it."""
    number = _open(studio, "r-void")
    studio.call("POST", f"/v1/rounds/{number}/wagers", {"key": "v1", "wagers": [
        WAGER, {**WAGER, "id": "a2", "bet": "tie"}]})
    with studio.control() as control:
        control.request("supervisor.void", {"reason": "exposed card while bets are offered"},
                        actor="supervisor:test")
    results = _settled(studio, number)
    assert sorted((r["wager_id"], r["net"], r["outcome"]) for r in results) == [
        ("a1", 0, "returned"), ("a2", 0, "returned")], json.dumps(results)
    status, answer = studio.call("GET", f"/v1/rounds/{number}/events", identity="gs2")
    assert (status, answer["code"]) == (403, "not_yours")


@pytest.mark.parametrize("studio", ["limits"], indirect=True)
def test_each_wager_of_a_batch_is_judged_alone_and_the_answer_is_what_the_table_holds(
        studio: Studio) -> None:
    """Issue 33, finding 1: rows the table refuses (over the limit, a bet the game lacks, a bet
    not offered at the position, an amount not a positive whole number) between good rows.
    The answer marks exactly those refused, each with its own reason; the good rows before and
    after them are accepted; ``bets_closed`` holds exactly the accepted ones, and only they are
    settled. The batch is one input, never a ``command_refused``."""
    number = _open(studio, "r-mixed")
    rows = [{**WAGER, "id": "alice", "member": "alice", "amount": 1000},
            {**WAGER, "id": "bob", "member": "bob", "amount": 100_001},
            {**WAGER, "id": "carol", "member": "carol", "amount": 1000},
            {**WAGER, "id": "dan", "member": "dan", "bet": "dragon"},
            {**WAGER, "id": "eve", "member": "eve", "position": "banker"},
            {**WAGER, "id": "fay", "member": "fay", "amount": 1000, "position": "p2"}]
    status, answer = studio.call("POST", f"/v1/rounds/{number}/wagers",
                                 {"key": "mixed", "wagers": rows})
    assert status == 200, answer
    outcome = {w["id"]: w["status"] for w in answer["wagers"]}
    assert outcome == {"alice": "accepted", "bob": "refused", "carol": "accepted",
                       "dan": "refused", "eve": "refused", "fay": "accepted"}, answer
    reasons = {w["id"]: w["reason"] for w in answer["wagers"] if w["status"] == "refused"}
    assert "outside the table limits" in reasons["bob"]
    assert "no bet 'dragon'" in reasons["dan"]
    assert "no position 'banker' for win" in reasons["eve"]
    assert (answer["accepted"], answer["refused"]) == (3, 3)
    studio.call("POST", f"/v1/rounds/{number}/close", {"key": "c-mixed"})
    assert sorted(r["wager_id"] for r in _settled(studio, number)) == ["alice", "carol", "fay"]
    records = list(iter_records([studio.journal]))
    closed = [r.payload for r in records if r.event_type == "bets_closed"]
    assert sorted(w["id"] for w in closed[-1]["wagers"]) == ["gs1/alice", "gs1/carol",
                                                             "gs1/fay"]
    assert not [r for r in records if r.event_type == "command_refused"
                and r.payload.get("command") == "PlaceWagers"]


def test_the_http_layers_refusals_are_json(studio: Studio) -> None:
    """Issue 33, finding 5: a method the API has not (DELETE) and a header over the stdlib's
    line bound were HTML pages (501, 431); they are JSON refusals a game server can switch on,
    and the DELETE is 405 naming the methods there are."""
    status, answer = studio.call("DELETE", "/v1/status")
    assert (status, answer["ok"], answer["code"]) == (405, False, "method_not_allowed")
    assert "DELETE" in answer["message"]
    status, answer = studio.call("GET", "/v1/status", headers={"X-Long": "x" * 70_000})
    assert (status, answer["code"]) == (431, "header_too_large"), answer


def test_a_cursor_past_the_rounds_events_is_refused_not_answered_empty(studio: Studio) -> None:
    """Issue 33, finding 5: ``after=100`` on a round with a handful of events was answered with
    no events and no word (a game server would wait for ever); it is 409 ``stale_cursor``
    saying to read again from 0."""
    number = _open(studio, "r-cursor")
    status, answer = studio.call("GET", f"/v1/rounds/{number}/events?after=100&wait=0")
    assert (status, answer["code"]) == (409, "stale_cursor"), answer
    assert "after=0" in answer["message"]
    status, answer = studio.call("GET", f"/v1/rounds/{number}/events?after=0&wait=0")
    assert status == 200 and answer["events"], answer
