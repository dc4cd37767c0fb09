"""Two consumers of one group on one real PostgreSQL, fed by hand (no broker): whichever
consumer gets a record, each table's records are applied once and in chain order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from controller.feed.config import Broker, FloorConfig
from controller.floor.consumer import Floor, Message
from testbed.journalgen import rehome
from tests.controller.floor.conftest import SIGN_KEY, sign_line

TOPIC = "tablectl/site1/T1/events"


@pytest.fixture(name="lines")
def fixture_lines(journal_3cp: Path) -> list[bytes]:
    return [line.rstrip(b"\n") for line in rehome(journal_3cp, "T1")][:12]


@pytest.fixture(name="pair")
def fixture_pair(postgres: str) -> Iterator[tuple[Floor, Floor]]:
    """Consumers a and b of group "floor" (never connected: their batches are fed here)."""
    broker = Broker("127.0.0.1", 1883, False, None, None, None, None, None, 15)
    public = SIGN_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    floors = tuple(Floor(FloorConfig("<test>", "site1", postgres, broker, f"test-{name}",
                                     {"T1": public}, group="floor")) for name in "ab")
    yield floors  # type: ignore[misc]
    for floor in floors:
        floor.store.close()
        floor.client._reset_sockets()  # never started: see controller.feed.mqtt.stop


def _message(line: bytes) -> Message:
    return Message(TOPIC, line, None, 0, signature=sign_line(line))


def _applied(floor: Floor) -> list[int]:
    return [seq for (seq,) in floor.store.query(
        "SELECT seq FROM records WHERE table_id = 'T1' ORDER BY applied_ns, seq")]


def _pending(floor: Floor) -> list[int]:
    return [seq for (seq,) in floor.store.query("SELECT seq FROM pending ORDER BY seq")]


def test_a_record_ahead_of_its_predecessor_waits_for_the_other_consumer(
        pair: tuple[Floor, Floor], lines: list[bytes]) -> None:
    """Round robin hands seq 2 to b before a has applied seq 1: b keeps it in the database
    (a table the database has not seen starts before seq 1 in a group, so seq 2 is never
    taken for the first), and a, applying 1, applies 2 after it in the same transaction. The
    same the other way round for 3 and 4; a record both get (a resend) is applied once."""
    a, b = pair
    b.handle_batch([_message(lines[1])])
    assert _applied(a) == [] and _pending(a) == [2]
    a.handle_batch([_message(lines[0])])
    assert _applied(a) == [1, 2] and _pending(a) == []
    a.handle_batch([_message(lines[3])])
    b.handle_batch([_message(lines[2]), _message(lines[1])])
    assert _applied(b) == [1, 2, 3, 4] and _pending(b) == []
    assert b.store.query("SELECT duplicates FROM tables") == [(1,)]
    assert b.store.query("SELECT kind FROM problems") == []


def test_a_record_held_by_a_dead_consumer_is_asked_for_by_the_other(
        pair: tuple[Floor, Floor], lines: list[bytes]) -> None:
    """a has applied 1..3 and dies with 4 received, not committed; b gets 5 and 6 and keeps
    them; once the table's records have not moved for the resend pause, b asks T1's feed from
    4 (the chase reads the heads from the database, not its own memory: b never saw 1..3) and
    records the ask for the view, and applies 4..6 when 4 comes again."""
    a, b = pair
    a.handle_batch([_message(line) for line in lines[:3]])
    b.handle_batch([_message(lines[4]), _message(lines[5])])
    chase = b.chases["T1"]
    b.chase(chase.moved_at + chase.wait_s + 0.01)
    assert b.store.query("SELECT known_seq, asked_from, asks FROM behind") == [(6, 4, 1)]
    b.handle_batch([_message(lines[3])])
    assert _applied(b) == [1, 2, 3, 4, 5, 6] and _pending(b) == []
