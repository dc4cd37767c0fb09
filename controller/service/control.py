"""The control socket: a Unix domain socket server speaking :mod:`.protocol`, and its client.

Who may do what is decided by the kernel, not by anything the peer says: at connect the server
reads the peer's uid/gid with ``SO_PEERCRED`` and resolves its groups once. Root and the
service's own user may do everything, members of the operators group may command, members of the
surveillance group only ``watch``/``round.status``/``wager.list``; anyone else is refused. The
socket file is mode 0660 with the configured socket group, so that accounts in neither group
cannot even connect; the verb check is the second wall. The group lookup is injectable
(:class:`AccessPolicy` ``groups_of``) because tests cannot create system groups.

The client (:class:`ControlClient`) lives in :mod:`.client` and is re-exported here.

One thread (``control-server``) owns every connection through a selector, so a slow or hostile
client can stall nobody. The table is plugged in as a ``handler(request, peer) -> result``
called on that thread (it must hand work to the table's queue and return promptly);
:meth:`ControlServer.publish` may be called from any thread and streams an event to every
``watch`` connection, dropping one that falls more than :data:`WATCH_BACKLOG_BYTES` behind.
An optional TCP listener (``[control.tcp]``, off by default) gives watch-only peers: TCP carries
no credentials.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
import selectors
import socket
import stat
import struct
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from controller.errors import TablectlError
from controller.service.client import CommandRefused, ControlClient
from controller.service.errors import ServiceError
from controller.service.protocol import (
    MAX_LINE_BYTES,
    ErrorCode,
    Refusal,
    Request,
    RequestId,
    Role,
    decode_request,
    encode,
    error_reply,
    event_message,
    ok_reply,
)

__all__ = ["AccessPolicy", "CommandRefused", "ControlClient", "ControlServer", "Handler", "Peer",
           "system_groups_of"]

log = structlog.get_logger(__name__)

SOCKET_MODE = 0o660
WATCH_BACKLOG_BYTES = 1 << 20
_CREDS = struct.Struct("3i")


@dataclass(frozen=True, slots=True)
class Peer:
    """A connected client as the kernel describes it (``None`` ids for a TCP peer)."""

    pid: int | None
    uid: int | None
    gid: int | None
    role: Role
    address: str = "unix"

    def describe(self) -> str:
        if self.uid is None:
            return f"tcp peer {self.address}"
        return f"uid {self.uid} (pid {self.pid})"


Handler = Callable[[Request, Peer], Mapping[str, Any] | None]
GroupsOf = Callable[[int, int], frozenset[str]]


def system_groups_of(uid: int, gid: int) -> frozenset[str]:
    """Names of the groups of ``uid`` (primary ``gid`` and supplementary) from the system."""
    try:
        gids = os.getgrouplist(pwd.getpwuid(uid).pw_name, gid)
    except KeyError:
        gids = [gid]
    names = set()
    for one in gids:
        with contextlib.suppress(KeyError):
            names.add(grp.getgrgid(one).gr_name)
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class AccessPolicy:
    """Maps peer credentials to a :class:`Role`."""

    operators_group: str
    surveillance_group: str
    groups_of: GroupsOf = system_groups_of
    supervisors_group: str | None = None
    """Members command as Pit Supervisors (the table accepts their supervisor decisions)."""
    superusers: frozenset[int] = field(default_factory=lambda: frozenset({0, os.getuid()}))
    """uids that may do everything: root and the service's own user."""

    def role_for(self, uid: int, gid: int) -> Role:
        if uid in self.superusers:
            return Role.ROOT
        groups = self.groups_of(uid, gid)
        if self.supervisors_group is not None and self.supervisors_group in groups:
            return Role.SUPERVISOR
        if self.operators_group in groups:
            return Role.OPERATOR
        if self.surveillance_group in groups:
            return Role.SURVEILLANCE
        return Role.NONE

    def refusal(self, peer: Peer, request: Request) -> str | None:
        """Why ``peer`` may not send ``request`` (``None`` when it may)."""
        spec = request.spec
        if peer.role.may(spec.access):
            return None
        if peer.role is Role.NONE:
            groups = [g for g in (self.supervisors_group, self.operators_group,
                                  self.surveillance_group) if g]
            return (f"{request.verb} not permitted: {peer.describe()} is in none of "
                    f"{', '.join(groups)}")
        return (f"{request.verb} not permitted: it is a command, and {peer.describe()} is in "
                f"{self.surveillance_group}, which may only watch, round.status and wager.list")


