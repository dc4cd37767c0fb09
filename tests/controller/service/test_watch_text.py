"""The watchers get a journaled event as the journal's own text of its payload (issue 28): the
settlement is encoded once, for the journal, and a face-down card still reaches a dealer's or
supervisor's watcher redacted. Over the real control socket of a wired service dealing RWS-3CP
from its simulated shuffler."""

from __future__ import annotations

import json
from typing import Any

from pytest_mock import MockerFixture

from controller.journal.files import journal_files
from controller.journal.record import canonical_json
from controller.service.control import server as control_server
from controller.service.control.server import (
    ControlClient,
    EncodedEvent,
    watch_text,
)
from controller.service.lifecycle.app import Service
from controller.service.protocol import Role
from tests.controller.service.test_visibility import (  # noqa: F401 (the fixture)
    Groups,
    client_as,
    fixture_service,
)


def _lines_until(client: ControlClient, kind: str) -> list[bytes]:
    """The raw ``event`` text of each watched line, up to and including the first ``kind``."""
    seen = []
    while True:
        line = client.read_line()
        head, sep, rest = line.partition(b',"event":')
        assert sep and rest.endswith(b"}"), line[:80]
        body = rest[:-1]
        seen.append(body)
        if json.loads(body)["type"] == kind:
            return seen


def test_a_watcher_gets_the_journal_records_own_payload_text(
        service: tuple[Service, Groups], mocker: MockerFixture) -> None:
    """The settlement a watcher reads is ``{"type":"RoundSettled",`` then, byte for byte, the
    payload text of the journal's ``round_settled`` line, and the service never encodes it a
    second time; the dealer's cards, dealt face down, reach the operator's watcher redacted
    and surveillance's as the journal has them."""
    server, groups = service
    encoded = mocker.spy(control_server, "encode")
    dealer = client_as(server, groups, Role.DEALER)
    watchers = {role: client_as(server, groups, role)
                for role in (Role.DEALER, Role.SURVEILLANCE)}
    try:
        for watcher in watchers.values():
            watcher.request("watch")
        dealer.request("round.open")
        dealer.request("wager.place", {"wager_id": "w1", "position": "1", "bet": "ante",
                                       "amount": 500})
        dealer.request("round.close")
        seen = {role: _lines_until(w, "DealComplete") for role, w in watchers.items()}
        dealer.request("decide", {"position": "1", "choice": "play"})
        if dealer.request("round.status")["state"] == "dealt":
            dealer.request("round.reveal")
        if dealer.request("round.status")["state"] != "settled":
            dealer.request("round.settle")
        for role, watcher in watchers.items():
            seen[role] += _lines_until(watcher, "RoundSettled")
    finally:
        for client in (dealer, *watchers.values()):
            client.close()

    lines = _journal_lines(server)
    records = [json.loads(line) for line in lines]
    settled = [line for line in lines if '"event":"round_settled"' in line]
    assert len(settled) == 1
    payload = _payload_of(settled[0])
    assert seen[Role.SURVEILLANCE][-1] == b'{"type":"RoundSettled",' + payload[1:].encode()
    assert seen[Role.DEALER][-1] == seen[Role.SURVEILLANCE][-1]
    record = next(r for r in records if r["event"] == "round_settled")
    assert json.loads(seen[Role.DEALER][-1]) == {"type": "RoundSettled", **record["payload"]}
    assert not [call for call in encoded.call_args_list
                if call.args[0].get("type") == "RoundSettled"]  # not encoded for the watchers

    def dealer_cards(role: Role) -> list[Any]:
        return [json.loads(body)["card"] for body in seen[role]
                if json.loads(body)["type"] == "CardAssigned"
                and json.loads(body)["position"] == "dealer"]

    truth = [r["payload"]["card"] for r in records
             if r["event"] == "card_assigned" and r["payload"]["position"] == "dealer"]
    assert len(truth) == 3 and all(isinstance(card, str) for card in truth)
    assert dealer_cards(Role.SURVEILLANCE) == truth
    assert dealer_cards(Role.DEALER) == [None, None, None]
    assert not [body for body in seen[Role.DEALER] for card in truth
                if b'"dealer"' in body and card.encode() in body
                and b'"CardAssigned"' in body]


def _journal_lines(service: Service) -> list[str]:
    return [line for path in journal_files(service.config.journal.directory)
            for line in path.read_text(encoding="utf-8").splitlines()]


def _payload_of(line: str) -> str:
    start = line.index(',"payload":') + len(',"payload":')
    return line[start:line.rindex(',"prev":"')]


def test_the_watch_text_of_an_event() -> None:
    """``type`` first, then the payload's text as it is; an empty payload too."""
    payload = {"b": [1, "é"], "a": None, "round": 3}
    text = watch_text("CardAssigned", canonical_json(payload))
    assert text == '{"type":"CardAssigned","a":null,"b":[1,"é"],"round":3}'.encode()
    assert json.loads(text) == {"type": "CardAssigned", **payload}
    assert watch_text("DeckReleased", "{}") == b'{"type":"DeckReleased"}'
    event = EncodedEvent({"type": "X"}, b'{"type":"X"}')
    assert dict(event) == {"type": "X"} and event.text == b'{"type":"X"}'
