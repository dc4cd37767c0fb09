"""The floor view in PostgreSQL: the same records, applied once, the same view as SQLite."""

from __future__ import annotations

from pathlib import Path

from controller.floor.chain import Verdict
from controller.floor.store import Store
from controller.floor.view import floor_view
from testbed.journalgen import rehome, write_all
from tests.feed_e2e.broker import Mosquitto
from tests.feed_e2e.conftest import feed_config, floor_config
from tests.feed_e2e.helpers import RunningFloor, publish_journal


def test_floor_on_postgresql_applies_once_and_survives_a_restart(
        tmp_path: Path, pki: Path, broker: Mosquitto, journal_3cp: Path, postgres: str) -> None:
    """A floor on PostgreSQL applies a table's journal; a second floor process on the same
    database, fed the whole journal again (a feed whose cursor was lost), applies nothing
    twice and reports nothing: the database is the idempotence, not the process's memory."""
    lines = rehome(journal_3cp, "T1")
    write_all(tmp_path / "journal-T1", lines)
    config = feed_config(tmp_path, pki, broker, "T1", tmp_path / "journal-T1")
    for attempt in range(2):
        with RunningFloor(floor_config(tmp_path, pki, broker, database=postgres)) as floor:
            (tmp_path / "feed-T1" / "feed.cursor").unlink(missing_ok=True)
            publish_journal(config, len(lines))
            wanted = Verdict.APPLY if attempt == 0 else Verdict.DUPLICATE
            seen = floor.until(lambda j: j.seq == len(lines) and j.verdict is wanted)
            assert {j.verdict for j in seen} == {wanted}
    store = Store(postgres)
    try:
        assert store.query("SELECT COUNT(*), MIN(seq), MAX(seq) FROM records") == [
            (len(lines), 1, len(lines))]
        view = floor_view(store)
    finally:
        store.close()
    assert view["problems"] == [] and view["tables"]["T1"]["duplicates"] == len(lines)
    assert view["tables"]["T1"]["settled"] + view["tables"]["T1"]["voided"] == 12
