"""``wager.place-batch`` (issue 28: a studio's batch of wagers as one input): one journal record
for the batch, each wager judged as if placed alone, replayed as one input after a restart;
malformed or oversized batches refused before anything is recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.cli.client import describe
from controller.journal import iter_records
from controller.service.config import ServiceConfig, load_config
from controller.service.control.client import ControlClient, RequestRefused
from controller.service.protocol import MAX_BATCH_ROWS, MAX_BATCH_WAGERS, ErrorCode
from tests.controller.service.conftest import service_toml
from tests.controller.service.test_journal_start import Running


@pytest.fixture(name="config")
def fixture_config(tmp_path: Path) -> ServiceConfig:
    path = tmp_path / "tablectl.toml"
    path.write_text(service_toml(tmp_path))
    return load_config(path)


def _wager(wager_id: str, position: str, amount: int = 1000, **extra: object) -> dict:
    return {"wager_id": wager_id, "position": position, "bet": "main", "amount": amount,
            **extra}


def _inputs(config: ServiceConfig, kind: str) -> list[dict]:
    return [r.payload for r in iter_records([config.journal.directory], strict=False)
            if r.event_type == "input_command" and r.payload.get("type") == kind]


def test_one_record_for_the_batch_each_wager_judged_and_replayed(config: ServiceConfig) -> None:
    """Four wagers, one for a box the layout lacks and one reusing an id: two placed, two
    refused with the table's reasons, in the order sent; the journal holds one input for the
    batch and one output record for its accepted wagers (``wagers_accepted``, each wager's
    terms), and the answer is compact (no event objects); after a restart the replayed batch
    gives the same layout."""
    wagers = [_wager("m1", "1", player="member-1"), _wager("m2", "99"),
              _wager("m3", "2", player="member-3", seated=True), _wager("m1", "3")]
    with Running(config) as running:
        running.ask("round.open")
        answer = running.ask("wager.place-batch", wagers=wagers)
        assert [(w["wager_id"], w["status"]) for w in answer["wagers"]] == [
            ("m1", "accepted"), ("m2", "refused"), ("m3", "accepted"), ("m1", "refused")]
        assert "box 99 is not on this table's layout" in answer["wagers"][1]["reason"]
        assert "already on the layout" in answer["wagers"][3]["reason"]
        assert answer["events"] == [], "compact: each wager's outcome, not every event"
        running.ask("wager.place", wager_id="s1", position="4", bet="main", amount=1000)
        placed = {w["id"]: w for w in running.ask("wager.list")["wagers"]}
    assert set(placed) == {"m1", "m3", "s1"} and placed["m3"]["player"] == "member-3"
    records = _inputs(config, "PlaceWagers")
    assert len(records) == 1 and len(records[0]["fields"]["wagers"]) == 4
    assert len(_inputs(config, "PlaceWager")) == 1
    outputs = [r for r in iter_records([config.journal.directory], strict=False)
               if r.event_type in ("wager_accepted", "wagers_accepted")]
    assert [r.event_type for r in outputs] == ["wagers_accepted", "wager_accepted"], \
        "the batch's acceptances are one record; a single wager.place keeps its own"
    assert [(w["id"], w["position"], w["bet"], w["amount"], w["player"])
            for w in outputs[0].payload["wagers"]] == [
        ("m1", "1", "main", 1000, "member-1"), ("m3", "2", "main", 1000, "member-3")]
    assert outputs[1].payload["wager"]["id"] == "s1"
    with Running(config) as running:  # the batch is replayed as one input: the same layout
        after = {w["id"]: w for w in running.ask("wager.list")["wagers"]}
        assert after == placed


@pytest.mark.parametrize(("wagers", "words"), [
    ([{"wager_id": "x", "position": "1", "bet": "main"}], "wager_id, position, bet, amount"),
    ([_wager("x", "1", colour="red")], "wager_id, position, bet, amount"),
    ([_wager("x", "1", amount=1.5)], "wager_id, position, bet, amount"),
    ([], f"1 to {MAX_BATCH_WAGERS}"),
    ([_wager(f"w{i}", "1") for i in range(MAX_BATCH_WAGERS + 1)], f"1 to {MAX_BATCH_WAGERS}"),
])
def test_a_malformed_batch_is_refused_whole_and_not_recorded(config: ServiceConfig,
                                                             wagers: list, words: str) -> None:
    """Checked by the control socket's protocol, as every request is: the whole batch refused
    ``bad_args`` naming the argument's shape, nothing recorded, nothing placed."""
    with Running(config) as running, ControlClient(config.control.socket) as client:
        assert running.service.ready.wait(60)
        client.request("round.open")
        with pytest.raises(RequestRefused) as refused:
            client.request("wager.place-batch", {"wagers": wagers})
        assert refused.value.code is ErrorCode.BAD_ARGS and words in refused.value.message
        assert client.request("wager.list")["wagers"] == []
    assert _inputs(config, "PlaceWagers") == []


