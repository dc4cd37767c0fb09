"""Playing rounds through a service's control socket, as the pit does, for the end-to-end tests:
bets, the deal (watched, or dealt by the test on a device it holds), the game's interruption
clause after a restart, the round's end, and what the journal holds of it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from controller.journal.reader import iter_records
from controller.service.control.client import ControlClient
from tests.service_e2e.conftest import WAGERS, HeldDevice, next_watched

INTERRUPTION = {
    # game -> (clause if established, decision if established, clause if not, decision if not)
    "rws-nc-three-pictures": ("RWS-NC3P 5.4.1", "continue", "RWS-NC3P 5.4.2", "void"),
    "mbs-royal-three-pictures": ("MBS-R3P 5.13.2", "continue", "MBS-R3P 5.13.1",
                                 "player_options"),
}
DEALING = ("closed", "shuffled", "burn", "dealing")
"""States in which the round's cards are still being dealt."""


def bet(client: ControlClient, game: str) -> list[str]:
    """Open a round, place the game's wagers, call "no more bets"; the wager ids."""
    opened = client.request("round.open", actor="dealer:e2e")
    ids = []
    for index, (position, kind, amount) in enumerate(WAGERS[game]):
        ids.append(f"r{opened['round']}-{index}")
        client.request("wager.place", {"wager_id": ids[-1], "position": position, "bet": kind,
                                       "amount": amount})
    client.request("round.close")
    return ids


def bet_and_deal(client: ControlClient, events: Any, game: str) -> dict[str, Any]:
    """A round to the end of its deal by the service's simulated device; its status."""
    bet(client, game)
    next_watched(events, "DealComplete")
    return client.request("round.status")


def apply_interruption_clause(client: ControlClient, game: str,
                               status: dict[str, Any]) -> str:
    """Recovery ruled the interrupted round by the game's clause: RWS-NC3P 5.4.1 continue /
    5.4.2 void, MBS-R3P 5.13.2 continue / 5.13.1 players may withdraw, as the outcome was
    established or not; a supervisor decides in the games without one. What the ruling leaves
    to people is answered (the supervisor continues, the players continue); the decision."""
    recovery = status["recovery"]
    if game in INTERRUPTION:
        yes_clause, yes, no_clause, no = INTERRUPTION[game]
        expected = (yes_clause, yes) if recovery["established"] else (no_clause, no)
        assert (recovery["clause"], recovery["decision"]) == expected
    else:  # MBS-3P, RWS-3CP, LIVE-3P print no interruption clause: a supervisor decides
        assert recovery["decision"] == "supervisor"
        assert status["state"] == "hold" and "interruption" in status["held_for"]
        client.request("supervisor.continue", {"reason": "controller restarted"},
                       actor="supervisor:e2e")
    if recovery["decision"] == "player_options":
        for position in client.request("round.status")["options_pending"]:
            client.request("option", {"position": position, "choice": "continue"})
    return str(recovery["decision"])


def finish(client: ControlClient, game: str) -> dict[str, Any]:
    """A dealt round to its settlement: decisions (all play), reveal, settle; the answer."""
    status = client.request("round.status")
    for position in status["decisions_due"]:  # RWS-3CP 3.8: every Ante player decides
        client.request("decide", {"position": position, "choice": "play"})
    if client.request("round.status")["state"] == "dealt":
        client.request("round.reveal")
    return client.request("round.settle")


def wait_online(client: ControlClient, events: Iterator[dict[str, Any]],
                device: HeldDevice) -> None:
    """Until the table has the device (READY does not wait for a real one). The driver's
    ``online`` is not enough: the table still holds "No more bets" for the device's resend
    until it has taken the driver's DeviceOnline, which on a loaded machine came after a
    ``round.close`` that the table then refused ("dealing device offline")."""
    status = client.request("round.status")
    if status["device"]["online"] and device.name not in status["offline"]:
        return
    while True:
        noted = next_watched(events, "DeviceNoted")
        if (noted["device"], noted["detail"]) == (device.name, "DeviceOnline"):
            return


def dealing(client: ControlClient) -> bool:
    """Whether the round's cards are still being dealt."""
    return client.request("round.status")["state"] in DEALING


def deal_one_hand(client: ControlClient, events: Iterator[dict[str, Any]],
                  device: HeldDevice) -> None:
    """Deal until one hand holds its three cards, and no further: the service's operator has
    the shuffler form hands, which nobody lifts; from the shoe the test draws card by card."""
    if device.kind == "scanner":
        device.sim.shuffle()
        client.request("round.shuffled", actor="dealer:e2e")
    cards: Counter[str] = Counter()
    while 3 not in cards.values():
        if device.kind == "scanner":
            device.sim.draw()
        event = next_watched(events, "CardAssigned", "BurnCard", "CardIgnored")
        if event["type"] == "CardAssigned":
            cards[event["position"]] += 1


def deal_the_rest(client: ControlClient, events: Iterator[dict[str, Any]],
                  device: HeldDevice) -> None:
    """The dealer's part of the rest of the deal: lift each hand the shuffler presents (the
    service then has it form the next), or draw each next card from the shoe."""
    while dealing(client):
        if device.kind == "scanner":
            device.sim.draw()
            next_watched(events, "CardAssigned", "BurnCard", "CardIgnored")
        else:
            device.sim.take_hand()
            next_watched(events, "HandComplete")


def ended_once(journal: Path, round_id: str) -> dict[str, Any]:
    """The one record that ended the round (settled or voided), as the journal holds it."""
    ended = [record for record in iter_records([journal]) if record.round_id == round_id
             and record.event_type in ("round_settled", "round_voided")]
    assert len(ended) == 1, [record.event_type for record in ended]
    return dict(ended[0].payload)
