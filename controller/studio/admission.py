"""Connection admission: who gets a thread and a slot, and how long anyone may wait for one.

The gateway's defence against being shut out (issue 33, findings 2 and 4), apart from the HTTP
it serves (:mod:`controller.studio.server`): the accept loop hands each socket to ONE handshake
thread (:class:`Handshakes`), which runs every TLS handshake non-blocking under a selector with
a deadline, a socket each and bounded per peer address and in total (the oldest dropped for
the newest, so the game server's new connection always gets its handshake). A certified
connection then takes a slot (:class:`Slots`: ``studio.max_connections``, each listed game
server keeping its share) and a thread; without one it is answered ``503 busy`` and closed. A
certificate the CA did not sign is refused by TLS itself and recorded in the ledger at a
bounded rate per address (:class:`Refusals`).

Measured under 1,000 plain TCP connections, 100 trickling TLS ones and 1,000 partial
ClientHellos: ``benchmarks/studio_attacks.py``, figures in docs/studio.md ("Security")."""

from __future__ import annotations

import json
import queue
import resource
import selectors
import socket
import ssl
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog

from controller.studio.config import StudioConfig
from controller.studio.errors import StudioError

log = structlog.get_logger(__name__)

HANDSHAKE_SECONDS = 10.0
"""From the TCP connection to a completed handshake (on the handshake thread)."""
DRAIN_SECONDS = 2.0
"""After a ``503 busy`` answer, the wait for the peer to close (its request read and dropped),
so that our close does not reset the connection before the answer is read."""
UNLISTED_SLOTS = 2
"""Threads for certificates of names not in ``studio.clients``: each is answered 403 once and
closed, on slots of their own (a listed game server's share is never theirs)."""
FILES_RESERVED = 64
"""Open files kept back from the pending handshakes: the listener, the ledger, the control
connections, the selectors, the log."""
MAX_PENDING_TLS = 512
"""Pending handshakes with TLS state (their first bytes in), about 44 KB each (measured:
``benchmarks/studio_attacks.py``, "hello"): at most about 23 MB, well within the unit's
``MemoryMax``; beyond it the oldest stalled one is dropped for the newest."""
REAP_EVERY_SECONDS = 0.25
REFUSAL_BURST = 10
REFUSAL_EVERY_SECONDS = 6.0
"""The ledger records a refused handshake per address at most 10 at once, then one every 6 s;
the others are counted, and the count is named in the next record."""
REFUSALS_QUEUED = 256
DROP_LOG_SECONDS = 10.0
"""Handshakes timed out or dropped are logged as counts, at most one line each 10 s."""


def tls_context(config: StudioConfig) -> ssl.SSLContext:
    """TLS 1.2+, a client certificate signed by ``client_ca`` required."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.verify_mode = ssl.CERT_REQUIRED
    try:
        context.load_cert_chain(config.certificate, config.private_key)
        context.load_verify_locations(cafile=str(config.client_ca))
    except (OSError, ssl.SSLError) as error:
        raise StudioError(f"studio TLS files ({config.certificate}, {config.private_key}, "
                          f"{config.client_ca}): {error}") from error
    return context


def common_name(certificate: dict[str, Any] | None) -> str | None:
    for rdn in (certificate or {}).get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return str(value)
    return None

_BUSY_BODY = json.dumps({"ok": False, "code": "busy", "message": "every connection slot of "
                         "this game server is in use (studio.max_connections): retry"},
                        separators=(",", ":")).encode()
_BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nServer: tablectl-studio\r\n"
         b"Content-Type: application/json\r\nContent-Length: "
         + str(len(_BUSY_BODY)).encode() + b"\r\nConnection: close\r\n\r\n" + _BUSY_BODY)
"""The answer on a certified connection that found no slot, sent by the handshake thread."""


def raise_file_limit() -> int:
    """Raise this process's open-file soft limit to its hard limit (thousands of pending
    handshakes are a socket each); the limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
    if want > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError) as error:
            log.warning("studio_file_limit", soft=soft, hard=hard, error=str(error))
    return soft