def test_rows_judge_and_journal_a_batch_exactly_as_objects(config: ServiceConfig) -> None:
    """The compact form (``rows``, an array a wager, issue 28): the same wagers as the first
    test, the same outcomes and the same journal records; the answer names only the refused
    rows (``[index, reason]``) and how many were placed."""
    rows = [["m1", "1", "main", 1000, "member-1"], ["m2", "99", "main", 1000, None],
            ["m3", "2", "main", 1000, "member-3"], ["m1", "3", "main", 1000, None]]
    with Running(config) as running:
        running.ask("round.open")
        answer = running.ask("wager.place-batch", rows=rows)
        assert answer["placed"] == 2 and "wagers" not in answer and answer["events"] == []
        assert [index for index, _ in answer["refusals"]] == [1, 3]
        assert "box 99 is not on this table's layout" in answer["refusals"][0][1]
        assert "already on the layout" in answer["refusals"][1][1]
        lines = describe("wager.place-batch", answer)  # what ``tablectl`` prints of it
        assert lines[0].endswith(": 2 of 4 wager(s) placed") and len(lines) == 3
        assert lines[1].startswith("  refused row 1: ") and "box 99" in lines[1]
        placed = {w["id"]: w for w in running.ask("wager.list")["wagers"]}
    assert set(placed) == {"m1", "m3"} and placed["m3"]["player"] == "member-3"
    records = _inputs(config, "PlaceWagers")
    assert len(records) == 1 and [w["wager_id"] for w in records[0]["fields"]["wagers"]] == [
        "m1", "m2", "m3", "m1"]
    outputs = [r.payload for r in iter_records([config.journal.directory], strict=False)
               if r.event_type == "wagers_accepted"]
    assert [(w["id"], w["player"]) for w in outputs[0]["wagers"]] == [
        ("m1", "member-1"), ("m3", "member-3")]


def test_a_studio_batch_of_500_rows_is_one_request_and_one_input(config: ServiceConfig
                                                                  ) -> None:
    """500 wagers with a studio's ids (``gs1/r99w499``) fit one request line as rows (as 250
    objects did): one input record holds all 500, and every one is answered."""
    rows = [[f"gs1/r99w{n}", str(1 + n % 7), "main", 100, f"m{n}"] for n in range(500)]
    with Running(config) as running:
        running.ask("round.open")
        answer = running.ask("wager.place-batch", rows=rows)
        assert answer["placed"] + len(answer["refusals"]) == 500
        assert answer["placed"] > 0
    records = _inputs(config, "PlaceWagers")
    assert len(records) == 1 and len(records[0]["fields"]["wagers"]) == 500


@pytest.mark.parametrize(("args", "words"), [
    ({"rows": [["x", "1", "main", 500]]}, "arrays [wager_id, position, bet, amount, player]"),
    ({"rows": [["x", "1", "main", 1.5, None]]}, "arrays [wager_id, position, bet, amount"),
    ({"rows": [["x", "1", "main", 500, ""]]}, "arrays [wager_id, position, bet, amount"),
    ({"rows": [["x", "1", "main", 500, None]] * (MAX_BATCH_ROWS + 1)},
     f"1 to {MAX_BATCH_ROWS} arrays"),
    ({"rows": [["x", "1", "main", 500, None]], "wagers": [_wager("y", "1")]}, "one of the two"),
    ({}, "one of the two"),
])
def test_malformed_rows_are_refused_whole_and_not_recorded(config: ServiceConfig,
                                                           args: dict, words: str) -> None:
    """A row of the wrong length or type, too many rows, or both forms (or neither) in one
    request: ``bad_args`` naming the problem, nothing recorded, nothing placed."""
    with Running(config) as running, ControlClient(config.control.socket) as client:
        assert running.service.ready.wait(60)
        client.request("round.open")
        with pytest.raises(RequestRefused) as refused:
            client.request("wager.place-batch", args)
        assert refused.value.code is ErrorCode.BAD_ARGS and words in refused.value.message
        assert client.request("wager.list")["wagers"] == []
    assert _inputs(config, "PlaceWagers") == []
