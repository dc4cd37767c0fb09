"""What systemd's journal needs of a process's stderr, without structlog: whether stderr is the
journal stream, and the ``<N>`` syslog priority of each level (sd-daemon(3)).

Kept apart from :mod:`controller.logsetup` so that a process with a memory budget (the floor
feed, :mod:`controller.feed.log`) can write the same log lines without loading structlog.
"""

from __future__ import annotations

import os
import sys

SYSLOG_PRIORITY = {"debug": 7, "info": 6, "warning": 4, "warn": 4, "error": 3,
                   "exception": 3, "critical": 2, "fatal": 2}
"""Level name -> syslog priority (sd-daemon(3): SD_DEBUG <7> ... SD_CRIT <2>)."""


def under_journald(environ: dict[str, str] | None = None) -> bool:
    """True when stderr is the journal stream systemd connected (``JOURNAL_STREAM`` is
    ``DEVICE:INODE`` of that stream; a child whose stderr was redirected does not match)."""
    value = (os.environ if environ is None else environ).get("JOURNAL_STREAM", "")
    device, _, inode = value.partition(":")
    try:
        info = os.fstat(sys.stderr.fileno())
        return (int(device), int(inode)) == (info.st_dev, info.st_ino)
    except (ValueError, OSError, AttributeError):
        return False
