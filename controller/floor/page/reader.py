"""The floor database as the page reads it: one read-only connection, one reader at a time.

The store's connection is not shared between threads at once (its open transaction is one
attribute), so reads take a lock; they run in the web's worker threads, never on the event
loop (STYLE.md, "Threads"), and each is a few indexed queries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

from controller.floor.machines import SCHEMA as MACHINES_SCHEMA
from controller.floor.page.figures import Period, Tile, read_period, read_tiles
from controller.floor.page.shift import Shifts
from controller.floor.store import Store


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True, slots=True)
class FloorSnapshot:
    """What one page shows, read at one moment."""

    at: datetime
    tiles: list[Tile]
    shift: Period
    day: Period


class FloorReader:
    def __init__(self, database: str, shifts: Shifts,
                 clock: Callable[[], datetime] = utc_now) -> None:
        self.store = Store(database, read_only=True, schema_also=MACHINES_SCHEMA)
        self.shifts = shifts
        self.clock = clock
        self._lock = threading.Lock()

    def tiles(self) -> tuple[datetime, list[Tile]]:
        now = self.clock()
        with self._lock:
            return now, read_tiles(self.store, now)

    def snapshot(self) -> FloorSnapshot:
        now = self.clock()
        with self._lock:
            return FloorSnapshot(now, read_tiles(self.store, now),
                            read_period(self.store, self.shifts.shift(now), now),
                            read_period(self.store, self.shifts.day(now), now))

    def close(self) -> None:
        with self._lock:
            self.store.close()
