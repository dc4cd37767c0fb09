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
from controller.floor.view import floor_view, view_lines
from drivers.backoff import ExponentialBackoff
from tests.controller.floor.conftest import SIGN_KEY, sign_line

TOPIC = "tablectl/site1/T1/events"


@pytest.fixture(name="floor")
def fixture_floor(tmp_path: Path):
    judged: list[Judged] = []
    broker = Broker("127.0.0.1", 1883, False, None, None, None, None, None, 15)
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    public = SIGN_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    floor = Floor(FloorConfig("<test>", "site1", str(tmp_path / "floor.sqlite3"), broker,
                              "test-floor", {"T1": public}),
                  on_judged=lambda j, m: judged.append(j))
    floor.judged = judged  # type: ignore[attr-defined]
    yield floor
    floor.store.close()
    floor.client._reset_sockets()  # noqa: SLF001 -- never started; see controller.feed.mqtt.stop


def _send(floor: Floor, payload: bytes, topic: str = TOPIC) -> None:
    """``payload`` as T1's feed sends it: an event with T1's signature, a status without."""
    signature = sign_line(payload) if topic.endswith("/events") else None
    floor.handle(Message(topic, payload, None, 0, signature=signature))


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


def _status(seq: int, online: bool = True) -> bytes:
    return json.dumps({"table": "T1", "online": online, "round": None, "state": None,
                       "seq": seq}).encode()


def test_a_table_the_floor_is_behind_on_is_asked_to_resend_and_never_shown_online(
        floor: Floor, lines: list[bytes]) -> None:
    """Finding 2: the broker acknowledged records 3..4 to T1's feed and lost them; the floor
    has 1..2 and then 5 (a gap), and T1's status says it sent up to 6. The view shows T1
    BEHIND by 4, not online; once its records have not moved for RESEND_AFTER_S the floor asks
    T1 to send again from 3, and again after a doubled pause; when 3..6 arrive it applies them
    in order and T1 is online again."""
    from controller.floor.consumer import RESEND_AFTER_S, RESEND_MAX_S

    # the pauses at the top of their jitter (drivers.backoff): exactly doubling
    floor.resend_backoff = ExponentialBackoff(RESEND_AFTER_S, RESEND_MAX_S, random=lambda: 1.0)
    for index in (0, 1, 4):
        _send(floor, lines[index])
    _send(floor, _status(6), "tablectl/site1/T1/status")
    view = floor_view(floor.store)["tables"]["T1"]
    assert (view["online"], view["feed_online"], view["behind"]) == (False, True, 4)
    assert "BEHIND" in view_lines(floor_view(floor.store))[1]
    chase = floor.chases["T1"]
    floor.chase(chase.moved_at + RESEND_AFTER_S / 2)
    assert chase.asks == 0
    floor.chase(chase.moved_at + RESEND_AFTER_S)
    assert (chase.asks, chase.asked_from) == (1, 3)
    assert floor_view(floor.store)["tables"]["T1"]["asked_from"] == 3
    floor.chase(chase.moved_at + RESEND_AFTER_S)  # the pause doubled: not yet
    assert chase.asks == 1
    floor.chase(chase.moved_at + 2 * RESEND_AFTER_S)
    assert chase.asks == 2
    for index in (2, 3, 4, 5):
        _send(floor, lines[index])
    floor.chase(chase.moved_at)
    assert "T1" not in floor.chases
    judged: list[Judged] = floor.judged  # type: ignore[attr-defined]
    assert [j.seq for j in judged if j.verdict is Verdict.APPLY] == [1, 2, 3, 4, 5, 6]
    view = floor_view(floor.store)["tables"]["T1"]
    assert (view["online"], view["behind"], view["last_seq"]) == (True, 0, 6)


def test_a_forged_record_changes_nothing_and_the_genuine_one_applies(
        floor: Floor, lines: list[bytes]) -> None:
    """Finding 3: a re-sealed record at T1's next seq with an all-zero HMAC and no valid
    signature is reported ``forged``; the genuine record at that seq then applies and the
    stream goes on."""
    from controller.journal.record import canonical_json, seal

    _send(floor, lines[0])
    data = json.loads(lines[1])
    data.pop("hash")
    data["payload"] = {"forged": True}
    body = seal(data, None)
    body["hmac"] = "0" * 64
    floor.handle(Message(TOPIC, canonical_json(body).encode(), None, 0, signature=b"\0" * 64))
    _send(floor, lines[1])
    _send(floor, lines[2])
    verdicts = [(j.verdict, j.seq) for j in floor.judged]  # type: ignore[attr-defined]
    assert verdicts == [(Verdict.APPLY, 1), (Verdict.FORGED, 2), (Verdict.APPLY, 2),
                        (Verdict.APPLY, 3)]
    assert floor.store.applied_hash("T1", 2) == json.loads(lines[1])["hash"]
    assert [p["kind"] for p in floor_view(floor.store)["problems"]] == ["forged"]


def test_a_status_with_a_key_given_twice_is_reported_not_applied(floor: Floor) -> None:
    """Issue 35: a status is read strictly (controller.strictjson): ``"online"`` given twice
    (true, then false) is not resolved to the last one silently; the status is reported as
    malformed, naming the key, and the table's status is left as it was."""
    _send(floor, b'{"table": "T1", "online": true, "round": null, "state": null, '
                 b'"online": false}', "tablectl/site1/T1/status")
    view = floor_view(floor.store)
    assert "T1" not in view["tables"] or view["tables"]["T1"]["online"] is not False
    problems = view["problems"]
    assert [p["kind"] for p in problems] == ["malformed"]
    judged: list[Judged] = floor.judged  # type: ignore[attr-defined]
    assert judged[-1].verdict is Verdict.MALFORMED and "'online' appears twice" in \
        judged[-1].detail


def test_the_pause_between_asks_is_jittered_bounded_and_starts_again_when_records_move(
        floor: Floor, lines: list[bytes]) -> None:
    """Issue 35: after each ask the pause doubles from RESEND_AFTER_S (up to RESEND_MAX_S),
    spread by equal jitter so tables left behind together are not asked in step, never below
    RESEND_AFTER_S; when the table's records move, the pause starts again from the first."""
    from controller.floor.consumer import RESEND_AFTER_S, RESEND_MAX_S

    floor.resend_backoff = ExponentialBackoff(RESEND_AFTER_S, RESEND_MAX_S,
                                              random=lambda: 0.0)  # the bottom of the jitter
    for index in (0, 4):
        _send(floor, lines[index])
    _send(floor, _status(6), "tablectl/site1/T1/status")
    chase = floor.chases["T1"]
    waits = []
    for _ in range(8):
        floor.chase(chase.moved_at + chase.wait_s)
        waits.append(chase.wait_s)
    assert waits == [min(RESEND_MAX_S, RESEND_AFTER_S * 2 ** n) / 2 for n in range(1, 9)]
    assert all(RESEND_AFTER_S <= wait <= RESEND_MAX_S for wait in waits)
    _send(floor, lines[1])  # seq 2 arrives: the records moved
    floor.chase(chase.moved_at + chase.wait_s)
    assert (chase.wait_s, chase.unanswered) == (RESEND_AFTER_S, 0)
    floor.chase(chase.moved_at + RESEND_AFTER_S)
    assert (chase.asks, chase.wait_s) == (9, RESEND_AFTER_S)  # 2 * 3 s at the bottom: 3 s
