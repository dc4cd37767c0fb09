"""The floor page on a floor kept in PostgreSQL (a floor of several consumers): the same
tiles and figures as from SQLite, and the page served from it."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from controller.floor.page.figures import read_period, read_tiles
from controller.floor.page.shift import Span
from controller.floor.store import Store
from controller.journal.record import parse_ts
from tests.feed_e2e.postgres import fixture_postgres
from tests.floor_page.conftest import start_floor_web
from tests.floor_page.floordb import fill_floor
from tests.floor_page.test_page import Browser

__all__ = ["fixture_postgres"]

TABLES = 4


def test_postgresql_gives_the_same_page_as_sqlite(postgres: str, journals: list[Path],
                                                  tmp_path: Path) -> None:
    """The same records applied to SQLite and to PostgreSQL give the same tiles and the same
    figures to the minor unit; ``tablectl floor web`` serves the floor from PostgreSQL."""
    made = fill_floor(postgres, journals, TABLES)
    fill_floor(tmp_path / "floor.sqlite3", journals, TABLES)
    times = [parse_ts(r.ts) for rs in made.values() for r in rs]
    now = max(times) + timedelta(seconds=1)
    span = Span("test", min(times).replace(microsecond=0), now)
    answers = []
    for url in (postgres, str(tmp_path / "floor.sqlite3")):
        store = Store(url, read_only=True)
        try:
            period = read_period(store, span, now)
            answers.append((read_tiles(store, now), period.total, period.tables,
                            period.games, period.payouts, period.win_steps))
        finally:
            store.close()
    assert answers[0] == answers[1]
    assert answers[0][1].rounds == 12 * TABLES
    config = tmp_path / "pg.toml"
    config.write_text(f'[floor]\nsite = "site1"\nbroker = "mqtt://127.0.0.1:1883"\n'
                      f'database = "{postgres}"\n')
    web = start_floor_web(config)
    try:
        tiles = json.loads(Browser(web.url).request("/floor/tiles.json")[2])["tables"]
    finally:
        web.stop()
    assert [t["table"] for t in tiles] == sorted(made)
