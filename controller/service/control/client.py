"""The control-socket client: what ``tablectl`` client commands and the tests speak.

Blocking and simple on purpose: one request, one reply. :meth:`ControlClient.request` returns the
result or raises :class:`RequestRefused` carrying the server's :class:`ErrorCode` and reason;
:meth:`ControlClient.watch` subscribes and yields round events until the service hangs up.
Connection problems are one-line :class:`ControlError` s (no service, no permission).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from controller.errors import TablectlError
from controller.service.errors import ControlError
from controller.service.protocol import ErrorCode, encode
from drivers.backoff import ExponentialBackoff


CONNECT_RETRY_SECONDS = 1.0
CONNECT_BACKOFF = ExponentialBackoff(0.01, 0.5)
"""The pause before connecting again to a full listen queue: 10 ms doubling to 0.5 s, jittered
so that the burst of peers that filled it does not come back in step (``drivers.backoff``)."""


class RequestRefused(TablectlError):
    """The service answered ``ok: false``; ``code`` is the :class:`ErrorCode`. (Not the table's
    ``CommandRefused`` round event, which a command's answer may carry among its events: one
    name, one class.)"""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        self.code = ErrorCode(code) if code in ErrorCode._value2member_map_ else code
        self.message = message
        super().__init__(f"refused ({getattr(self.code, 'value', self.code)}): {message}")


class ControlClient:
    """A blocking client: ``request(verb, args)`` returns the result or raises
    :class:`RequestRefused`; ``watch()`` yields events."""

    def __init__(self, path: str | Path, *, timeout: float | None = 5.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._buffer = bytearray()
        self._next_id = 0
        self._eof = False

    def connect(self) -> ControlClient:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        sock.settimeout(self.timeout)
        try:
            self._connect(sock)
        except FileNotFoundError:
            sock.close()
            raise ControlError(f"control socket {self.path}: not found (is tablectl running?)") \
                from None
        except PermissionError:
            sock.close()
            raise ControlError(f"control socket {self.path}: permission denied (your account "
                               "must be in the socket's group)") from None
        except OSError as error:
            sock.close()
            raise ControlError(f"control socket {self.path}: {error.strerror or error}") \
                from error
        self._sock = sock
        return self

    def _connect(self, sock: socket.socket) -> None:
        """Connect; a full listen queue (EAGAIN: the service is taking a burst of peers) is
        retried with a doubling pause for up to the timeout (a second without one)."""
        deadline = time.monotonic() + (self.timeout or CONNECT_RETRY_SECONDS)
        retries = CONNECT_BACKOFF.retries()
        while True:
            try:
                sock.connect(str(self.path))
                return
            except BlockingIOError:
                pause = retries.failed()
                if time.monotonic() + pause > deadline:
                    raise ControlError(f"control socket {self.path}: busy: the service's "
                                       "queue of new connections is full") from None
                time.sleep(pause)  # back off before the next try; bounded by the deadline

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def interrupt(self) -> None:
        """Wake a thread blocked in :meth:`watch` from another thread (it sees the service
        close the connection); ``close`` alone does not wake a blocked ``recv``."""
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by the peer: nothing left to wake

    def __enter__(self) -> ControlClient:
        return self.connect() if self._sock is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def send_line(self, line: bytes) -> None:
        if self._sock is None:
            self.connect()
        assert self._sock is not None
        self._sock.sendall(line if line.endswith(b"\n") else line + b"\n")

    def read_message(self) -> dict[str, Any]:
        """The next JSON line from the server; :class:`ControlError` if it hangs up."""
        return _message(self.path, self.read_line())

    def read_line(self) -> bytes:
        """The next line from the server as it came, without its newline (a reader that
        passes part of it on as it is: the studio gateway's settlement); :class:`ControlError`
        if it hangs up. A long line is searched for its end only in what each read added."""
        assert self._sock is not None, "not connected"
        searched = 0
        while (end := self._buffer.find(b"\n", searched)) < 0:
            searched = len(self._buffer)
            try:
                chunk = self._sock.recv(65536)
            except TimeoutError:
                raise ControlError(f"control socket {self.path}: no answer within "
                                   f"{self.timeout} s") from None
            except OSError as error:  # reset: the service died mid-answer (SIGKILL, a crash)
                self._eof = True
                raise ControlError(f"control socket {self.path}: the connection broke: "
                                   f"{error.strerror or error}") from error
            if not chunk:
                self._eof = True
                raise ControlError(f"control socket {self.path}: the service closed the "
                                   "connection")
            self._buffer += chunk
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        return line

    def request(self, verb: str, args: Mapping[str, Any] | None = None, *,
                actor: str | None = None,
                acting_for: Mapping[str, str] | None = None) -> dict[str, Any]:
        """One request and its result; ``acting_for`` (``{"name", "role"}``) is for a delegate
        only (the web process: docs/service.md, "Delegation")."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "verb": verb, "args": dict(args or {})}
        if actor is not None:
            message["actor"] = actor
        if acting_for is not None:
            message["acting_for"] = dict(acting_for)
        try:
            self.send_line(encode(message))
        except (BrokenPipeError, ConnectionResetError):
            pass  # turned away (busy) before we spoke: the server's one line says why
        reply = self.read_message()
        if not reply.get("ok"):
            error = reply.get("error") or {}
            raise RequestRefused(str(error.get("code", "?")), str(error.get("message", reply)))
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    def watch(self) -> Iterator[dict[str, Any]]:
        """Subscribe now (refusal raises here) and return the events, ending when the service
        closes the connection."""
        self.request("watch")
        return self._events()

    def _events(self) -> Iterator[dict[str, Any]]:
        for _, event in self._event_lines():
            yield event

    def watch_lines(self) -> Iterator[tuple[bytes, dict[str, Any]]]:
        """:meth:`watch`, each event with the line it came in (for a reader that passes part
        of it on as it is: the studio gateway)."""
        self.request("watch")
        return self._event_lines()

    def _event_lines(self) -> Iterator[tuple[bytes, dict[str, Any]]]:
        while True:
            try:
                line = self.read_line()
            except ControlError:
                if self._eof:
                    return
                raise
            message = _message(self.path, line)
            if "event" in message:
                yield line, message["event"]


def _message(path: Path, line: bytes) -> dict[str, Any]:
    """A line from the server as a message; :class:`ControlError` when it is not one."""
    try:
        message = json.loads(line)
    except json.JSONDecodeError as error:
        raise ControlError(f"control socket {path}: not protocol: {line[:80]!r}") from error
    if not isinstance(message, dict):
        raise ControlError(f"control socket {path}: not protocol: {line[:80]!r}")
    return message
