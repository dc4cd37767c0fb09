"""The control socket: a Unix domain socket server speaking :mod:`controller.service.protocol`, and
its client.

Who may connect and what they may send is :mod:`.access` (the kernel's ``SO_PEERCRED``, never
anything the peer says); :class:`AccessPolicy` and :class:`Peer` are re-exported here.

The client (:class:`ControlClient`) lives in :mod:`.client` and is re-exported here.

One thread (``control-server``) owns every connection through a selector, so a slow or hostile
client can stall nobody. The table is plugged in as a ``handler(request, peer) -> result``. A
read (``Access.READ``: status, lists, from the table's last published snapshot) is answered on
that thread; a command (``Access.COMMAND``), whose handler waits for the table thread and so for
the journal's fsync of money records, and a read of the journal's files (``round.events``) run
on one of a few ``control-command`` worker threads (``VerbSpec.waits``), each answered when
done, so no connection waits behind another's command on a slow disk (issue 35: a second
connection's ``round.status`` took up to 1.5 s behind 500 ms fsyncs). Each connection has at
most one such request in flight; its later lines wait in its buffer and are answered in the
order sent. :meth:`ControlServer.publish` may be called from any thread and streams an event to every
``watch`` connection. What one peer may cost (slots, unsent output, idle time, descriptors at
the open-file limit) is bounded by :mod:`.connections`; :meth:`ControlServer.probe` lets the
watchdog check that this loop still goes round.

There is no TCP listener: TCP carries no credentials, so a TCP peer could not be given a role,
and the shipped unit forbids IP sockets. A remote console forwards the Unix socket over SSH
(``ssh -L``), where sshd connects as the remote account and ``SO_PEERCRED`` names it
(docs/service.md, "Remote access").
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import selectors
import socket
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import structlog

from controller.errors import TablectlError
from controller.service.control.access import (
    AccessPolicy,
    Peer,
    bind_socket_file,
    peer_of,
    remove_stale_socket,
    system_groups_of,
)
from controller.service.control.client import ControlClient, RequestRefused
from controller.service.control.connections import (
    Admission,
    Connection,
    RepeatedError,
    ReserveDescriptor,
    busy_line,
    say_and_close,
)
from controller.service.policy import ConnectionLimits
from controller.service.protocol import (
    MAX_LINE_BYTES,
    ErrorCode,
    Refusal,
    Request,
    RequestId,
    decode_request,
    encode,
    error_reply,
    ok_reply,
)
from drivers.backoff import ExponentialBackoff, Jitter

__all__ = ["AccessPolicy", "ControlClient", "ControlServer", "EncodedEvent", "Handler", "Peer",
           "RequestRefused", "system_groups_of"]

log = structlog.get_logger(__name__)

Handler = Callable[[Request, Peer], Mapping[str, Any] | None]

LISTEN_BACKLOG = 64
ACCEPT_BATCH = 32
MAX_PENDING_EVENTS = 10_000
"""Events published while the loop does not take them; past this, watchers are dropped."""
IDLE_SLACK_SECONDS = 0.01
"""Sleep a little past a deadline, so one wake-up finds it due (no spin on float rounding)."""
LOOP_BACKOFF_SECONDS = 0.05
MAX_BACKOFF_SECONDS = 1.0
LOOP_PAUSE = ExponentialBackoff(LOOP_BACKOFF_SECONDS, MAX_BACKOFF_SECONDS, jitter=Jitter.NONE)
"""The pauses after failures in a row: of the loop itself (a fault that recurs at once must
not spin a core), and of ``accept`` (descriptors exhausted: the kernel keeps the waiting peers
in the listen queue). Doubling to a second; no jitter, one loop has no peers to spread."""
COMMAND_WORKERS = 8
"""Threads that wait for the table on behalf of commands. Commands are taken one at a time by
the table thread anyway; more workers only let more connections wait at once (each connection
has one command in flight at most), and a ninth waits its turn off the selector."""


class EncodedEvent(dict[str, Any]):
    """A round event to publish (a mapping, as every publisher takes one) that carries its JSON
    text already made: ``{"type": ...`` then the journal record's canonical text of its
    payload (:func:`watch_text`). The watchers are sent this text, so a studio's 345 kB
    settlement is encoded once, for the journal, not again for them (issue 28). Its keys then
    come ``type`` first and the rest sorted, as the journal has them.

    Only the full form: a redacted form (face-down cards) is encoded as any other event."""

    __slots__ = ("text",)

    def __init__(self, event: Mapping[str, Any], text: bytes) -> None:
        super().__init__(event)
        self.text = text


def watch_text(event_type: str, payload_text: str) -> bytes:
    """``{"type": event_type, **payload}`` as JSON, from the payload's JSON object text."""
    head = '{"type":' + json.dumps(event_type, ensure_ascii=False)
    rest = payload_text[1:]
    return (head + ("}" if rest == "}" else "," + rest)).encode()


class ControlServer:
    """``ControlServer(path, handler, policy)``; ``start()``/``stop()`` or a ``with`` block."""

    def __init__(self, path: str | Path, handler: Handler, policy: AccessPolicy, *,
                 socket_group: str | None = None,
                 limits: ConnectionLimits = ConnectionLimits()) -> None:
        self.path = Path(path)
        self.handler = handler
        self.policy = policy
        self.socket_group = socket_group
        self.limits = limits
        self._admission = Admission(limits)
        self._reserve = ReserveDescriptor()
        self._accept_failures = RepeatedError("control accept failed")
        self._loop_failures = RepeatedError("control server loop error")
        self._turned_away = RepeatedError("control connection turned away (busy)")
        self._paused_until = 0.0
        self._accept_pauses = LOOP_PAUSE.retries()
        self._selector = selectors.DefaultSelector()
        self._listeners: list[socket.socket] = []
        self._connections: dict[int, Connection] = {}
        self._pending: list[tuple[Mapping[str, Any], Mapping[str, Any] | None]] = []
        self._probes: list[threading.Event] = []
        self._replies: list[tuple[Connection, bytes]] = []
        self._workers: ThreadPoolExecutor | None = None
        self._pending_lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_w.setblocking(False)  # a full wake buffer already wakes the loop: never block
        self._overflowed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="control-server", daemon=True)
        self._inode: int | None = None

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if nofile != resource.RLIM_INFINITY:
            fitted = self.limits.fitted(nofile)
            if fitted != self.limits:
                log.warning("control connections capped by the open-file limit",
                            max_connections=fitted.max_connections, nofile=nofile)
                self.limits = fitted
                self._admission = Admission(fitted)
        try:
            self._listen_unix()
        except BaseException:
            self._close_all()
            raise
        self._reserve.open()
        for sock in (self._wake_r, *self._listeners):
            sock.setblocking(False)
            self._selector.register(sock, selectors.EVENT_READ)
        self._workers = ThreadPoolExecutor(COMMAND_WORKERS, thread_name_prefix="control-command")
        self._thread.start()
        log.info("control socket listening", path=str(self.path),
                 max_connections=self.limits.max_connections, reserved=self.limits.reserved)

    def stop(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread.is_alive():
            self._thread.join()
        if self._workers is not None:  # a command still waiting for the table ends on its own
            self._workers.shutdown(wait=False, cancel_futures=True)  # bounded wait; not joined
        self._close_all()

    def __enter__(self) -> ControlServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def publish(self, event: Mapping[str, Any], *,
                redacted: Mapping[str, Any] | None = None) -> None:
        """Stream ``event`` (JSON-able) to every watcher; thread-safe, never blocks. An
        :class:`EncodedEvent` is sent as its text (the publisher must not change it after).

        ``redacted``: what a watcher whose role may not see face-down cards gets instead
        (:attr:`Role.sees_face_down`); ``None`` when the event shows nothing hidden."""
        with self._pending_lock:
            if len(self._pending) >= MAX_PENDING_EVENTS:  # the loop is stuck (the watchdog
                self._pending.clear()                      # will restart us): watchers would
                self._overflowed = True                    # miss events, so they are dropped
            # one wake-up per drain: events published while some wait are taken with them
            # (the loop swaps the list out under this lock after it wakes), so a batch of
            # hundreds of wagers costs one socket write here, not one each
            first = not self._pending
            self._pending.append((event if isinstance(event, EncodedEvent) else dict(event),
                                  None if redacted is None else dict(redacted)))
        if first:
            self._wake()

    def probe(self, timeout: float) -> bool:
        """``True`` when the control loop went round within ``timeout`` (the watchdog's check
        that the socket still answers, as :meth:`TableThread.probe` is the table's)."""
        if not self._thread.is_alive():
            return False
        passed = threading.Event()
        with self._pending_lock:
            self._probes.append(passed)
        self._wake()
        return passed.wait(timeout)

    @property
    def watchers(self) -> int:
        return sum(1 for conn in list(self._connections.values()) if conn.watching)

    @property
    def connections(self) -> int:
        return len(self._connections)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    # listening -------------------------------------------------------------------------------
    def _listen_unix(self) -> None:
        remove_stale_socket(self.path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self._listeners.append(sock)
        self._inode = bind_socket_file(sock, self.path, self.socket_group)
        sock.listen(LISTEN_BACKLOG)

    # the loop --------------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for key, events in self._selector.select(timeout=self._tick()):
                    self._dispatch(key.fileobj, events)  # type: ignore[arg-type]
                self._deliver_replies()
                self._deliver_events()
                self._expire_idle()
                self._answer_probes()
                self._loop_failures.recovered()
            except Exception as error:  # never let one bad moment kill the control socket
                self._loop_failures.failed(error=repr(error), exc_info=True)
                # a fault that recurs at once must not spin a core or flood the log
                self._stop.wait(LOOP_PAUSE.delay(self._loop_failures.count))

    def _tick(self) -> float | None:
        """How long select may sleep: until the next idle deadline or the end of an accept
        pause (``None``: until something happens; probes and events wake the loop themselves,
        so an idle table costs no timed wake-ups here)."""
        now = time.monotonic()
        if self._paused_until and self._paused_until <= now:
            self._paused_until = 0.0
            self._reserve.open()
            for listener in self._listeners:
                with contextlib.suppress(KeyError, ValueError):
                    self._selector.register(listener, selectors.EVENT_READ)
        deadlines = [conn.last_active + self.limits.idle_seconds
                     for conn in self._connections.values()
                     if not conn.watching and not conn.busy]
        if self._paused_until:
            deadlines.append(self._paused_until)
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - now) + IDLE_SLACK_SECONDS

    def _answer_probes(self) -> None:
        with self._pending_lock:
            probes, self._probes = self._probes, []
        for passed in probes:
            passed.set()

    def _dispatch(self, sock: socket.socket, events: int) -> None:
        if sock is self._wake_r:
            with contextlib.suppress(BlockingIOError):
                sock.recv(4096)
            return
        if sock in self._listeners:
            for _ in range(ACCEPT_BATCH):  # drain a burst, still yielding to the others
                if not self._accept(sock):
                    break
            return
        conn = self._connections.get(sock.fileno())
        if conn is None:
            return
        if events & selectors.EVENT_READ:
            self._read(conn)
        if events & selectors.EVENT_WRITE or conn.outbox:
            self._flush(conn)

    # accepting ---------------------------------------------------------------------------------
    def _accept(self, listener: socket.socket) -> bool:
        """Take one waiting peer; ``False`` when there was none (or accepting is paused)."""
        at_limit = False
        try:
            sock, _ = listener.accept()
        except BlockingIOError:
            return False
        except OSError as error:
            self._accept_failures.failed(error=error.strerror or repr(error),
                                         connections=len(self._connections))
            if error.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                return True  # e.g. ECONNABORTED: that peer is gone, the next one is not
            if not self._reserve.release():
                self._pause_accepting()  # no spare to shed with: wait, do not spin
                return False
            try:  # the spare's descriptor takes the waiting peer, to be answered
                sock, _ = listener.accept()
            except BlockingIOError:  # nobody waiting after all (EMFILE comes first)
                self._reserve.open()
                return False
            except OSError:
                self._reserve.open()
                self._pause_accepting()
                return False
            at_limit = True
        else:
            self._accept_failures.recovered()
        self._accept_pauses.reset()
        sock.setblocking(False)
        peer = peer_of(sock, self.policy)
        refusal, evict = self._admission.decide(peer.role, peer.uid,
                                                list(self._connections.values()),
                                                no_descriptor=at_limit)
        if evict is not None:
            log.warning("control connection closed to make room", closed=evict.peer.describe(),
                        admitted=peer.describe(), role=peer.role.socket_name)
            self._close_with(evict, "closed to make room for a supervisor")
        if refusal is not None:
            self._turned_away.failed(peer=peer.describe(), connections=len(self._connections),
                                     reason=refusal)
            say_and_close(sock, busy_line(refusal))
        if at_limit:
            self._reserve.open()
        if refusal is not None:
            return True
        self._connections[sock.fileno()] = Connection(sock, peer)
        self._selector.register(sock, selectors.EVENT_READ)
        log.info("control client connected", peer=peer.describe(), role=peer.role.socket_name)
        return True

    def _pause_accepting(self) -> None:
        """Stop watching the listeners for a while (doubling, up to a second): the kernel keeps
        the waiting peers in the listen queue; the loop does not spin on them."""
        self._paused_until = time.monotonic() + self._accept_pauses.failed()
        for listener in self._listeners:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(listener)

    # serving -----------------------------------------------------------------------------------
    def _read(self, conn: Connection) -> None:
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
        self._serve(conn)

    def _serve(self, conn: Connection) -> None:
        """Answer the whole lines waiting in ``conn.inbox``, in order, until one is a command
        sent to a worker (the rest wait for its answer, :meth:`_deliver_replies`)."""
        while not conn.busy and (end := conn.inbox.find(b"\n")) >= 0 and end <= MAX_LINE_BYTES:
            line = bytes(conn.inbox[:end])
            del conn.inbox[:end + 1]
            if line.strip():
                conn.last_active = time.monotonic()
                answer = self._answer(conn, line)
                if answer is not None:
                    conn.outbox += encode(answer)
            if len(conn.outbox) > self.limits.outbox_bytes:
                log.warning("control client not reading its replies, dropped",
                            peer=conn.peer.describe(), unsent=len(conn.outbox))
                self._drop(conn)
                return
        if len(conn.inbox) > MAX_LINE_BYTES:
            conn.outbox += encode(error_reply(
                None, ErrorCode.TOO_LONG, f"request line longer than {MAX_LINE_BYTES} bytes"
                if not conn.busy else f"more than {MAX_LINE_BYTES} bytes of requests sent "
                "before the answer to the one in progress"))
            conn.inbox.clear()
            conn.closing = True
        self._interest(conn)

    def _answer(self, conn: Connection, line: bytes) -> dict[str, Any] | None:
        """The reply to one request line; ``None`` when it is a command handed to a worker
        (the connection is then busy until :meth:`_deliver_replies` sends its answer)."""
        request_id: RequestId = None
        peer = conn.peer
        try:
            request = decode_request(line)
            request_id = request.id
            peer, request = self.policy.delegated(peer, request)
            why_not = self.policy.refusal(peer, request)
            if why_not is not None:
                log.warning("control command refused", peer=peer.describe(),
                            verb=request.verb, reason=why_not)
                raise Refusal(ErrorCode.FORBIDDEN, why_not, request_id)
            if request.spec.streams:
                conn.watching, conn.watch_id = True, request.id
                return ok_reply(request.id, {"watching": True})
        except Refusal as refusal:
            return error_reply(refusal.request_id if refusal.request_id is not None
                               else request_id, refusal.code, refusal.message)
        except TablectlError as error:
            return error_reply(request_id, ErrorCode.REFUSED, str(error))
        except Exception:
            log.exception("control request failed", peer=peer.describe())
            return error_reply(request_id, ErrorCode.INTERNAL,
                               "internal error; the service log has the details")
        if request.spec.waits and self._workers is not None:
            try:
                self._workers.submit(self._command, conn, request, peer)
            except RuntimeError:  # stopping: the pool takes no more
                return error_reply(request.id, ErrorCode.UNAVAILABLE, "the service is stopping")
            conn.busy = True
            return None
        return self._reply(request, peer)

    def _reply(self, request: Request, peer: Peer) -> dict[str, Any]:
        try:
            return ok_reply(request.id, self.handler(request, peer))
        except Refusal as refusal:
            return error_reply(refusal.request_id if refusal.request_id is not None
                               else request.id, refusal.code, refusal.message)
        except TablectlError as error:
            return error_reply(request.id, ErrorCode.REFUSED, str(error))
        except Exception:
            log.exception("control handler failed", peer=peer.describe())
            return error_reply(request.id, ErrorCode.INTERNAL,
                               "internal error; the service log has the details")

    def _command(self, conn: Connection, request: Request, peer: Peer) -> None:
        """On a worker: the handler's answer (it waits for the table), handed to the loop."""
        try:
            data = encode(self._reply(request, peer))
        except Exception:  # an answer that is not JSON: still one line back, never silence
            log.exception("control answer not encodable", peer=peer.describe())
            data = encode(error_reply(request.id, ErrorCode.INTERNAL,
                                      "internal error; the service log has the details"))
        with self._pending_lock:
            self._replies.append((conn, data))
        self._wake()

    def _deliver_replies(self) -> None:
        """Commands' answers from the workers: each to its connection (if still there), whose
        waiting lines are then served."""
        with self._pending_lock:
            replies, self._replies = self._replies, []
        for conn, data in replies:
            if self._connections.get(conn.sock.fileno()) is not conn:
                continue  # the peer left while the table worked: nobody to tell
            conn.busy = False
            conn.last_active = time.monotonic()
            conn.outbox += data
            self._serve(conn)
            if self._connections.get(conn.sock.fileno()) is conn:
                self._flush(conn)

    def _deliver_events(self) -> None:
        with self._pending_lock:
            pending, self._pending = self._pending, []
            overflowed, self._overflowed = self._overflowed, False
        if overflowed:
            for conn in [c for c in self._connections.values() if c.watching]:
                log.warning("watcher dropped: events were lost while the loop was stuck",
                            peer=conn.peer.describe())
                self._drop(conn)
        bodies = [body for body in map(_bodies, pending) if body is not None]
        if not bodies:
            return
        for conn in list(self._connections.values()):
            if not conn.watching or conn.closing:
                continue
            head = b'{"id":' + json.dumps(conn.watch_id).encode() + b',"event":'
            sees = conn.role.sees_face_down
            for full, redacted in bodies:
                conn.outbox += head + (full if redacted is None or sees else redacted) + b"}\n"
            if len(conn.outbox) > self.limits.outbox_bytes:
                log.warning("watcher too slow, dropped", peer=conn.peer.describe())
                self._drop(conn)
                continue
            self._flush(conn)

    def _expire_idle(self) -> None:
        """Close connections that neither watch nor sent a whole request for ``idle_seconds``
        (a partial line does not count: a peer trickling bytes is idle)."""
        deadline = time.monotonic() - self.limits.idle_seconds
        for conn in list(self._connections.values()):
            if not conn.watching and not conn.busy and conn.last_active < deadline:
                log.info("control connection idle, closed", peer=conn.peer.describe())
                self._close_with(conn, f"busy: closed after {self.limits.idle_seconds:g} s "
                                       "without a request (control.idle_seconds)")

    def _flush(self, conn: Connection) -> None:
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
        self._interest(conn)

    def _interest(self, conn: Connection) -> None:
        """Watch ``conn`` for what it can take now: its requests unless one is with the table
        (level-triggered: unread bytes would wake the loop over and over), its unsent output."""
        if conn.sock.fileno() < 0:
            return
        wanted = (0 if conn.busy else selectors.EVENT_READ) | \
            (selectors.EVENT_WRITE if conn.outbox else 0)
        try:
            key = self._selector.get_key(conn.sock)
        except KeyError:
            key = None
        if not wanted:
            if key is not None:
                self._selector.unregister(conn.sock)
        elif key is None:
            self._selector.register(conn.sock, wanted)
        elif key.events != wanted:
            self._selector.modify(conn.sock, wanted)

    def _close_with(self, conn: Connection, reason: str) -> None:
        """Close ``conn`` telling the peer why in one line (best effort, never blocks)."""
        self._forget(conn)
        say_and_close(conn.sock, busy_line(reason))

    def _drop(self, conn: Connection) -> None:
        if self._forget(conn):
            conn.sock.close()

    def _forget(self, conn: Connection) -> bool:
        fd = conn.sock.fileno()
        if fd < 0:
            return False
        self._connections.pop(fd, None)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(conn.sock)
        return True

    def _close_all(self) -> None:
        for conn in list(self._connections.values()):
            self._drop(conn)
        for sock in self._listeners:
            sock.close()
        self._listeners.clear()
        self._reserve.release()
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()
        if self._inode is not None:
            with contextlib.suppress(OSError):
                if os.stat(self.path).st_ino == self._inode:
                    self.path.unlink()
            self._inode = None


def _bodies(item: tuple[Mapping[str, Any], Mapping[str, Any] | None]
            ) -> tuple[bytes, bytes | None] | None:
    """An event and its redacted form as JSON, once for every watcher (``None``, logged, for
    an event that is not JSON: it is not published, the others are). An
    :class:`EncodedEvent`'s own text is used as it is."""
    event, redacted = item
    try:
        return (event.text if isinstance(event, EncodedEvent) else encode(event)[:-1],
                None if redacted is None else encode(redacted)[:-1])
    except (TypeError, ValueError, RecursionError):  # RecursionError: a cycle, unchecked
        log.error("event not JSON-able, not published", event_type=str(event.get("type")))
        return None
