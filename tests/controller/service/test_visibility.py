"""Face-down cards stay hidden (issue 10): the dealer's hand before the reveal, per role, over the
real control socket of a wired service dealing RWS-3CP from its simulated shuffler."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from controller.cli.client import describe
from controller.games.catalog import GAMES
from controller.service.lifecycle.app import Service
from controller.service.config import parse_config
from controller.games.cards import parse_card
from controller.service.control.server import AccessPolicy, ControlClient, Peer
from controller.service.wiring.handler import TableHandler
from controller.service.protocol import Request, Role
from controller.service.wiring.tablethread import TableThread, Ticket
from controller.table import events as ev
from tests.controller.service.conftest import DEALER
from controller.service.visibility import redact_event, redact_status

OPERATORS, SURVEILLANCE, SUPERVISORS = "ops", "surv", "sups"
ROLE_GROUPS = {Role.DEALER: OPERATORS, Role.SUPERVISOR: SUPERVISORS,
               Role.SURVEILLANCE: SURVEILLANCE}
SEES = {Role.DEALER: False, Role.SUPERVISOR: False, Role.SURVEILLANCE: True}

CONFIG = """\
[table]
id = "T1"
game = "rws-three-card-poker"
boxes = ["1"]

[device]
kind = "shuffler"
url = "sim"

[journal]
directory = "{journal}"
durability = "none"

[control]
socket = "{socket}"
socket_group = ""

[clock]
unsynchronised = "allow"
"""


@dataclass
class Groups:
    """The injected group lookup: the next peer to connect is in ``names``."""

    names: frozenset[str] = field(default_factory=frozenset)

    def __call__(self, uid: int, gid: int) -> frozenset[str]:
        return self.names


@pytest.fixture(name="service")
def fixture_service(tmp_path: Path) -> Iterator[tuple[Service, Groups]]:
    text = CONFIG.format(journal=tmp_path / "journal", socket=tmp_path / "control.sock")
    groups = Groups()
    policy = AccessPolicy(OPERATORS, SURVEILLANCE, groups_of=groups,
                          supervisors_group=SUPERVISORS, superusers=frozenset())
    with Service(parse_config(text, source="test.toml"), policy=policy) as service:
        assert service.ready.wait(30)  # generous: a loaded machine
        yield service, groups


def client_as(service: Service, groups: Groups, role: Role) -> ControlClient:
    """A client the server has admitted with ``role`` (the request fixes it before returning)."""
    groups.names = frozenset({ROLE_GROUPS[role]})
    client = ControlClient(service.config.control.socket, timeout=30).connect()
    client.request("round.status")
    return client


def _until(events: Iterator[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The watched events up to and including the first of ``kind``."""
    seen = []
    for event in events:
        seen.append(event)
        if event["type"] == kind:
            return seen
    raise AssertionError(f"watch ended before {kind}")


def test_the_dealers_hand_is_hidden_from_the_table_until_the_reveal(
        service: tuple[Service, Groups]) -> None:
    """While the RWS-3CP player decides (3.8), a dealer's or a supervisor's client sees that the
    dealer holds three cards but not which, in ``round.status`` and in ``watch``; surveillance
    sees them. After the reveal (3.9) everyone sees the same three cards. No log line of the
    service, at any level, names a face-down card before the reveal (the system log is read at
    the table: issue 24)."""
    server, groups = service
    with capture_logs() as logs:
        _deal_and_reveal(server, groups, logs)