def _drop(sock: socket.socket) -> None:
    """Close with a reset (no TIME_WAIT kept for a peer we gave up on)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    except OSError:
        pass
    sock.close()


@dataclass(eq=False, slots=True)
class _Pending:
    sock: socket.socket
    address: str
    peer: Any
    deadline: float
    started: bool = False
    """A byte has arrived: the handshake is under way (a silent socket is dropped first)."""
    draining: bool = False
    """Answered ``503 busy``; waiting for the peer to close."""


class Handshakes:
    """ONE thread that runs every TLS handshake, non-blocking, under a selector.

    A pending connection is a socket and this small record: no thread, no slot. A socket is
    wrapped for TLS only when its first byte arrives. Bounds: ``per_address`` pending from one
    address, ``total`` in all; at a bound the oldest silent one (else the oldest) of that
    address, or of all, is dropped for the new one, so a new connection always gets its
    handshake; each has ``HANDSHAKE_SECONDS``. Of them, at most :data:`MAX_PENDING_TLS` with
    TLS state (the oldest dropped likewise). A timed-out or dropped handshake is counted in
    the log, never in the ledger; one refused by TLS (no certificate, an unknown CA) goes to
    :class:`Refusals`."""

    def __init__(self, context: ssl.SSLContext, certified: Callable[[ssl.SSLSocket, Any], bool],
                 refusals: Refusals, *, total: int, per_address: int) -> None:
        self.context = context
        self.total = total
        self.per_address = per_address
        self.tls_total = min(total, MAX_PENDING_TLS)
        self._certified = certified
        self._refusals = refusals
        self._incoming: deque[tuple[socket.socket, Any]] = deque()
        self._selector = selectors.DefaultSelector()
        self._wake_in, self._wake_out = socket.socketpair()
        self._wake_in.setblocking(False)
        self._wake_out.setblocking(False)
        self._selector.register(self._wake_in, selectors.EVENT_READ)
        self._silent: OrderedDict[_Pending, None] = OrderedDict()
        self._started: OrderedDict[_Pending, None] = OrderedDict()
        self._by_address: dict[str, OrderedDict[_Pending, None]] = {}
        self._dropped: Counter[str] = Counter()
        self._dropped_from: Counter[str] = Counter()
        self._logged_at = time.monotonic()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="studio-handshakes", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def add(self, sock: socket.socket, peer: Any) -> None:
        """From the accept loop: never blocks."""
        if self._stopping:
            sock.close()
            return
        self._incoming.append((sock, peer))
        if len(self._incoming) > self.total:  # accepted faster than admitted: the oldest goes
            try:
                _drop(self._incoming.popleft()[0])
                self.count("evicted_total")
            except IndexError:
                pass  # admitted meanwhile
        self.add_wake()

    def close(self) -> None:
        self._stopping = True
        self.add_wake()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        for pending in [*self._silent, *self._started]:
            pending.sock.close()
        while self._incoming:
            self._incoming.popleft()[0].close()
        self._selector.close()
        self._wake_in.close()
        self._wake_out.close()

    def add_wake(self) -> None:
        """Wake the thread (a byte on its socket pair; when that is full, it is awake)."""
        try:
            self._wake_out.send(b"\0")
        except OSError:
            pass

    def pending(self) -> int:
        return len(self._silent) + len(self._started)

    def _run(self) -> None:
        swept = time.monotonic()
        while not self._stopping:
            try:
                for key, _ in self._selector.select(REAP_EVERY_SECONDS):
                    if key.fileobj is self._wake_in:
                        try:
                            while self._wake_in.recv(4096):
                                pass
                        except OSError:
                            pass
                    else:
                        self._step(key.data)
                self._admit()
                now = time.monotonic()
                self._expire(self._silent, now, whole=False)
                if now - swept >= REAP_EVERY_SECONDS:
                    self._expire(self._started, now, whole=True)
                    swept = now
                self._log_drops(now)
            except Exception:  # a bug of ours must not stop every handshake
                log.exception("studio_handshake_thread_error")

    def _admit(self) -> None:
        while self._incoming:
            sock, peer = self._incoming.popleft()
            address = str(peer[0]) if isinstance(peer, tuple) and peer else str(peer)
            mine = self._by_address.setdefault(address, OrderedDict())
            if len(mine) >= self.per_address:
                self._evict(self._victim(mine) or self._stalled(mine), "evicted_per_address")
            if self.pending() >= self.total:
                self._evict(self._victim(self._silent) or self._stalled(self._started),
                            "evicted_total")
            try:
                sock.setblocking(False)
                pending = _Pending(sock, address, peer, time.monotonic() + HANDSHAKE_SECONDS)
                self._selector.register(sock, selectors.EVENT_READ, pending)
            except (OSError, ValueError):
                sock.close()
                continue
            self._silent[pending] = None
            self._by_address.setdefault(address, OrderedDict())[pending] = None
            try:
                hello = sock.recv(1, socket.MSG_PEEK)
            except OSError:
                continue  # nothing yet (or gone): the selector tells
            if hello:
                self._step(pending)  # read its hello before the next arrival may evict it

    def _victim(self, pendings: OrderedDict[_Pending, None]) -> _Pending | None:
        """The one to drop among ``pendings`` (arrival order): the oldest that has sent
        nothing; one whose first bytes are in (not yet seen by the selector: a new client's
        hello) is stepped at once and passed over. None: none is silent."""
        for pending in list(pendings):
            if pending.started or pending not in pendings:
                continue  # talking, or dropped meanwhile (a step may drop another)
            try:
                waiting = pending.sock.recv(1, socket.MSG_PEEK)
            except (BlockingIOError, InterruptedError):
                return pending
            except OSError:
                return pending  # reset by its peer: drop it
            if not waiting:
                return pending  # closed by its peer
            self._step(pending)  # its hello is in: read now, a talking client is kept
        return None

    @staticmethod
    def _stalled(pendings: OrderedDict[_Pending, None], spare: _Pending | None = None
                 ) -> _Pending:
        """The oldest of ``pendings`` (not ``spare``) whose hello TLS has not yet read whole
        (no cipher chosen: a stalled or partial hello); else the oldest. A client that is
        talking has its cipher within one step, so a flood of partial hellos drops its own."""
        oldest = None
        for pending in pendings:
            if pending is spare:
                continue
            oldest = oldest or pending
            sock = pending.sock
            if not isinstance(sock, ssl.SSLSocket) or sock.cipher() is None:
                return pending
        assert oldest is not None, "a bound of at least 1 over none"
        return oldest

    def _step(self, pending: _Pending) -> None:
        if pending.draining:
            try:
                if pending.sock.recv(65536):
                    return
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                return
            except OSError:
                pass
            self._forget(pending)
            pending.sock.close()
            return
        if not isinstance(pending.sock, ssl.SSLSocket):
            if not pending.started:
                pending.started = True
                del self._silent[pending]
                self._started[pending] = None
            if len(self._started) > self.tls_total:
                self._evict(self._stalled(self._started, pending), "evicted_tls")
            self._selector.unregister(pending.sock)
            try:
                pending.sock = self.context.wrap_socket(pending.sock, server_side=True,
                                                        do_handshake_on_connect=False)
            except (ssl.SSLError, OSError):
                self._forget(pending, registered=False)
                pending.sock.close()
                return
            self._selector.register(pending.sock, selectors.EVENT_READ, pending)
        tls = pending.sock
        assert isinstance(tls, ssl.SSLSocket)
        try:
            tls.do_handshake()
        except ssl.SSLWantReadError:
            self._selector.modify(tls, selectors.EVENT_READ, pending)
            return
        except ssl.SSLWantWriteError:
            self._selector.modify(tls, selectors.EVENT_WRITE, pending)
            return
        except (ssl.SSLEOFError, ssl.SSLZeroReturnError, ssl.SSLSyscallError):
            self._forget(pending)
            tls.close()
            self.count("closed_by_peer", pending.address)  # gone: no certificate judged
            return
        except ssl.SSLError as error:
            self._forget(pending)
            tls.close()
            self._refusals.refused(pending.address,
                                   f"TLS handshake refused: {error.reason or error}")
            return
        except OSError:
            self._forget(pending)
            tls.close()
            self.count("closed_by_peer", pending.address)
            return
        self._forget(pending)
        if self._certified(tls, pending.peer):
            return
        self._busy(pending)

    def _busy(self, pending: _Pending) -> None:
        """No slot: one ``503 busy`` line, then wait (a socket, no thread) for the peer to
        close, at most ``DRAIN_SECONDS``."""
        try:
            pending.sock.send(_BUSY)
        except (ssl.SSLError, OSError):
            pending.sock.close()
            return
        pending.draining = True
        pending.deadline = time.monotonic() + DRAIN_SECONDS
        self._started[pending] = None
        self._by_address.setdefault(pending.address, OrderedDict())[pending] = None
        try:
            self._selector.register(pending.sock, selectors.EVENT_READ, pending)
        except (OSError, ValueError):
            self._forget(pending, registered=False)
            pending.sock.close()

    def _forget(self, pending: _Pending, registered: bool = True) -> None:
        self._silent.pop(pending, None)
        self._started.pop(pending, None)
        mine = self._by_address.get(pending.address)
        if mine is not None:
            mine.pop(pending, None)
            if not mine:
                del self._by_address[pending.address]
        if registered:
            try:
                self._selector.unregister(pending.sock)
            except (KeyError, ValueError):
                pass

    def _evict(self, pending: _Pending, why: str) -> None:
        self._forget(pending)
        _drop(pending.sock)
        if not pending.draining:
            self.count(why, pending.address)

    def _expire(self, pendings: OrderedDict[_Pending, None], now: float, *, whole: bool) -> None:
        for pending in list(pendings):
            if pending.deadline <= now:
                self._evict(pending, "timed_out")
            elif not whole:
                break  # arrival order: the rest are younger

    def count(self, why: str, address: str = "") -> None:
        """One more handshake dropped (or answered busy) for ``why``: logged as counts."""
        self._dropped[why] += 1
        if address:
            self._dropped_from[address] += 1

    def _log_drops(self, now: float) -> None:
        if now - self._logged_at < DROP_LOG_SECONDS:
            return
        self._logged_at = now
        if self._dropped:
            log.warning("studio_handshakes_dropped", seconds=DROP_LOG_SECONDS,
                        pending=self.pending(), addresses=len(self._dropped_from),
                        most_from=self._dropped_from.most_common(3), **self._dropped)
            self._dropped.clear()
            self._dropped_from.clear()


class Refusals:
    """Handshakes TLS refused (no certificate, an unknown CA, not TLS): recorded in the ledger
    as ``unauthenticated <address>``, on a thread of their own so the handshake thread never
    waits for the ledger's fsync, at most :data:`REFUSAL_BURST` per address at once and then
    one per :data:`REFUSAL_EVERY_SECONDS`; the rest are counted and the count is named in the
    address's next record (a queue of :data:`REFUSALS_QUEUED`, the overflow counted too)."""

    def __init__(self, ledger: Any) -> None:
        self._ledger = ledger
        self._queue: queue.Queue[tuple[str, str] | None] = queue.Queue(REFUSALS_QUEUED)
        self._tokens: dict[str, tuple[float, float]] = {}
        self._unrecorded: Counter[str] = Counter()
        self._thread = threading.Thread(target=self._run, name="studio-refusals", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def refused(self, address: str, message: str) -> None:
        """On the handshake thread: never blocks."""
        now = time.monotonic()
        tokens, at = self._tokens.get(address, (float(REFUSAL_BURST), now))
        tokens = min(float(REFUSAL_BURST), tokens + (now - at) / REFUSAL_EVERY_SECONDS)
        if tokens < 1:
            self._tokens[address] = (tokens, now)
            self._unrecorded[address] += 1
            return
        if len(self._tokens) >= 4096:
            self._tokens.clear()  # bounded; a forgotten address starts with a full burst
        self._tokens[address] = (tokens - 1, now)
        more = self._unrecorded.pop(address, 0)
        if more:
            message += f" (and {more} more from this address not recorded)"
        try:
            self._queue.put_nowait((f"unauthenticated {address}", message))
        except queue.Full:
            self._unrecorded[address] += 1 + more

    def close(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self._ledger.record_refusal(item[0], "tls", item[1])
            except (OSError, ValueError) as error:
                log.error("studio_refusal_unrecorded", client=item[0], error=str(error))


class Slots:
    """Certified connections served at once, a thread each: at most ``total``; each listed game
    server keeps at least its share (``total // len(clients)``), so one game server's
    connections never take another's place. A name not listed has :data:`UNLISTED_SLOTS` of
    its own, to be answered 403."""

    def __init__(self, total: int, clients: frozenset[str]) -> None:
        self.total = total
        self.clients = clients
        self.share = total // len(clients)
        self._used: Counter[str | None] = Counter()
        self._lock = threading.Lock()

    def take(self, name: str | None) -> bool:
        with self._lock:
            if name not in self.clients:
                if sum(n for c, n in self._used.items() if c not in self.clients) \
                        >= UNLISTED_SLOTS:
                    return False
            else:
                listed = sum(self._used[c] for c in self.clients)
                kept = sum(max(0, self.share - self._used[c]) for c in self.clients
                           if c != name)
                if listed + 1 + kept > self.total:
                    return False
            self._used[name] += 1
            return True

    def give(self, name: str | None) -> None:
        with self._lock:
            self._used[name] -= 1
            if self._used[name] <= 0:
                del self._used[name]
