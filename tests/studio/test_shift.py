"""A LIVE-3P shift with the reference game server as the only source of wagers: the service
with a simulated shoe on a pty, the gateway and the client as separate processes, real mutual
TLS. The 100-round, 2,000-wager shift is ``benchmarks/studio.py``; here a short one."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from controller.journal.reader import iter_records
from tests.service_e2e.conftest import Processes
from tests.studio.conftest import Studio

CLIENT_SECONDS = 600


@pytest.mark.parametrize("studio", ["table settles", "gateway settles"], indirect=True)
def test_reference_client_shift_every_settlement_matches(studio: Studio, processes: Processes,
                                                          request: pytest.FixtureRequest
                                                          ) -> None:
    """Members' wagers (LIVE-3P Game Play: "Members can bet on any of the three Player
    hands") reach the table only through the gateway; every accepted wager is settled once,
    at the client's own figure, and the journal names the game server, the member and the
    batch's idempotency key for each. A table with ``settle_on_deal_complete`` settles each
    round itself (no ``round.settle`` is sent); without it the gateway sends one a round."""
    done = processes.cli(*studio.client_args("--rounds", "3", "--wagers", "240",
                                             "--batch", "100", "--shift", "s1"),
                         timeout=CLIENT_SECONDS)
    assert done.returncode == 0, done.stderr
    reports = [json.loads(line) for line in done.stdout.splitlines()]
    rounds, summary = reports[:-1], reports[-1]
    assert summary == {"rounds": 3, "accepted": 720, "settled": 720, "returned": 0,
                       "mismatched_rounds": 0}
    assert all(r["mismatches"] == [] and r["ended"] == "RoundSettled" for r in rounds)

    records = list(iter_records([studio.journal]))
    assert not [r for r in records if r.event_type == "wager_accepted"], \
        "a batch's acceptances are one wagers_accepted record, not one record a wager"
    batches = [r for r in records if r.event_type == "wagers_accepted"]
    placed = [w for r in batches for w in r.payload["wagers"]]
    assert len(placed) == 720 and len(batches) == 3 * 3, "one record per batch (100, 100, 40)"
    ids = Counter(w["id"] for w in placed)
    assert set(ids.values()) == {1}
    first = placed[0]
    assert {"id", "position", "bet", "amount", "player"} <= set(first)
    assert first["id"].startswith("gs1/") and first["player"].startswith("m")
    inputs = [r for r in iter_records([studio.journal])
              if r.event_type == "input_command" and "gs1 [operator via studio s1-r0-b0]"
              in json.dumps(r.payload)]
    assert len(inputs) == 1, "batch s1-r0-b0 is one input, journaled with its key"
    assert inputs[0].payload["type"] == "PlaceWagers"
    assert len(inputs[0].payload["fields"]["wagers"]) == 100
    settle_requests = [r for r in records if r.event_type == "input_command"
                       and r.payload["type"] == "SettleRound"]
    table_settles = request.node.callspec.params["studio"] == "table settles"
    assert len(settle_requests) == (0 if table_settles else 3)
    assert len([r for r in records if r.event_type == "round_settled"]) == 3
