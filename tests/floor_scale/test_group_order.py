"""Two consumers of one group on one real PostgreSQL, fed by hand (no broker): whichever
consumer gets a record, each table's records are applied once and in chain order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.feed.config import Assign
from controller.floor.consumer import Floor
from testbed.journalgen import rehome
from tests.floor_scale.handfed import applied, floor_pair, message


@pytest.fixture(name="lines")
def fixture_lines(journal_3cp: Path) -> list[bytes]:
    return [line.rstrip(b"\n") for line in rehome(journal_3cp, "T1")][:12]


@pytest.fixture(name="pair")
def fixture_pair(postgres: str) -> Iterator[tuple[Floor, Floor]]:
    """Consumers a and b of group "floor" (never connected: their batches are fed here)."""
    yield from floor_pair(postgres, Assign.SHARED)


def _pending(floor: Floor) -> list[int]:
    return [seq for (seq,) in floor.store.query("SELECT seq FROM pending ORDER BY seq")]


def test_a_record_ahead_of_its_predecessor_waits_for_the_other_consumer(
        pair: tuple[Floor, Floor], lines: list[bytes]) -> None:
    """Round robin hands seq 2 to b before a has applied seq 1: b keeps it in the database
    (a table the database has not seen starts before seq 1 in a group, so seq 2 is never
    taken for the first), and a, applying 1, applies 2 after it in the same transaction. The
    same the other way round for 3 and 4; a record both get (a resend) is applied once."""
    a, b = pair
    b.handle_batch([message(lines[1])])
    assert applied(a) == [] and _pending(a) == [2]
    a.handle_batch([message(lines[0])])
    assert applied(a) == [1, 2] and _pending(a) == []
    a.handle_batch([message(lines[3])])
    b.handle_batch([message(lines[2]), message(lines[1])])
    assert applied(b) == [1, 2, 3, 4] and _pending(b) == []
    assert b.store.query("SELECT duplicates FROM tables") == [(1,)]
    assert b.store.query("SELECT kind FROM problems") == []


def test_a_record_held_by_a_dead_consumer_is_asked_for_by_the_other(
        pair: tuple[Floor, Floor], lines: list[bytes]) -> None:
    """a has applied 1..3 and dies with 4 received, not committed; b gets 5 and 6 and keeps
    them; once the table's records have not moved for the resend pause, b asks T1's feed from
    4 (the chase reads the heads from the database, not its own memory: b never saw 1..3) and
    records the ask for the view, and applies 4..6 when 4 comes again."""
    a, b = pair
    a.handle_batch([message(line) for line in lines[:3]])
    b.handle_batch([message(lines[4]), message(lines[5])])
    chase = b.chases["T1"]
    b.chase(chase.moved_at + chase.wait_s + 0.01)
    assert b.store.query("SELECT known_seq, asked_from, asks FROM behind") == [(6, 4, 1)]
    b.handle_batch([message(lines[3])])
    assert applied(b) == [1, 2, 3, 4, 5, 6] and _pending(b) == []
