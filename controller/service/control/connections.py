"""What the control socket may spend on its peers: connection slots, buffers, descriptors, time.

A table's control socket is reachable by every member of the socket's group, so one misbehaving
or hostile account must not be able to take it from everyone else (issue 11). The server keeps
these bounds, all of which this module owns as small, separately testable parts:

- **Slots.** At most :attr:`ConnectionLimits.max_connections` connections; past that a peer is
  told ``busy`` in one line and closed. :attr:`~ConnectionLimits.reserved` more slots are kept
  for supervisors and root (the role comes from ``SO_PEERCRED``, not from anything the peer
  says), and when even those are taken a privileged peer evicts the longest-idle unprivileged
  connection: a Pit Supervisor can always reach a held table.
- **Descriptors.** :class:`ReserveDescriptor` holds one spare file descriptor. When ``accept()``
  fails with EMFILE (the process is at its open-file limit, whatever used the descriptors), the
  spare is closed, the pending peer accepted, answered (``busy``, or admitted by eviction when it
  is privileged) and the spare reopened: the listen queue drains instead of spinning.
- **Buffers.** A connection's unsent output is bounded (:attr:`~ConnectionLimits.outbox_bytes`);
  a client that stops reading its replies is dropped, as a slow ``watch`` always was.
- **Time.** A connection that neither sends a request nor watches for
  :attr:`~ConnectionLimits.idle_seconds` is closed with a one-line reason.
- **Log volume.** :class:`RepeatedError` logs a failure once, then once more with its count and
  time span when it stops (or every :data:`SUMMARY_SECONDS`), never once per try.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field

import structlog

from controller.service.control.access import Peer
from controller.service.policy import ConnectionLimits
from controller.roles import Role
from controller.service.protocol import ErrorCode, RequestId, encode, error_reply

log = structlog.get_logger(__name__)

SUMMARY_SECONDS = 60.0
PRIVILEGED = frozenset({Role.SUPERVISOR, Role.ROOT})


@dataclass(slots=True, eq=False)
class Connection:
    """One connected peer and its buffers (owned by the control-server thread)."""

    sock: socket.socket
    peer: Peer
    inbox: bytearray = field(default_factory=bytearray)
    outbox: bytearray = field(default_factory=bytearray)
    watch_id: RequestId = None
    watching: bool = False
    closing: bool = False
    busy: bool = False
    """A command of this peer is with the table: its next lines wait in ``inbox`` (answers go
    back in the order asked), and it is not idle."""
    last_active: float = field(default_factory=time.monotonic)

    @property
    def role(self) -> Role:
        return self.peer.role

    @property
    def privileged(self) -> bool:
        return self.peer.role in PRIVILEGED


class Admission:
    """Decides, for a new peer, whether it gets a slot and whom (if anyone) it displaces."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits

    def decide(self, role: Role, uid: int | None, connections: list[Connection], *,
               no_descriptor: bool = False) -> tuple[str | None, Connection | None]:
        """``(refusal, evict)``: why the peer is turned away (``None``: admitted), and the
        connection to close first to make room for it.

        ``no_descriptor``: the process is at its open-file limit; only a privileged peer may
        come in, and only by evicting someone."""
        privileged = role in PRIVILEGED
        if not privileged and sum(c.peer.uid == uid for c in connections) >= \
                self.limits.per_account:
            return (f"busy: your account already holds {self.limits.per_account} control "
                    "connections (control.max_per_account)"), None
        full = ("busy: the service is at its open-file limit; try again shortly"
                if no_descriptor else
                f"busy: all {self.limits.max_connections} control connections are taken "
                "(control.max_connections); try again shortly")
        total = len(connections)
        if not no_descriptor:
            if total < self.limits.max_connections:
                return None, None
            if privileged and total < self.limits.max_connections + self.limits.reserved:
                return None, None
        if not privileged:
            return full, None
        victims = [c for c in connections if not c.privileged]
        if not victims:
            return full, None
        return None, min(victims, key=lambda c: c.last_active)


def busy_line(reason: str) -> bytes:
    """The one line a peer gets when it is turned away or closed by the server."""
    return encode(error_reply(None, ErrorCode.BUSY, reason))


def say_and_close(sock: socket.socket, line: bytes) -> None:
    """Best effort: the line goes into the socket's (empty) send buffer, then the socket closes.
    Never blocks and never raises: the peer may already be gone."""
    try:
        sock.setblocking(False)
        sock.send(line)
    except OSError:
        pass
    finally:
        sock.close()


class ReserveDescriptor:
    """One spare descriptor (``/dev/null``) to give back when the process runs out, so that a
    pending peer can be accepted, answered and closed instead of left in the queue."""

    def __init__(self) -> None:
        self._fd: int | None = None

    def open(self) -> bool:
        if self._fd is None:
            try:
                self._fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return False
        return True

    def release(self) -> bool:
        """Close the spare (``True`` if there was one) so the next ``accept()`` can succeed."""
        if self._fd is None:
            return False
        os.close(self._fd)
        self._fd = None
        return True

    @property
    def held(self) -> bool:
        return self._fd is not None


class RepeatedError:
    """A failure that may recur many times a second, logged once per episode with its count."""

    def __init__(self, event: str, summary_seconds: float = SUMMARY_SECONDS) -> None:
        self.event = event
        self.summary_seconds = summary_seconds
        self.count = 0
        self.first = 0.0
        self.reported = 0.0

    def failed(self, **fields: object) -> None:
        now = time.monotonic()
        self.count += 1
        if self.count == 1:
            self.first = self.reported = now
            log.error(self.event, **fields)
        elif now - self.reported >= self.summary_seconds:
            self.reported = now
            log.error(f"{self.event} (still failing)", count=self.count,
                      seconds=round(now - self.first, 1), **fields)

    def recovered(self) -> None:
        if self.count > 1:
            log.warning(f"{self.event}: recovered", count=self.count,
                        seconds=round(time.monotonic() - self.first, 1))
        self.count = 0
