"""What the floor page shows, read from the floor's database: the tiles and the figures.

Only what the feeds sent is there (``controller.floor.store``): round events, settlements'
stakes and nets, irregularities, each table's retained status and the machines' findings.
The store keeps no card, so no output of this page can show one (a face-down card before its
reveal included: the feed holds those records until the reveal, docs/feed.md). Money stays in
integer minor units to the last digit; hold % is worked out in integers (basis points).

The floor's own rules are reused, not restated: online and behind come from
:func:`controller.floor.view.floor_view` (online means the feed is connected and the floor has
all it sent), holds are the store's :data:`~controller.floor.store.IRREGULARITY_EVENTS`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from controller.floor.page.shift import Span
from controller.floor.store import IRREGULARITY_EVENTS, Store
from controller.floor.view import floor_view
from controller.journal.record import format_ts, parse_ts

TOP_PAYOUTS = 5
BUCKET = timedelta(minutes=15)
"""The chart's step: win is summed per quarter hour, rounds per hour per hour."""


@dataclass(frozen=True, slots=True)
class TileHold:
    """A table waiting for a supervisor: the irregularity that stopped it."""

    event: str
    kind: str | None
    clause: str | None


@dataclass(frozen=True, slots=True)
class MachineFinding:
    """A protection monitor's alert on the machine (shuffler) at a table."""

    serial: str
    seq: int
    monitor: str
    detail: str


@dataclass(frozen=True, slots=True)
class Tile:
    table: str
    site: str
    game: str | None
    round: str | None
    state: str | None
    online: bool | None
    """None: no status from the table's feed yet."""
    behind: int
    """Records the table sent that the floor has not applied."""
    last_seq: int
    hold: TileHold | None
    devices: tuple[tuple[str, bool], ...]
    serials: tuple[str, ...]
    findings: tuple[MachineFinding, ...]


@dataclass(frozen=True, slots=True)
class Payout:
    """A round whose players were paid more than they lost: ``paid`` is their net (minor)."""

    table: str
    round: str
    game: str | None
    paid: int
    ended: str


@dataclass(slots=True)
class Figures:
    """Ended rounds in a span: counts, drop (total wagered) and win (the house's net), minor."""

    settled: int = 0
    voided: int = 0
    drop: int = 0
    win: int = 0
    voids: dict[str, int] = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        return self.settled + self.voided

    def add(self, outcome: str, wagered: int, hold: int, clause: str | None) -> None:
        if outcome == "voided":
            self.voided += 1
            key = clause or "(no clause)"
            self.voids[key] = self.voids.get(key, 0) + 1
        else:
            self.settled += 1
        self.drop += wagered
        self.win += hold

    @property
    def hold_bp(self) -> int | None:
        """Win over drop in basis points (hundredths of a percent), rounded half away from
        zero, in integers; None without a drop."""
        if self.drop <= 0:
            return None
        size = (abs(self.win) * 10000 * 2 + self.drop) // (2 * self.drop)
        return size if self.win >= 0 else -size


@dataclass(frozen=True, slots=True)
class Period:
    """One span's figures, whole and per table and per game, and its chart series."""

    span: Span
    elapsed_s: float
    """How much of the span has passed (rounds per hour are per hour so far)."""
    total: Figures
    tables: dict[str, Figures]
    games: dict[str, Figures]
    payouts: tuple[Payout, ...]
    win_steps: tuple[int, ...]
    """The cumulative win at the end of each :data:`BUCKET` of the span so far."""
    rounds_per_hour: tuple[int, ...]
    """Rounds ended in each whole hour of the span so far."""

    def per_hour(self, figures: Figures) -> float:
        return figures.rounds * 3600 / self.elapsed_s if self.elapsed_s > 0 else 0.0


