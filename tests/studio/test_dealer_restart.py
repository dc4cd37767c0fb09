"""A round open when the table service is killed is dealt and settled once it is back (issue
33, finding 4: the simulated dealer never dealt a recovered round; it needed a supervisor's
void)."""

from __future__ import annotations

from typing import Any

from controller.journal.reader import iter_records
from controller.studio.book import RoundBook
from tests.service_e2e.conftest import Processes
from tests.studio.conftest import Studio
from tests.waiting import wait_until

END_SECONDS = 240.0
"""The bound on the round's end, generous: its deal and settlement take well under a second."""


def _until_ended(studio: Studio, number: int) -> list[dict[str, Any]]:
    """The round's events from cursor 0 until its RoundSettled or RoundVoided, read as a game
    server does (a long poll answers as soon as an event is there, so the reads are as many
    as the deal takes; :func:`tests.waiting.wait_until` bounds them all)."""
    events: list[dict[str, Any]] = []

    def types_so_far() -> list[str]:
        status, answer = studio.call(
            "GET", f"/v1/rounds/{number}/events?after={len(events)}&wait=20")
        assert status == 200, answer
        events.extend(answer["events"])
        return [event["type"] for event in events]

    wait_until(types_so_far, f"round {number} ended", timeout=END_SECONDS,
               check=lambda types: "RoundSettled" in types or "RoundVoided" in types)
    return events


def test_a_round_open_at_a_service_restart_is_dealt_and_settled(
        studio: Studio, processes: Processes) -> None:
    """The service SIGKILLed while the round takes bets, after a batch was placed; started
    again, recovery lets betting go on. The game server closes betting through the gateway,
    the simulated dealer takes the round up at its "No more bets", shuffles and deals it, and
    the table settles it with the last card: every wager of the batch has its result, the
    round's stream through the gateway is the journal's (what happened while its watch was
    reconnecting included, none twice), and the journal holds the round settled, not
    voided, with no supervisor's decision."""
    status, opened = studio.call("POST", "/v1/rounds", {"key": "d-r", "betting_seconds": 120})
    assert status == 200, opened
    number = opened["round"]
    batch = {"key": "d-b0", "wagers": [{"id": f"w{n}", "member": f"m{n}", "position": "p1",
                                        "bet": "win", "amount": 500} for n in range(10)]}
    status, placed = studio.call("POST", f"/v1/rounds/{number}/wagers", batch)
    assert (status, placed["accepted"]) == (200, 10), placed

    config = studio.service.config.read_text()
    studio.service.kill()
    studio.service = processes.service(config)
    studio.service.wait_ready()

    status, closed = studio.call("POST", f"/v1/rounds/{number}/close", {"key": "d-c"})
    assert (status, closed["state"]) == (200, "closed"), closed
    events = _until_ended(studio, number)
    types = [e["type"] for e in events]
    assert types[-1] == "RoundSettled", types
    assert "ShuffleConfirmed" in types and types.count("CardAssigned") >= 6, types
    with studio.control() as control:
        journal = control.request("round.events", {"round": number})["events"]
    assert types == [e["type"] for e in journal if RoundBook.is_public(e)], \
        "the round's stream is the journal's, the events of the restart included, none twice"
    results = events[-1]["results"]
    assert sorted(r["wager_id"] for r in results) == sorted(f"w{n}" for n in range(10))

    records = list(iter_records([studio.journal]))
    ended = [r.event_type for r in records if r.event_type in ("round_settled", "round_voided")]
    assert ended == ["round_settled"], "the test's one round, settled"
    assert not [r for r in records if r.event_type == "supervisor_decided"]
