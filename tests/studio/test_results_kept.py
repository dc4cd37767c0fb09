"""Issue 33, findings 3 and 5: a game server can always get its results. A round that settles
while the gateway is down, and a round older than the gateway keeps in memory, are read back
from the table's journal (``round.events``) for the game server that opened it; a round taken
up after a restart streams complete, from ``RoundOpened``."""

from __future__ import annotations

import signal
from typing import Any

from tests.service_e2e.conftest import Processes
from tests.studio.conftest import Studio, read_line

WAGER = {"member": "m1", "position": "p2", "bet": "lose", "amount": 300}


def _restart_gateway(studio: Studio, processes: Processes) -> None:
    studio.gateway.send_signal(signal.SIGKILL)
    studio.gateway.communicate(timeout=30)
    studio.gateway = processes.spawn(["studio", "--config",
                                      str(studio.ledger.parents[1] / "studio.toml")])
    assert read_line(studio.gateway).startswith("listening")


def _round(studio: Studio, key: str, wagers: int = 3) -> int:
    status, opened = studio.call("POST", "/v1/rounds", {"key": key, "betting_seconds": 120})
    assert status == 200, opened
    number = int(opened["round"])
    batch = {"key": f"{key}-b", "wagers": [{**WAGER, "id": f"{key}w{n}"} for n in range(wagers)]}
    assert studio.call("POST", f"/v1/rounds/{number}/wagers", batch)[1]["accepted"] == wagers
    assert studio.call("POST", f"/v1/rounds/{number}/close", {"key": f"{key}-c"})[0] == 200
    return number


def _played(studio: Studio, key: str, wagers: int) -> int:
    """A whole round: opened, bet, closed and (the table settles with the last card) over."""
    number = _round(studio, key, wagers)
    status, events = _events(studio, number)
    assert status == 200 and _ended(events), events
    return number


def _events(studio: Studio, number: int, identity: str = "gs1") -> tuple[int, Any]:
    """Every event of the round from cursor 0 to its end (the round is over)."""
    after, events = 0, []
    while True:
        status, answer = studio.call("GET", f"/v1/rounds/{number}/events?after={after}&wait=20",
                                     identity=identity)
        if status != 200:
            return status, answer
        events += answer["events"]
        after = answer["next"]
        if _ended(events):
            return status, events


def _ended(events: list[dict[str, Any]]) -> bool:
    return any(e["type"] in ("RoundSettled", "RoundVoided") for e in events)


def _settled_at_the_table(studio: Studio, number: int) -> None:
    """Wait (on the table's own watch stream, subscribed before looking) for the round's end."""
    with studio.control() as watcher, studio.control() as control:
        events = watcher.watch()
        if _ended(control.request("round.events", {"round": number})["events"]):
            return
        for event in events:
            if event.get("round") == number and _ended([event]):
                return


def test_a_round_settled_while_the_gateway_was_down_is_read_back(studio: Studio,
                                                                 processes: Processes) -> None:
    """The gateway is killed as soon as the betting closes; the table deals and settles the
    round meanwhile. Started again, the gateway answers the round's events from cursor 0 from
    the table's journal: the whole stream (RoundOpened, BetsClosed, the cards, RoundSettled)
    with this game server's three results (it answered 404 "in the table's journal")."""
    number = _round(studio, "down")
    studio.gateway.send_signal(signal.SIGKILL)
    studio.gateway.communicate(timeout=30)
    _settled_at_the_table(studio, number)
    studio.gateway = processes.spawn(["studio", "--config",
                                      str(studio.ledger.parents[1] / "studio.toml")])
    assert read_line(studio.gateway).startswith("listening")
    status, events = _events(studio, number)
    assert status == 200, events
    kinds = [e["type"] for e in events]
    assert kinds[0] == "RoundOpened" and "BetsClosed" in kinds and kinds[-1] == "RoundSettled"
    assert sorted(r["wager_id"] for r in events[-1]["results"]) == [
        "downw0", "downw1", "downw2"]
    status, answer = _events(studio, number, identity="gs2")
    assert (status, answer["code"]) == (403, "not_yours"), answer


def test_a_round_older_than_the_memory_keeps_is_read_back(studio: Studio) -> None:
    """Six rounds, more than the gateway keeps in memory (four): the first is still answered,
    from the table's journal, with its results; the current rounds are unaffected."""
    numbers = [_played(studio, f"old{n}", wagers=2) for n in range(6)]
    for number in numbers:
        status, events = _events(studio, number)
        assert status == 200, events
        assert len(events[-1]["results"]) == 2
    status, events = _events(studio, numbers[0])
    assert [e["type"] for e in events][0] == "RoundOpened"


def test_a_round_taken_up_after_a_restart_streams_from_round_opened(
        studio: Studio, processes: Processes) -> None:
    """Finding 5: the stream rebuilt after a gateway restart lacked RoundOpened (and
    BetsClosed); taken up mid-round, it holds the round's events from the start."""
    status, opened = studio.call("POST", "/v1/rounds", {"key": "up", "betting_seconds": 120})
    number = int(opened["round"])
    assert studio.call("POST", f"/v1/rounds/{number}/wagers", {
        "key": "up-b", "wagers": [{**WAGER, "id": "u1"}]})[0] == 200
    _restart_gateway(studio, processes)
    status, answer = studio.call("GET", f"/v1/rounds/{number}/events?after=0&wait=0")
    assert status == 200 and answer["events"][0]["type"] == "RoundOpened", answer
