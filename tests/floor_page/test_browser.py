"""The floor page in Debian's Chromium with 200 simulated tables, at 1920x1080 and 1280x720:
every table a tile, the exceptions counted and coloured (a hold with its clause, a table
offline, one behind), live as the floor database changes, and the gaming day's figures equal
to the journals'. Screenshots go to ``docs/`` when ``TABLECTL_SCREENSHOTS=1``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from controller.feed.status import TableStatus
from controller.floor.machines import Machines
from controller.floor.store import Store
from controller.journal.record import Record
from controller.journal.rounds import summarise_rounds
from tests.floor_page.conftest import FloorWeb, floor_config, start_floor_web
from tests.floor_page.floordb import SITE, apply_records, fill_floor
from tests.web.conftest import browser_fixture, no_leaks_fixture  # noqa: F401 (fixtures)

TABLES = 200
HELD = ("T007", "T123")
OFFLINE = "T042"
BEHIND, BEHIND_BY = "T077", 25
GOES_OFFLINE = "T150"
WAIT_MS = 30_000
DOCS = Path(__file__).resolve().parents[2] / "docs"
SIZES = [(1920, 1080), (1280, 720)]


def _status(records: list[Record], online: bool) -> str:
    status = TableStatus(SITE, records[0].table_id)
    for record in records:
        status.note(record)
    return status.payload(online=online).decode()


@pytest.fixture(name="floor", scope="module")
def fixture_floor(tmp_path_factory: pytest.TempPathFactory, journals: list[Path]
                  ) -> tuple[Path, dict[str, list[Record]]]:
    """200 tables over the two bench journals through the floor's apply path; two stopped at
    a hold, one offline (its Will), one the floor is 25 records behind."""
    database = tmp_path_factory.mktemp("floor200") / "floor.sqlite3"
    return database, fill_floor(database, journals, TABLES, apply=_apply_with_exceptions)


def _apply_with_exceptions(store: Store, machines: Machines, table: str,
                           records: list[Record]) -> list[Record]:
    """:data:`HELD` stopped at their hold, :data:`OFFLINE` offline, :data:`BEHIND` short of
    its last :data:`BEHIND_BY` records (its status says it has them all)."""
    if table in HELD:
        records = records[:next(i for i, r in enumerate(records)
                                if r.event_type == "supervisor_required") + 1]
    if table == BEHIND:
        apply_records(store, machines, records[:-BEHIND_BY])
        store.set_status(table, True, _status(records, True))
        return records[:-BEHIND_BY]
    apply_records(store, machines, records, online=table != OFFLINE)
    return records


@pytest.fixture(name="web", scope="module")
def fixture_web(floor: tuple[Path, dict[str, list[Record]]],
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[FloorWeb]:
    config = floor_config(tmp_path_factory.mktemp("config200"), floor[0])
    web = start_floor_web(config, "--console-url", "https://{table}.pit.example:8640/console")
    try:
        yield web
    finally:
        web.stop()


@pytest.fixture(name="page", params=SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def page_fixture(request: pytest.FixtureRequest, browser: object) -> Iterator[Page]:
    width, height = request.param
    context = browser.new_context(viewport={"width": width, "height": height})  # type: ignore[attr-defined]
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


def _journal_day(applied: dict[str, list[Record]]) -> tuple[int, int]:
    """Rounds ended and the house's win over every table's journal (the records the floor
    has), as ``tablectl journal rounds`` gives them per table, summed."""
    rounds = win = 0
    for records in applied.values():
        for summary in summarise_rounds(records):
            if summary.ended:
                rounds += 1
                win -= sum(int(result.get("net") or 0) for result in summary.results)
    return rounds, win


def test_200_tables_at_a_glance(page: Page, web: FloorWeb,
                                floor: tuple[Path, dict[str, list[Record]]],
                                tmp_path: Path) -> None:
    """Every table is a tile; the holds (with their clause), the offline table and the one
    behind are counted and marked; the gaming day's rounds and win equal the journals' sums;
    the shift's chart is drawn."""
    page.goto(web.url + "/floor")
    expect(page.locator(".tile")).to_have_count(TABLES, timeout=WAIT_MS)
    expect(page.locator("#count-held b")).to_have_text(str(len(HELD)))
    expect(page.locator("#count-offline b")).to_have_text("1")
    expect(page.locator("#count-behind b")).to_have_text("1")
    for table in HELD:
        hold = page.locator(f'.tile[data-table="{table}"] .t-hold')
        expect(hold).to_contain_text("HOLD")
        expect(hold).to_contain_text("RWS-")
    expect(page.locator(f'.tile[data-table="{OFFLINE}"] .t-online')).to_have_text("OFFLINE")
    expect(page.locator(f'.tile[data-table="{BEHIND}"] .t-online')).to_have_text(
        f"behind {BEHIND_BY}")
    assert page.locator('.tile[data-table="T001"]').get_attribute("href") == \
        "https://T001.pit.example:8640/console"
    rounds, win = _journal_day(floor[1])
    day = page.locator("#day-totals tr.total")
    expect(day.locator("td").first).to_have_text(str(rounds))
    assert int(day.locator("td.money").nth(1).get_attribute("data-minor") or "x") == win
    expect(page.locator("#shift svg.chart.win")).to_be_visible()
    size = page.viewport_size
    assert size is not None
    target = DOCS if os.environ.get("TABLECTL_SCREENSHOTS") == "1" else tmp_path
    page.screenshot(path=str(target / f"floor-{size['width']}x{size['height']}.png"))


def test_a_table_going_offline_shows_without_a_reload(
        page: Page, web: FloorWeb, floor: tuple[Path, dict[str, list[Record]]]) -> None:
    """The page follows the floor database: a table's Will (offline) reaches its tile, and the
    offline count, within the page's next poll, with no reload."""
    page.goto(web.url + "/floor")
    tile = page.locator(f'.tile[data-table="{GOES_OFFLINE}"] .t-online')
    expect(tile).to_have_text("online", timeout=WAIT_MS)
    store = Store(str(floor[0]))
    try:
        store.set_status(GOES_OFFLINE, False, _status(floor[1][GOES_OFFLINE], False))
        expect(tile).to_have_text("OFFLINE", timeout=WAIT_MS)
        expect(page.locator("#count-offline b")).to_have_text("2")
    finally:
        store.set_status(GOES_OFFLINE, True, _status(floor[1][GOES_OFFLINE], True))
        store.close()
    expect(tile).to_have_text("online", timeout=WAIT_MS)