@dataclass(slots=True, eq=False)
class _Connection:
    sock: socket.socket
    peer: Peer
    inbox: bytearray = field(default_factory=bytearray)
    outbox: bytearray = field(default_factory=bytearray)
    watch_id: RequestId = None
    watching: bool = False
    closing: bool = False


class ControlServer:
    """``ControlServer(path, handler, policy)``; ``start()``/``stop()`` or a ``with`` block."""

    def __init__(self, path: str | Path, handler: Handler, policy: AccessPolicy, *,
                 socket_group: str | None = None, tcp: tuple[str, int] | None = None) -> None:
        self.path = Path(path)
        self.handler = handler
        self.policy = policy
        self.socket_group = socket_group
        self.tcp = tcp
        self.tcp_address: tuple[str, int] | None = None
        self._selector = selectors.DefaultSelector()
        self._listeners: list[socket.socket] = []
        self._connections: dict[int, _Connection] = {}
        self._pending: list[Mapping[str, Any]] = []
        self._pending_lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="control-server", daemon=True)
        self._inode: int | None = None

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        try:
            self._listen_unix()
            if self.tcp is not None:
                self._listen_tcp(*self.tcp)
        except BaseException:
            self._close_all()
            raise
        for sock in (self._wake_r, *self._listeners):
            sock.setblocking(False)
            self._selector.register(sock, selectors.EVENT_READ)
        self._thread.start()
        log.info("control socket listening", path=str(self.path), tcp=self.tcp_address)

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")
        if self._thread.is_alive():
            self._thread.join()
        self._close_all()

    def __enter__(self) -> ControlServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def publish(self, event: Mapping[str, Any]) -> None:
        """Stream ``event`` (JSON-able) to every watcher; thread-safe, never blocks."""
        with self._pending_lock:
            self._pending.append(dict(event))
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    @property
    def watchers(self) -> int:
        return sum(1 for conn in list(self._connections.values()) if conn.watching)

    # listening -------------------------------------------------------------------------------
    def _listen_unix(self) -> None:
        self._remove_stale_socket()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self._listeners.append(sock)
        try:
            sock.bind(str(self.path))
        except OSError as error:
            raise ServiceError(f"control socket {self.path}: cannot bind: "
                               f"{error.strerror or error}") from error
        self._inode = os.stat(self.path).st_ino
        gid = -1
        if self.socket_group:
            try:
                gid = grp.getgrnam(self.socket_group).gr_gid
            except KeyError:
                raise ServiceError(f"control socket {self.path}: group {self.socket_group!r} "
                                   "does not exist (control.socket_group)") from None
        try:
            os.chown(self.path, -1, gid)
            os.chmod(self.path, SOCKET_MODE)
        except OSError as error:
            raise ServiceError(f"control socket {self.path}: cannot set group "
                               f"{self.socket_group} and mode 0660: "
                               f"{error.strerror or error}") from error
        sock.listen(16)

    def _remove_stale_socket(self) -> None:
        """A socket file left by a killed service is removed; a live one or a non-socket is not."""
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return
        except OSError as error:
            raise ServiceError(f"control socket {self.path}: {error.strerror}") from error
        if not stat.S_ISSOCK(mode):
            raise ServiceError(f"control socket {self.path}: exists and is not a socket")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC) as probe:
            try:
                probe.connect(str(self.path))
            except (ConnectionRefusedError, FileNotFoundError):
                self.path.unlink(missing_ok=True)
                return
            except OSError as error:
                raise ServiceError(f"control socket {self.path}: {error.strerror}") from error
        raise ServiceError(f"control socket {self.path}: another tablectl is listening on it")

    def _listen_tcp(self, host: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self._listeners.append(sock)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as error:
            raise ServiceError(f"control.tcp.listen {host}:{port}: cannot bind: "
                               f"{error.strerror or error}") from error
        sock.listen(16)
        self.tcp_address = sock.getsockname()[:2]

    # the loop --------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for key, events in self._selector.select(timeout=None):
                    self._dispatch(key.fileobj, events)  # type: ignore[arg-type]
                self._deliver_events()
            except Exception:  # never let one bad moment kill the control socket
                log.exception("control server loop error")

    def _dispatch(self, sock: socket.socket, events: int) -> None:
        if sock is self._wake_r:
            with contextlib.suppress(BlockingIOError):
                sock.recv(4096)
            return
        if sock in self._listeners:
            self._accept(sock)
            return
        conn = self._connections.get(sock.fileno())
        if conn is None:
            return
        if events & selectors.EVENT_READ:
            self._read(conn)
        if events & selectors.EVENT_WRITE or conn.outbox:
            self._flush(conn)

    def _accept(self, listener: socket.socket) -> None:
        try:
            sock, address = listener.accept()
        except BlockingIOError:
            return
        sock.setblocking(False)
        if sock.family == socket.AF_UNIX:
            pid, uid, gid = _CREDS.unpack(
                sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDS.size))
            try:
                role = self.policy.role_for(uid, gid)
            except Exception:
                log.exception("group lookup failed", uid=uid)
                role = Role.NONE
            peer = Peer(pid, uid, gid, role)
        else:
            peer = Peer(None, None, None, Role.SURVEILLANCE, f"{address[0]}:{address[1]}")
        self._connections[sock.fileno()] = _Connection(sock, peer)
        self._selector.register(sock, selectors.EVENT_READ)
        log.info("control client connected", peer=peer.describe(), role=peer.role.value)

    def _read(self, conn: _Connection) -> None:
        try:
            data = conn.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop(conn)
            return
        if conn.closing:
            return
        conn.inbox += data
        while (end := conn.inbox.find(b"\n")) >= 0 and end <= MAX_LINE_BYTES:
            line = bytes(conn.inbox[:end])
            del conn.inbox[:end + 1]
            if line.strip():
                conn.outbox += encode(self._answer(conn, line))
        if len(conn.inbox) > MAX_LINE_BYTES:
            conn.outbox += encode(error_reply(None, ErrorCode.TOO_LONG,
                                              f"request line longer than {MAX_LINE_BYTES} bytes"))
            conn.inbox.clear()
            conn.closing = True

    def _answer(self, conn: _Connection, line: bytes) -> dict[str, Any]:
        request_id: RequestId = None
        try:
            request = decode_request(line)
            request_id = request.id
            why_not = self.policy.refusal(conn.peer, request)
            if why_not is not None:
                log.warning("control command refused", peer=conn.peer.describe(),
                            verb=request.verb, reason=why_not)
                raise Refusal(ErrorCode.FORBIDDEN, why_not, request_id)
            if request.spec.streams:
                conn.watching, conn.watch_id = True, request.id
                return ok_reply(request.id, {"watching": True})
            return ok_reply(request.id, self.handler(request, conn.peer))
        except Refusal as refusal:
            return error_reply(refusal.request_id if refusal.request_id is not None
                               else request_id, refusal.code, refusal.message)
        except TablectlError as error:
            return error_reply(request_id, ErrorCode.REFUSED, str(error))
        except Exception:
            log.exception("control handler failed", peer=conn.peer.describe())
            return error_reply(request_id, ErrorCode.INTERNAL,
                               "internal error; the service log has the details")

    def _deliver_events(self) -> None:
        with self._pending_lock:
            pending, self._pending = self._pending, []
        if not pending:
            return
        for conn in list(self._connections.values()):
            if not conn.watching or conn.closing:
                continue
            for event in pending:
                conn.outbox += encode(event_message(conn.watch_id, event))
            if len(conn.outbox) > WATCH_BACKLOG_BYTES:
                log.warning("watcher too slow, dropped", peer=conn.peer.describe())
                self._drop(conn)
                continue
            self._flush(conn)

    def _flush(self, conn: _Connection) -> None:
        if conn.sock.fileno() < 0:
            return
        try:
            sent = conn.sock.send(conn.outbox) if conn.outbox else 0
        except BlockingIOError:
            sent = 0
        except OSError:
            self._drop(conn)
            return
        del conn.outbox[:sent]
        if not conn.outbox and conn.closing:
            self._drop(conn)
            return
        wanted = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.outbox else 0)
        self._selector.modify(conn.sock, wanted)

    def _drop(self, conn: _Connection) -> None:
        fd = conn.sock.fileno()
        if fd < 0:
            return
        self._connections.pop(fd, None)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(conn.sock)
        conn.sock.close()

    def _close_all(self) -> None:
        for conn in list(self._connections.values()):
            self._drop(conn)
        for sock in self._listeners:
            sock.close()
        self._listeners.clear()
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()
        if self._inode is not None:
            with contextlib.suppress(OSError):
                if os.stat(self.path).st_ino == self._inode:
                    self.path.unlink()
            self._inode = None
