"""The bounds and policies the config sets for the service's rooms: clock, connections, floods.

Frozen values with their defaults, and nothing else. They live in the service's base, below the
rooms that obey them, because :mod:`.config` builds them from the TOML file: were they owned by
the clock monitor (:mod:`controller.service.clock`), the control socket
(:mod:`controller.service.control`) or the table thread's flood counter
(:mod:`controller.service.wiring.floodgate`), the config would import those rooms while the rooms
import the config's base (errors, protocol), and the base and the rooms would be one cycle
(issue 27; ``tests/test_layout.py`` holds the order).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

DEFAULT_MAX_CONNECTIONS = 64
DEFAULT_RESERVED_CONNECTIONS = 4
DEFAULT_IDLE_SECONDS = 120.0
DEFAULT_PER_ACCOUNT = 16
DEFAULT_OUTBOX_BYTES = 1 << 20
FD_HEADROOM = 64
"""Descriptors kept free of control connections for the journal, devices and the loop itself."""

DEFAULT_FLOOD_BURST = 20
"""Refused commands (or link errors) per source journaled in full in one window."""
DEFAULT_FLOOD_WINDOW_SECONDS = 60
"""The window. With the defaults one source journals at most 20 refused commands (3 records
each at most: input, ``wager_refused``, ``command_refused``) and one summary a minute: 61
records, where finding 7 measured about 100,000."""


class Unsynchronised(str, Enum):
    """``[clock] unsynchronised``: may a round open while the clock cannot be trusted?"""

    REFUSE = "refuse"
    """Default on a casino table: no round opens until the clock is trusted or a supervisor
    overrides (journaled)."""
    ALLOW = "allow"
    """Rounds open; the records still say how far their times can be trusted (the bench)."""


@dataclass(frozen=True, slots=True)
class ClockPolicy:
    """``[clock]``: what the clock monitor trusts and how often it reports
    (:func:`controller.service.clock.watch.untrusted_because` applies it to a reading)."""

    unsynchronised: Unsynchronised = Unsynchronised.REFUSE
    max_error_ms: int = 100
    """A kernel error bound above this counts as untrustworthy, synchronised or not."""
    step_threshold_ms: int = 20
    status_interval_s: int = 600
    poll_interval_s: float = 1.0


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The control socket's bounds (``[control]`` ``max_connections``, ``reserved_connections``,
    ``idle_seconds``, ``max_per_account``; the output bound is fixed)."""

    max_connections: int = DEFAULT_MAX_CONNECTIONS
    reserved: int = DEFAULT_RESERVED_CONNECTIONS
    idle_seconds: float = DEFAULT_IDLE_SECONDS
    outbox_bytes: int = DEFAULT_OUTBOX_BYTES
    per_account: int = DEFAULT_PER_ACCOUNT
    """Connections one unprivileged account (uid) may hold: one dealer's runaway script cannot
    take every slot from the other dealers and surveillance."""

    def fitted(self, nofile: int) -> ConnectionLimits:
        """These limits lowered, if need be, so that every slot fits under the open-file limit
        ``nofile`` with :data:`FD_HEADROOM` to spare (the cap, not EMFILE, then refuses)."""
        room = max(1, nofile - FD_HEADROOM - self.reserved)
        if self.max_connections <= room:
            return self
        return ConnectionLimits(room, self.reserved, self.idle_seconds, self.outbox_bytes,
                                self.per_account)


@dataclass(frozen=True, slots=True)
class FloodLimits:
    """``[journal] flood_burst`` and ``flood_window_s`` (docs/service.md)."""

    burst: int = DEFAULT_FLOOD_BURST
    window_seconds: float = DEFAULT_FLOOD_WINDOW_SECONDS

    def __post_init__(self) -> None:
        if self.burst < 1 or self.window_seconds <= 0:
            raise ValueError(f"flood limits need burst >= 1 and a window > 0 s, got "
                             f"{self.burst} in {self.window_seconds} s")
