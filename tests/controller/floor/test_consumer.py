"""The floor consumer's handling of messages, without a broker: out-of-order records wait for
the gap to close, duplicates are counted, statuses are kept (the broker parts are in
tests/feed_e2e)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.feed.config import Broker, FloorConfig
from controller.floor.chain import Judged, Verdict
from controller.floor.consumer import Floor, Message
from controller.floor.view import floor_view

TOPIC = "tablectl/site1/T1/events"


@pytest.fixture(name="floor")
def fixture_floor(tmp_path: Path):
    judged: list[Judged] = []
    broker = Broker("127.0.0.1", 1883, False, None, None, None, None, None, 15)
    floor = Floor(FloorConfig("<test>", "site1", str(tmp_path / "floor.sqlite3"), broker,
                              "test-floor"), on_judged=lambda j, m: judged.append(j))
    floor.judged = judged  # type: ignore[attr-defined]
    yield floor
    floor.store.close()
    floor.client._reset_sockets()  # noqa: SLF001 -- never started; see controller.feed.mqtt.stop


def _send(floor: Floor, payload: bytes, topic: str = TOPIC) -> None:
    floor.handle(Message(topic, payload, None, 0))


def test_out_of_order_records_wait_for_the_gap_then_apply_in_order(
        floor: Floor, lines: list[bytes]) -> None:
    """Seq 1, then 4, 3, 5 (early: held, one gap report naming the table), then 2: the floor
    applies 1..5 in order, each once."""
    for index in (0, 3, 2, 4, 1):
        _send(floor, lines[index])
    judged = floor.judged  # type: ignore[attr-defined]
    applied = [j.seq for j in judged if j.verdict is Verdict.APPLY]
    assert applied == [1, 2, 3, 4, 5]
    gaps = [j for j in judged if j.verdict is Verdict.GAP]
    assert gaps[0].table == "T1" and gaps[0].seq == 4 and "2..3" in gaps[0].detail
    assert [p["kind"] for p in floor_view(floor.store)["problems"]] == ["gap"]


def test_duplicates_are_counted_and_status_kept(floor: Floor, lines: list[bytes]) -> None:
    """A record sent twice is applied once and counted; the table's retained status (here its
    Will: offline) shows in the view; a status naming another table is reported."""
    _send(floor, lines[0])
    _send(floor, lines[0])
    _send(floor, json.dumps({"table": "T1", "online": False, "round": None,
                             "state": None}).encode(), "tablectl/site1/T1/status")
    _send(floor, json.dumps({"table": "T2", "online": True}).encode(),
          "tablectl/site1/T1/status")
    view = floor_view(floor.store)
    assert view["tables"]["T1"]["duplicates"] == 1 and view["tables"]["T1"]["online"] is False
    assert [p["kind"] for p in view["problems"]] == ["malformed"]