def _deal_and_reveal(server: Service, groups: Groups, logs: list[dict[str, Any]]) -> None:
    clients = {role: client_as(server, groups, role) for role in SEES}
    watchers = {role: client_as(server, groups, role) for role in SEES}
    streams = {role: client.watch() for role, client in watchers.items()}
    try:
        dealer = clients[Role.DEALER]
        dealer.request("round.open")
        dealer.request("wager.place", {"wager_id": "w1", "position": "1", "bet": "ante",
                                       "amount": 500})
        dealer.request("round.close")
        dealt = {role: _until(stream, "DealComplete") for role, stream in streams.items()}
        statuses = {role: client.request("round.status") for role, client in clients.items()}

        truth = statuses[Role.SURVEILLANCE]["hands"]["dealer"]
        assert statuses[Role.SURVEILLANCE]["state"] == "decisions"
        assert len(truth) == 3 and all(isinstance(card, str) for card in truth)
        for role, status in statuses.items():
            assert status["hands"]["1"] == statuses[Role.SURVEILLANCE]["hands"]["1"]
            assert status["hands"]["dealer"] == (truth if SEES[role] else [None, None, None])
            dealer_cards = [e["card"] for e in dealt[role]
                            if e["type"] == "CardAssigned" and e["position"] == "dealer"]
            hands = [e["cards"] for e in dealt[role]
                     if e["type"] == "HandComplete" and e["position"] == "dealer"]
            shown = truth if SEES[role] else [None, None, None]
            assert dealer_cards in ([], shown) and hands in ([], [shown])
            assert dealer_cards or hands  # the deal of the dealer's hand was watched
        assert logs, "nothing was logged: the check below could not fail"
        logged = [entry for entry in logs for code in truth
                  if re.search(rf"(?<![A-Za-z0-9]){code}(?![A-Za-z0-9])", repr(entry))]
        assert not logged, f"a face-down card in the service's log: {logged[:3]}"

        dealer.request("decide", {"position": "1", "choice": "play"})
        if dealer.request("round.status")["state"] == "dealt":
            dealer.request("round.reveal")
        for role, stream in streams.items():
            revealed = _until(stream, "DealerRevealed")[-1]
            assert revealed["cards"] == truth
            assert clients[role].request("round.status")["hands"]["dealer"] == truth
    finally:
        for client in (*clients.values(), *watchers.values()):
            client.close()


def test_the_rule_per_game_and_role() -> None:
    """Only surveillance and root may see a face-down card; LIVE-3P deals face up, so nothing
    is hidden there; a player's hand and the revealed dealer's hand are never hidden."""
    assert [role for role in Role if role.sees_face_down] == [Role.SURVEILLANCE, Role.ROOT]
    status = {"state": "decisions", "hands": {"1": ["2C", "3C", "4C"], "dealer": ["AS", "KS"]}}
    assert redact_status(status, GAMES["rws-three-card-poker"])["hands"] == {
        "1": ["2C", "3C", "4C"], "dealer": [None, None]}
    assert redact_status({**status, "state": "revealed"},
                         GAMES["rws-three-card-poker"]) == {**status, "state": "revealed"}
    live = {"state": "dealing", "hands": {"banker": ["AS"]}}
    assert redact_status(live, GAMES["live-three-pictures"]) == live
    card = {"type": "CardAssigned", "position": "dealer", "card": "AS", "index": 0}
    assert redact_event(card, GAMES["mbs-three-pictures"]) == {**card, "card": None}
    assert redact_event({**card, "position": "1"}, GAMES["mbs-three-pictures"]) is None
    assert redact_event({**card, "position": "banker"}, GAMES["live-three-pictures"]) is None


def test_tablectl_round_status_prints_a_face_down_card_as_question_marks() -> None:
    """The CLI prints what a dealer's client is given: the count of the dealer's cards."""
    lines = describe("round.status", {"table": "T1", "game": "rws-three-card-poker",
                                      "round": 1, "state": "decisions",
                                      "hands": {"1": ["2C", "3C", "4C"],
                                                "dealer": [None, None, None]}})
    assert "     1: 2C 3C 4C" in lines[-2] and lines[-1] == "   dealer: ?? ?? ??"


def test_a_commands_answer_hides_what_watch_hides(table: TableThread) -> None:
    """The events in a command's answer pass the same filter as ``watch``: a dealer whose
    command caused the deal of the dealer's hand does not read it there either."""
    ticket = Ticket(command=None)  # what the table thread hands back for a command
    ticket.events.append(ev.HandComplete(round=1, position="dealer",
                                         cards=tuple(parse_card(c) for c in ("AS", "KS", "QS"))))
    table.command = lambda command, timeout, **where: ticket  # type: ignore[method-assign]
    handler = TableHandler(table, lambda: 0)

    def shown(peer: Peer) -> Any:
        return handler(Request(1, "round.open"), peer)["events"][-1]["cards"]

    assert shown(DEALER) == [None, None, None]
    assert shown(Peer(12, 1003, 1003, Role.SURVEILLANCE)) == ["AS", "KS", "QS"]
