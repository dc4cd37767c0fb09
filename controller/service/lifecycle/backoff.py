"""How long ``tablectl run`` waits before it exits over a resource that may come back, so that
systemd's restarts back off instead of hammering a full disk every ``RestartSec``.

systemd 252 (Debian 12, Raspberry Pi OS) restarts a failed service after a fixed ``RestartSec``
(``RestartSteps=`` came in 254), so the backoff is the process's: each consecutive failure is
counted in ``$RUNTIME_DIRECTORY`` (a tmpfs, writable when the journal's disk is not; the unit
keeps it across restarts with ``RuntimeDirectoryPreserve=restart``), the wait doubles from
:data:`FIRST_SECONDS` to :data:`MAX_SECONDS`, and a start that succeeds clears the count.
Starts stay under the unit's ``StartLimitBurst=10`` per ``StartLimitIntervalSec=300``, so a
disk that stays full for hours is still retried, about once a minute.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from drivers.backoff import ExponentialBackoff, Jitter

EXIT_TEMPFAIL = os.EX_TEMPFAIL
"""75: a resource that may come back (sysexits.h ``EX_TEMPFAIL``); the unit retries it."""
FIRST_SECONDS = 5.0
MAX_SECONDS = 60.0
COUNT_NAME = "start-failures"
START_WAITS = ExponentialBackoff(FIRST_SECONDS, MAX_SECONDS, jitter=Jitter.NONE)
"""The one backoff helper (``drivers.backoff``), not jittered: the waits are counted against the
unit's start limit (a shorter one would let ``StartLimitBurst=`` starts fall in one interval),
and one table's service has no peers to fall out of step with."""


class StartBackoff:
    """Consecutive start failures, counted in ``directory`` (none: every wait is the first)."""

    def __init__(self, directory: Path | None) -> None:
        self.path = directory / COUNT_NAME if directory is not None else None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> StartBackoff:
        """systemd names the unit's runtime directories in ``RUNTIME_DIRECTORY`` (colon
        separated); the first is ours."""
        value = (os.environ if environ is None else environ).get("RUNTIME_DIRECTORY", "")
        first = value.split(":", 1)[0]
        return cls(Path(first) if first else None)

    def failures(self) -> int:
        if self.path is None:
            return 0
        try:
            return max(0, int(self.path.read_text(encoding="ascii").strip() or 0))
        except (OSError, ValueError):
            return 0

    def failed(self) -> float:
        """Count one more failure; the seconds to wait before exiting."""
        count = self.failures()
        if self.path is not None:
            try:
                self.path.write_text(f"{count + 1}\n", encoding="ascii")
            except OSError:
                pass  # no count kept: the wait stays the first, never a crash
        return START_WAITS.delay(count + 1)

    def reset(self) -> None:
        if self.path is not None:
            try:
                self.path.unlink(missing_ok=True)
            except OSError:
                pass
