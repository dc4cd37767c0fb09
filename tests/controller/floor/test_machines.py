"""One machine across tables (issue 25): the floor pools each shuffler's evidence by its serial
number, whichever table it served, and shows it in the floor view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from controller.bench import Bench
from controller.feed.config import Broker, FloorConfig
from controller.floor.consumer import Floor, Message
from controller.floor.view import floor_view, view_lines
from controller.games.cards import FULL_DECK
from controller.journal.reader import iter_records
from testbed.journalgen import rehome
from tests.controller.floor.conftest import SIGN_KEY, sign_line
from controller.journal.record import GENESIS_HASH, canonical_json, seal, to_jsonable
from firmware_sim.shuffler import IDENTITY

STUCK = to_jsonable(FULL_DECK[7])
SERIAL = "SN-4711"


def _stuck_at_first_place(source: Path, table: str) -> list[bytes]:
    """A real bench journal re-sealed as ``table``'s chain, the shuffler's recorded identity
    (``device_identified``, written by the service as the simulator answered IDENTIFY) naming
    :data:`SERIAL`, each deck's first dealt card replaced by the same card (a machine that holds
    it at dealt position 1), swapped with that card's own place in the deck so no card is dealt
    twice."""
    lines, prev, first_of_deck = [], GENESIS_HASH, True
    original: Any = None
    bodies = [record.body() for record in iter_records([source])]
    assert any(body["event"] == "device_identified" for body in bodies)
    for seq, body in enumerate(bodies, start=1):
        body["seq"] = seq
        payload = body["payload"]
        if body["event"] == "device_identified":
            body["payload"] = payload = {**payload, "identity": {**payload["identity"],
                                                                 "serial": SERIAL}}
        if body["event"] == "input_device" and payload.get("type") == "ShuffleDone":
            first_of_deck = True
        if body["event"] == "input_device" and payload.get("type") == "CardSetDispensed":
            fields = dict(payload["fields"])
            cards = list(fields["cards"])
            if first_of_deck:
                first_of_deck = False
                original, cards[0] = cards[0], STUCK
                cards = [original if c == STUCK and i else c for i, c in enumerate(cards)]
            else:
                cards = [original if c == STUCK else c for c in cards]
            fields["cards"] = cards
            body["payload"] = {**payload, "fields": fields}
        body["table"], body["prev"] = table, prev
        sealed = seal(body, None)
        prev = sealed["hash"]
        lines.append(canonical_json(sealed).encode())
    return lines


@pytest.fixture(name="floor")
def fixture_floor(tmp_path: Path):
    broker = Broker("127.0.0.1", 1883, False, None, None, None, None, None, 15)
    public = SIGN_KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    floor = Floor(FloorConfig("<test>", "site1", str(tmp_path / "floor.sqlite3"), broker,
                              "test-floor", {"T1": public, "T2": public}))
    yield floor
    floor.store.close()
    floor.client._reset_sockets()  # noqa: SLF001 -- never started; see controller.feed.mqtt.stop


def test_two_tables_sharing_one_shuffler_serial_pool_its_evidence(
        floor: Floor, tmp_path: Path) -> None:
    """Three decks at T1, then the same machine (the simulator's serial) three decks at T2,
    the same card first in each: neither table alone has the five decks the position-run test
    needs; the floor, pooling by serial, flags it at T2 and lists both tables."""
    source = tmp_path / "bench"
    Bench("rws-three-card-poker", 3, seed=3, journal_dir=source).run()
    shuffles = sum(1 for r in iter_records([source])
                   if r.event_type == "input_device" and r.payload.get("type") == "ShuffleDone")
    assert shuffles == 3
    for table in ("T1", "T2"):
        for line in _stuck_at_first_place(source, table):
            floor.handle(Message(f"tablectl/site1/{table}/events", line, None, 0,
                                 signature=sign_line(line)))
    view = floor_view(floor.store)
    serial = SERIAL
    assert set(view["machines"]) == {serial}
    machine = view["machines"][serial]
    assert machine["tables"] == ["T1", "T2"] and machine["decks"] == 6
    runs = [a for a in machine["alerts"] if a["monitor"] == "position_run"]
    assert len(runs) == 1 and runs[0]["table"] == "T2"
    # T2's decks are T1's orders again (the same journal): pooled, that replay is seen too
    assert sorted(a["monitor"] for a in machine["alerts"]) == ["position_run", "repeat"]
    assert f"{FULL_DECK[7].code} dealt at position 1 5 decks running" in runs[0]["detail"]
    assert any(line.startswith(f"shuffler {serial}: 6 decks at T1, T2")
               for line in view_lines(view))

def test_a_table_alone_does_not_reach_the_run(floor: Floor, tmp_path: Path) -> None:
    """The same three decks at one table only: no alert (the pooling is what finds it)."""
    source = tmp_path / "bench"
    Bench("rws-three-card-poker", 3, seed=3, journal_dir=source).run()
    for line in _stuck_at_first_place(source, "T1"):
        floor.handle(Message("tablectl/site1/T1/events", line, None, 0,
                             signature=sign_line(line)))
    machine = floor_view(floor.store)["machines"][SERIAL]
    assert machine["decks"] == 3 and machine["alerts"] == []
    assert rehome(source, "T3")  # the generator the floor tests share reads the same journal


def test_two_real_bench_tables_with_one_simulated_serial_are_pooled(
        floor: Floor, tmp_path: Path) -> None:
    """End to end, nothing written by hand: two bench tables (each the service's wiring with
    its own journal), whose simulated shufflers answer IDENTIFY with the same serial, fed to
    the floor as T1 and T2: the floor's machines view lists that serial at both tables with
    every deck of both. (On a journal without ``device_identified`` it pools nothing.)"""
    journals = {"T1": tmp_path / "t1", "T2": tmp_path / "t2"}
    for seed, (table, directory) in enumerate(journals.items(), start=1):
        Bench("rws-three-card-poker", 2, seed=seed, journal_dir=directory).run()
        serials = [r.payload["identity"]["serial"] for r in iter_records([directory])
                   if r.event_type == "device_identified"]
        assert serials == [IDENTITY.serial]
        for line in rehome(directory, table):
            line = line.rstrip(b"\n")
            floor.handle(Message(f"tablectl/site1/{table}/events", line, None, 0,
                                 signature=sign_line(line)))
    machines = floor_view(floor.store)["machines"]
    assert set(machines) == {IDENTITY.serial}
    assert machines[IDENTITY.serial]["tables"] == ["T1", "T2"]
    assert machines[IDENTITY.serial]["decks"] == 4
