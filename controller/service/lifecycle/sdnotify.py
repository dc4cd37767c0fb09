"""A minimal sd_notify client: tells systemd READY, STATUS, WATCHDOG and STOPPING.

Written here rather than taken as a dependency: the protocol (sd_notify(3)) is one ``sendto`` of
``KEY=VALUE`` lines on a datagram Unix socket whose address systemd puts in ``NOTIFY_SOCKET``; an
address starting with ``@`` is in the abstract namespace. The unit is ``Type=notify`` with
``NotifyAccess=main``, so only the main process may send, which is us.

With ``NOTIFY_SOCKET`` unset (a terminal, the tests, the bench) every call is a no-op that
returns ``False``. A failed send is logged and reported as ``False`` but never raised: the
service must not stop dealing because systemd went away. Nor does a send wait: the socket is
non-blocking, so a receiver whose queue is full (not reading) loses that notification
(``EAGAIN``, logged) and the thread that sent it goes on. ``WATCHDOG_USEC`` gives the watchdog
period; we ping at half of it (:func:`watchdog_interval`), as sd_watchdog_enabled(3) advises.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

import structlog

log = structlog.get_logger(__name__)


def _address(value: str) -> str | bytes:
    """``@name`` is the abstract namespace: a leading NUL byte on the wire."""
    if value.startswith("@"):
        return b"\0" + value[1:].encode()
    return value


def watchdog_interval(environ: Mapping[str, str] | None = None) -> float | None:
    """Seconds between WATCHDOG=1 pings (half of ``WATCHDOG_USEC``), or ``None`` when systemd
    runs no watchdog for this process (unset, zero, unparsable, or ``WATCHDOG_PID`` is another
    process's)."""
    env = os.environ if environ is None else environ
    pid = env.get("WATCHDOG_PID")
    if pid is not None and pid.strip() != str(os.getpid()):
        return None
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    if usec <= 0:
        return None
    return usec / 2 / 1_000_000


class Notifier:
    """Sends notifications to ``NOTIFY_SOCKET`` (read once, at construction)."""

    def __init__(self, address: str | None = None, *, from_environment: bool = True) -> None:
        if address is None and from_environment:
            address = os.environ.get("NOTIFY_SOCKET") or None
        self.address = address

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, *lines: str) -> bool:
        """Send ``KEY=VALUE`` lines as one datagram; ``True`` when it was sent."""
        if self.address is None:
            return False
        message = "\n".join(lines).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC
                               | socket.SOCK_NONBLOCK) as sock:
                # never blocks: a receiver that stopped reading (a queue of unread datagrams
                # full) is told nothing more, instead of stopping the thread that told it;
                # issue 27: the service's stop hung on a STATUS its benchmark never read
                sock.sendto(message, _address(self.address))
        except OSError as error:
            log.warning("sd_notify failed", address=self.address, error=str(error))
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """Startup finished: systemd starts units ordered after us and counts the watchdog."""
        return self.notify("READY=1", *([_status(status)] if status is not None else []))

    def status(self, text: str) -> bool:
        """One line shown by ``systemctl status`` (e.g. "round 1234 dealing, shuffler online")."""
        return self.notify(_status(text))

    def watchdog(self) -> bool:
        """Proof of life; without it within WatchdogSec systemd kills and restarts us."""
        return self.notify("WATCHDOG=1")

    def stopping(self, status: str | None = None) -> bool:
        return self.notify("STOPPING=1", *([_status(status)] if status is not None else []))


def _status(text: str) -> str:
    """STATUS is one line: a newline would start another (unintended) assignment."""
    return "STATUS=" + " ".join(text.split())
