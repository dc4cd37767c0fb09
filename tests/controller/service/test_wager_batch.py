"""``wager.place-batch`` (issue 28: a studio's batch of wagers as one input): one journal record
for the batch, each wager judged as if placed alone, replayed as one input after a restart;
malformed or oversized batches refused before anything is recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import iter_records
from controller.service.config import ServiceConfig, load_config
from controller.service.control.client import CommandRefused, ControlClient
from controller.service.protocol import MAX_BATCH_WAGERS, ErrorCode
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
        with pytest.raises(CommandRefused) as refused:
            client.request("wager.place-batch", {"wagers": wagers})
        assert refused.value.code is ErrorCode.BAD_ARGS and words in refused.value.message
        assert client.request("wager.list")["wagers"] == []
    assert _inputs(config, "PlaceWagers") == []
