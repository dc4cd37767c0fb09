"""What a game server may read of the table (``GET /v1/table``: its game, bets, positions and
limits) and the body bound as enforced: one figure, ``max_batch x 512`` bytes, a larger
declared body refused 413 before a byte of it is read (issue 33, findings 5 and 6)."""

from __future__ import annotations

import http.client
import json
import ssl

import pytest

from controller.service.protocol import MAX_MINOR_UNITS
from tests.studio.conftest import Studio
from tests.studio.test_openapi import DOC

LIMIT = 100 * 512
"""The fixture's ``max_batch`` is 100."""


@pytest.mark.parametrize("studio", ["limits"], indirect=True)
def test_the_table_offer_is_the_tables_own(studio: Studio) -> None:
    """The table's game and each LIVE-3P bet with its positions (Pair Plus on the Banker too:
    LIVE-3P Pair Plus), its pay table and its limits as the service's config sets them (the
    win bet 100-100,000 here; the others any positive amount); an amount at the offer's bound
    is placed and one past it refused by the table, that wager alone."""
    status, offer = studio.call("GET", "/v1/table")
    assert status == 200, offer
    assert offer["game"]["id"] == "live-three-pictures" and offer["game"]["rules"] == "LIVE-3P"
    assert (offer["max_batch"], offer["max_body_bytes"]) == (100, LIMIT)
    table = DOC["components"]["schemas"]["Table"]
    assert set(offer) == set(table["properties"]) == set(table["required"]), "as documented"
    assert all(set(bet) == set(table["properties"]["bets"]["items"]["required"])
               for bet in offer["bets"])
    bets = {bet["bet"]: bet for bet in offer["bets"]}
    assert set(bets) == {"win", "lose", "tie", "three_knights", "pair_plus"}
    assert (bets["win"]["min"], bets["win"]["max"]) == (100, 100_000)
    assert (bets["lose"]["min"], bets["lose"]["max"]) == (1, MAX_MINOR_UNITS)
    assert bets["win"]["positions"] == ["p1", "p2", "p3"]
    assert bets["pair_plus"]["positions"] == ["p1", "p2", "p3", "banker"]
    assert [line["pays"] for line in bets["tie"]["pays"]] == ["8 to 1"]

    status, opened = studio.call("POST", "/v1/rounds", {"key": "t-r", "betting_seconds": 60})
    assert status == 200, opened
    high = bets["win"]["max"]
    status, placed = studio.call("POST", f"/v1/rounds/{opened['round']}/wagers", {
        "key": "t-b", "wagers": [
            {"id": "at", "member": "m1", "position": "p1", "bet": "win", "amount": high},
            {"id": "past", "member": "m1", "position": "p1", "bet": "win", "amount": high + 1},
            {"id": "low", "member": "m1", "position": "p2", "bet": "win",
             "amount": bets["win"]["min"] - 1}]})
    assert status == 200, placed
    assert [w["status"] for w in placed["wagers"]] == ["accepted", "refused", "refused"]
    assert "outside the table limits 100-100000" in placed["wagers"][1]["reason"]


def _declared(studio: Studio, path: str, length: int) -> tuple[int, dict[str, object]]:
    """A request declaring a ``length``-byte body and sending none: the status and the
    answer."""
    context = ssl.create_default_context(cafile=str(studio.pki / "ca.pem"))
    context.load_cert_chain(studio.pki / "gs1.pem", studio.pki / "gs1.key")
    connection = http.client.HTTPSConnection("127.0.0.1", studio.port, context=context,
                                             timeout=60)
    try:
        connection.putrequest("POST", path)
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(length))
        connection.endheaders()
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_a_declared_oversize_body_is_413_before_it_is_read(studio: Studio) -> None:
    """Issue 33, finding 5: a declared 300,000-byte body with none sent is ``413``, answered
    on its header (had the body been waited for, its 10 s would have ended in ``408``); the
    bound is ``max_batch x 512`` exactly (51,200 here): a body of that many bytes is read
    and served, one byte more is refused, and the refusal names the figure."""
    status, answer = _declared(studio, "/v1/rounds/1/wagers", 300_000)
    assert (status, answer["code"]) == (413, "batch_too_large"), answer
    assert f"at most {LIMIT}" in answer["message"]

    head = b'{"key": "b-exact", "betting_seconds": 30'
    exact = head + b" " * (LIMIT - len(head) - 1) + b"}"
    assert len(exact) == LIMIT
    status, answer = studio.call("POST", "/v1/rounds", raw=exact)
    assert status == 200 and answer["state"] == "betting", answer
    over = exact[:-1] + b" }"
    status, answer = studio.call("POST", "/v1/rounds", raw=over)
    assert (status, answer["code"]) == (413, "batch_too_large"), answer
