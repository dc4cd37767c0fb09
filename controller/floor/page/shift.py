"""Shifts and the gaming day: pure functions of a clock reading and the house's shift starts.

A casino counts its figures per shift (the pit's relief, three a day by default) and per gaming
day, which begins with the day's first shift rather than at midnight: the 02:00 rounds belong
to the night shift that began the evening before. Times are UTC, as the journal's are; a house
whose shifts start at local hours converts them once, in the setting (docs/floor-page.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone

from controller.floor.page.errors import FloorPageConfigError

DEFAULT_SHIFTS = "06:00,14:00,22:00"
_HHMM = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])")


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open stretch of time ``[start, end)``, named for the page."""

    name: str
    start: datetime
    end: datetime

    @property
    def hours(self) -> float:
        return (self.end - self.start).total_seconds() / 3600


@dataclass(frozen=True, slots=True)
class Shifts:
    """The shift start times of a day, in order (UTC); the first also starts the gaming day."""

    starts: tuple[time, ...]

    @classmethod
    def parse(cls, text: str) -> Shifts:
        """``"06:00,14:00,22:00"``: one to 24 distinct ``HH:MM`` (UTC), any order."""
        parts = [part.strip() for part in text.split(",") if part.strip()]
        if not 1 <= len(parts) <= 24:
            raise FloorPageConfigError(f"shifts {text!r}: give 1 to 24 start times, HH:MM "
                                       f"(UTC), comma-separated, e.g. {DEFAULT_SHIFTS}")
        starts = []
        for part in parts:
            found = _HHMM.fullmatch(part)
            if found is None:
                raise FloorPageConfigError(f"shifts {text!r}: {part!r} is not a time HH:MM "
                                           f"(00:00 to 23:59, UTC)")
            starts.append(time(int(found.group(1)), int(found.group(2))))
        if len(set(starts)) != len(starts):
            raise FloorPageConfigError(f"shifts {text!r}: a start time is given twice")
        return cls(tuple(sorted(starts)))

    def _starts_around(self, now: datetime) -> list[datetime]:
        day = now.astimezone(timezone.utc).date()
        return [datetime.combine(day + timedelta(days=offset), start, tzinfo=timezone.utc)
                for offset in (-1, 0, 1) for start in self.starts]

    def shift(self, now: datetime) -> Span:
        """The shift ``now`` falls in."""
        starts = self._starts_around(now)
        index = max(i for i, start in enumerate(starts) if start <= now)
        start, end = starts[index], starts[index + 1]
        return Span(f"shift from {start:%H:%M} UTC", start, end)

    def day(self, now: datetime) -> Span:
        """The gaming day ``now`` falls in: from the first shift's start, 24 hours."""
        first = self.starts[0]
        starts = [s for s in self._starts_around(now) if s.time() == first]
        start = max(s for s in starts if s <= now)
        return Span(f"gaming day {start:%Y-%m-%d}", start, start + timedelta(days=1))
