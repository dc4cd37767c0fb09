"""The floor page's figures against each table's own journal, exact in minor units; shifts and
the gaming day; hold % in integers; the chart's numbers."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from controller.floor.page.chart import rounds_chart, win_chart
from controller.floor.page.errors import FloorPageConfigError
from controller.floor.page.figures import Figures, hold_percent, read_period, read_tiles
from controller.floor.page.shift import Shifts, Span
from controller.floor.store import Store
from controller.journal.record import Record, parse_ts
from controller.journal.rounds import summarise_rounds
from tests.floor_page.floordb import fill_floor

TABLES = 6


@pytest.fixture(name="floor", scope="module")
def fixture_floor(tmp_path_factory: pytest.TempPathFactory, journals: list[Path]
                  ) -> tuple[Path, dict[str, list[Record]]]:
    database = tmp_path_factory.mktemp("floor") / "floor.sqlite3"
    return database, fill_floor(database, journals, TABLES)


def _covering(records: dict[str, list[Record]]) -> tuple[Span, datetime]:
    times = [parse_ts(r.ts) for rs in records.values() for r in rs]
    start = min(times).replace(microsecond=0)
    end = max(times) + timedelta(seconds=1)
    return Span("test", start, end), end


def test_shift_figures_equal_each_tables_journal(
        floor: tuple[Path, dict[str, list[Record]]]) -> None:
    """Per table: rounds settled and voided, win (the house's net: minus the players' nets that
    ``tablectl journal rounds`` lists), voids per clause and every round's payout equal what
    the table's own journal gives (:func:`controller.journal.rounds.summarise_rounds`), to the
    minor unit. Drop equals the stakes the journal's settlements record (``journal rounds``
    does not list stakes). The per-game and all-tables figures are the sums."""
    database, records = floor
    span, now = _covering(records)
    store = Store(str(database), read_only=True)
    try:
        period = read_period(store, span, now)
    finally:
        store.close()
    want_total, want_payouts = Figures(), []
    for table, table_records in records.items():
        want = Figures()
        for summary in summarise_rounds(table_records):
            if not summary.ended:
                continue
            net = sum(int(result.get("net") or 0) for result in summary.results)
            stake = sum(int(result.get("stake", 0)) for record in table_records
                        if record.round_id == summary.round_id
                        and record.event_type in ("round_settled", "round_voided")
                        for result in record.payload["settlement"]["results"])
            clause = None if summary.void is None else summary.void["clause"]
            for figures in (want, want_total):
                figures.add("voided" if summary.void else "settled", stake, -net, clause)
            if net > 0:
                want_payouts.append(net)
        got = period.tables[table]
        assert (got.settled, got.voided, got.win, got.drop, got.voids) == \
            (want.settled, want.voided, want.win, want.drop, want.voids), table
        assert want.voided > 0 and want.settled > 0  # the journals exercise both
    total = period.total
    assert (total.rounds, total.win, total.drop, total.voids) == \
        (want_total.rounds, want_total.win, want_total.drop, want_total.voids)
    assert sum(g.win for g in period.games.values()) == total.win
    assert sum(g.drop for g in period.games.values()) == total.drop
    assert [p.paid for p in period.payouts] == sorted(want_payouts, reverse=True)[:5]
    assert period.win_steps[-1] == total.win
    assert sum(period.rounds_per_hour) == total.rounds


def test_tiles_show_game_round_state_devices_and_serial(
        floor: tuple[Path, dict[str, list[Record]]]) -> None:
    """Every table is a tile with its game, last round and state as its feed's status says,
    online with nothing behind, its devices and the shuffler's serial it identified."""
    database, records = floor
    store = Store(str(database), read_only=True, schema_also=())
    try:
        tiles = read_tiles(store, datetime.now(timezone.utc))
    finally:
        store.close()
    assert [t.table for t in tiles] == sorted(records)
    for tile in tiles:
        last = records[tile.table][-1]
        assert tile.online is True and tile.behind == 0 and tile.last_seq == last.seq
        assert tile.game in ("rws-three-card-poker", "rws-nc-three-pictures")
        assert tile.round == "12"
        assert tile.serials == ("SIM-HF3-0001",)
        assert dict(tile.devices).get("shuffler") is True


@pytest.mark.parametrize(("win", "drop", "shown"), [
    (1234, 10000, "12.34 %"), (-500, 37200, "-1.34 %"), (1, 3, "33.33 %"), (2, 3, "66.67 %"),
    (-1, 8, "-12.50 %"), (0, 100, "0.00 %"), (5, 0, "-")])
def test_hold_percent_is_exact_integers(win: int, drop: int, shown: str) -> None:
    """Hold % is win over drop rounded half away from zero to a hundredth of a percent, in
    integers (no float ever touches money); without a drop there is none."""
    figures = Figures(settled=1, drop=drop, win=win)
    assert hold_percent(figures.hold_bp) == shown


def test_shifts_and_the_gaming_day() -> None:
    """The 02:00 rounds belong to the night shift that began at 22:00 the day before, and to
    the gaming day that began at 06:00 the day before."""
    shifts = Shifts.parse("22:00, 06:00,14:00")
    now = datetime(2026, 3, 2, 2, 0, tzinfo=timezone.utc)
    shift, day = shifts.shift(now), shifts.day(now)
    assert (shift.start, shift.end) == (datetime(2026, 3, 1, 22, tzinfo=timezone.utc),
                                        datetime(2026, 3, 2, 6, tzinfo=timezone.utc))
    assert (day.start, day.end) == (datetime(2026, 3, 1, 6, tzinfo=timezone.utc),
                                    datetime(2026, 3, 2, 6, tzinfo=timezone.utc))
    at_start = shifts.shift(datetime(2026, 3, 2, 14, tzinfo=timezone.utc))
    assert at_start.start == datetime(2026, 3, 2, 14, tzinfo=timezone.utc)


@pytest.mark.parametrize(("text", "named"), [
    ("", "give 1 to 24"), ("6:00", "'6:00' is not a time"), ("24:00", "'24:00' is not"),
    ("06:00,06:00", "given twice"), ("06:00,lunch", "'lunch' is not a time")])
def test_bad_shifts_are_named(text: str, named: str) -> None:
    """A shift setting that is not a list of HH:MM is refused, naming the bad part."""
    with pytest.raises(FloorPageConfigError, match=named):
        Shifts.parse(text)


def test_charts_carry_the_series() -> None:
    """The win chart ends at the shift's win; the bars are the rounds per hour; both are SVG
    without script or inline style."""
    win = str(win_chart((100, -250, 1200), "win"))
    bars = str(rounds_chart((3, 0, 7), "rounds"))
    assert 'data-win="1200"' in win and "12.00" in win
    assert [int(v) for v in re.findall(r'data-rounds="(\d+)"', bars)] == [3, 0, 7]
    for svg in (win, bars):
        assert svg.startswith("<svg") and "<script" not in svg and "style=" not in svg