def read_tiles(store: Store, now: datetime) -> list[Tile]:
    """Every table the floor knows, by id."""
    view = floor_view(store, now=now)
    devices: dict[str, tuple[tuple[str, bool], ...]] = {}
    for table, body in store.query("SELECT table_id, body FROM statuses"):
        try:
            status = json.loads(body)
        except ValueError:
            continue  # the consumer stores what it validated; a bad body shows no devices
        found = status.get("devices") if isinstance(status, dict) else None
        if isinstance(found, dict):
            devices[table] = tuple(sorted((str(k), bool(v)) for k, v in found.items()))
    serials: dict[str, list[str]] = defaultdict(list)
    for serial, tables in store.query("SELECT serial, tables FROM machines ORDER BY serial"):
        for table in (tables or "").split(","):
            if table:
                serials[table].append(serial)
    findings: dict[str, list[MachineFinding]] = defaultdict(list)
    for serial, table, seq, monitor, detail in store.query(
            "SELECT serial, table_id, seq, monitor, detail FROM machine_alerts "
            "ORDER BY table_id, seq"):
        findings[table].append(MachineFinding(serial, int(seq), monitor, detail))
    latest: dict[str, TileHold] = {}
    for table, event, kind, clause in store.query(
            "SELECT table_id, event, kind, clause FROM irregularities ORDER BY table_id, seq"):
        latest[table] = TileHold(event, kind, clause)
    tiles = []
    for table, row in view["tables"].items():
        held = row["state"] in IRREGULARITY_EVENTS
        tiles.append(Tile(
            table=table, site=row["site"], game=row["game"], round=row["round"],
            state=row["state"], online=row["online"], behind=row["behind"],
            last_seq=row["last_seq"], hold=latest.get(table) if held else None,
            devices=devices.get(table, ()), serials=tuple(serials.get(table, ())),
            findings=tuple(findings.get(table, ()))))
    return tiles


def read_period(store: Store, span: Span, now: datetime) -> Period:
    """The figures of the rounds that ended in ``span`` (up to ``now``)."""
    until = min(now, span.end)
    total = Figures()
    tables: dict[str, Figures] = {}
    games: dict[str, Figures] = {}
    payouts: list[Payout] = []
    buckets = max(1, -(-int((until - span.start).total_seconds()) // int(BUCKET.total_seconds())))
    hours = max(1, -(-int((until - span.start).total_seconds()) // 3600))
    win_per_bucket = [0] * buckets
    rounds_per_hour = [0] * hours
    rows = store.query(
        "SELECT r.table_id, r.round_id, COALESCE(r.game, t.game), r.outcome, r.wagered, "
        "r.hold, r.clause, r.ended_ts FROM rounds r LEFT JOIN tables t "
        "ON t.table_id = r.table_id WHERE r.outcome IS NOT NULL AND r.ended_ts >= ? "
        "AND r.ended_ts < ? ORDER BY r.ended_ts", (format_ts(span.start), format_ts(span.end)))
    for table, round_id, game, outcome, wagered, hold, clause, ended in rows:
        wagered, hold = int(wagered or 0), int(hold or 0)
        for figures in (total, tables.setdefault(table, Figures()),
                        games.setdefault(game or "(unknown game)", Figures())):
            figures.add(outcome, wagered, hold, clause)
        if hold < 0:
            payouts.append(Payout(table, round_id, game, -hold, ended))
        offset = _seconds(ended, span.start)
        win_per_bucket[min(buckets - 1, int(offset // BUCKET.total_seconds()))] += hold
        rounds_per_hour[min(hours - 1, int(offset // 3600))] += 1
    steps, running = [], 0
    for win in win_per_bucket:
        running += win
        steps.append(running)
    payouts.sort(key=lambda p: (-p.paid, p.ended, p.table))
    return Period(span, max(0.0, (until - span.start).total_seconds()), total,
                  dict(sorted(tables.items())), dict(sorted(games.items())),
                  tuple(payouts[:TOP_PAYOUTS]), tuple(steps), tuple(rounds_per_hour))


def _seconds(ts: str, start: datetime) -> float:
    return max(0.0, (parse_ts(ts) - start).total_seconds())


def hold_percent(bp: int | None) -> str:
    """Basis points as a percentage with two decimals (``1234`` -> ``12.34 %``)."""
    if bp is None:
        return "-"
    sign = "-" if bp < 0 else ""
    return f"{sign}{abs(bp) // 100}.{abs(bp) % 100:02d} %"


def tile_json(tile: Tile) -> dict[str, Any]:
    """A tile as JSON (the page's ``/floor/tiles.json``)."""
    return {"table": tile.table, "site": tile.site, "game": tile.game, "round": tile.round,
            "state": tile.state, "online": tile.online, "behind": tile.behind,
            "last_seq": tile.last_seq,
            "hold": None if tile.hold is None else {"event": tile.hold.event,
                                                    "kind": tile.hold.kind,
                                                    "clause": tile.hold.clause},
            "devices": dict(tile.devices), "serials": list(tile.serials),
            "findings": [{"serial": f.serial, "seq": f.seq, "monitor": f.monitor,
                          "detail": f.detail} for f in tile.findings]}
