"""Journal times (UTC) shown beside the table's local time, rendered on the server.

Surveillance reviews a round next to camera footage and a shift log kept in local time; the
journal keeps UTC (docs/journal.md). Each time on the console is shown in both. The page's
Content-Security-Policy forbids inline scripts, so the browser's own zone is not asked: the
zone is the one configured (``web.timezone``, an IANA name such as ``Asia/Singapore``) or, by
default, the Pi's own (``TZ``, else ``/etc/localtime``), with its daylight-saving rules, so a
round from last summer shows last summer's offset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from controller.web.errors import WebConfigError

SYSTEM_ZONE_FILE = Path("/etc/localtime")


@dataclass(frozen=True, slots=True)
class LocalZone:
    """The zone the console shows local times in, with the name it is shown under."""

    name: str
    zone: tzinfo

    @classmethod
    def named(cls, name: str) -> LocalZone:
        """An IANA zone (``Europe/London``), or :class:`WebConfigError` naming it."""
        try:
            return cls(name, ZoneInfo(name))
        except (ZoneInfoNotFoundError, ValueError) as error:
            raise WebConfigError(f"web.timezone {name!r}: not a time zone (an IANA name such "
                                 "as Asia/Singapore)") from error

    @classmethod
    def system(cls) -> LocalZone:
        """The Pi's configured zone: ``TZ`` when set, else ``/etc/localtime``, else UTC."""
        name = os.environ.get("TZ", "").lstrip(":")
        if name:
            try:
                return cls.named(name)
            except WebConfigError:
                pass
        try:
            with SYSTEM_ZONE_FILE.open("rb") as handle:
                zone = ZoneInfo.from_file(handle, key="localtime")
        except (OSError, ValueError):
            return cls("UTC", timezone.utc)
        return cls(_zone_name(SYSTEM_ZONE_FILE) or "local", zone)

    def local(self, utc_text: str | None) -> str:
        """``2026-11-23T18:00:05.123Z`` as ``2026-11-24 02:00:05 +08``; empty when it is no
        time (an index row without one)."""
        moment = parse_utc(utc_text)
        if moment is None:
            return ""
        here = moment.astimezone(self.zone)
        return here.strftime("%Y-%m-%d %H:%M:%S ") + (here.tzname() or here.strftime("%z"))


def parse_utc(text: str | None) -> datetime | None:
    """A journal timestamp (ISO 8601, UTC) as an aware datetime, or None."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def _zone_name(path: Path) -> str | None:
    """``Asia/Singapore`` from ``/etc/localtime -> /usr/share/zoneinfo/Asia/Singapore``."""
    try:
        target = str(path.resolve())
    except OSError:
        return None
    marker = "/zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else None
