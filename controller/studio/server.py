"""The HTTPS listener: mutual TLS, one game server per client certificate, JSON bodies.

A connection reaches this module only once :mod:`controller.studio.admission` has given it a
certified handshake, a slot and a thread (issue 33, findings 2 and 4). Here,
:class:`DeadlineReader` bounds the wait for a request (idle) and, from its first byte, the
request line, headers and body together (a trickle cannot hold a slot); a certificate signed
for a name not in ``studio.clients`` is answered 403 and recorded; every answer, the HTTP
layer's own refusals included, is JSON.

Routes (docs/studio.md; ``schemas/studio-openapi.json``):
``GET /v1/status``, ``GET /v1/table``, ``POST /v1/rounds``, ``POST /v1/rounds/{n}/wagers``,
``POST /v1/rounds/{n}/close``, ``GET /v1/rounds/{n}/events?after=K&wait=S``."""

from __future__ import annotations

import io
import json
import re
import socket
import ssl
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import structlog

from controller.service.control.client import RequestRefused
from controller.service.errors import ControlError
from controller.studio.admission import (FILES_RESERVED, UNLISTED_SLOTS, Handshakes, Refusals,
                                         Slots, common_name, raise_file_limit, tls_context)
from controller.studio.book import EncodedEvent
from controller.studio.config import StudioConfig
from controller.studio.errors import StudioRefusal
from controller.studio.gateway import Gateway
from controller.studio.wire import load_body, max_body_bytes

log = structlog.get_logger(__name__)

HEADER_SECONDS = 10.0
"""From a request's first byte to the last of its body, however it trickles."""
IDLE_SECONDS = 120.0
"""A certified connection's wait for its next request (keep-alive)."""
LISTEN_BACKLOG = 1024
MAX_WAIT_SECONDS = 30.0
_ROUND = re.compile(r"^/v1/rounds/(\d{1,12})/(wagers|close|events)$")

_HTTP_WORDS = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
               408: "request_timeout", 411: "length_required", 413: "batch_too_large",
               414: "uri_too_long", 431: "header_too_large", 505: "http_version"}
"""The stable word a game server switches on, for the refusals of the HTTP layer itself."""


class RequestLate(Exception):
    """A request's bytes did not arrive by its deadline (not an ``OSError``: the stdlib's
    handler would close without a word; the 408 is ours to send)."""


class DeadlineReader(io.RawIOBase):
    """A served connection's reads, each waiting at most until ``deadline`` (monotonic): a
    trickle of a byte now and then cannot stretch a request, as a per-read socket timeout
    lets it. TLS keeps its state across a timed-out read, so a 408 can still be written."""

    def __init__(self, sock: ssl.SSLSocket) -> None:
        self._sock = sock
        self.deadline = time.monotonic() + IDLE_SECONDS

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise RequestLate
        self._sock.settimeout(left)  # the whole read, a partial TLS record included
        try:
            return self._sock.recv_into(buffer)
        except TimeoutError as error:
            raise RequestLate from error
        finally:
            self._sock.settimeout(IDLE_SECONDS)  # writes keep the connection's bound


class StudioServer(ThreadingHTTPServer):
    """Accepts plain TCP and hands each socket to :class:`Handshakes`; a certified connection
    with a slot is served HTTP on its own thread."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(self, config: StudioConfig, gateway: Gateway) -> None:
        self.config = config
        self.gateway = gateway
        self.context = tls_context(config)
        files = raise_file_limit()
        room = max(16, files - config.max_connections - UNLISTED_SLOTS - FILES_RESERVED)
        self.slots = Slots(config.max_connections, config.clients)
        self._served: dict[ssl.SSLSocket, None] = {}
        self._served_lock = threading.Lock()
        self.refusals = Refusals(gateway.ledger)
        self.handshakes = Handshakes(self.context, self._certified, self.refusals,
                                     total=min(config.max_pending, room),
                                     per_address=min(config.max_pending_per_address, room))
        try:
            super().__init__((config.listen, config.port), _Handler)
        except OSError:
            self.handshakes.close()  # its selector and socket pair
            raise
        for part in (self.refusals, self.handshakes):
            part.start()
        log.info("studio_bounds", max_connections=config.max_connections,
                 share=self.slots.share, max_pending=self.handshakes.total,
                 max_pending_per_address=self.handshakes.per_address, open_files=files)

    def process_request(self, request: Any, client_address: Any) -> None:
        self.handshakes.add(request, client_address)

    def _certified(self, tls: ssl.SSLSocket, client_address: Any) -> bool:
        """On the handshake thread: a slot and a thread for ``tls``, or False (busy)."""
        name = common_name(tls.getpeercert())
        if not self.slots.take(name):
            self.handshakes.count(f"busy_{name}", client_address[0])
            return False
        try:
            tls.settimeout(IDLE_SECONDS)
            super().process_request(tls, client_address)
        except (RuntimeError, OSError) as error:  # no thread to be had
            log.error("studio_no_thread", error=str(error))
            self.slots.give(name)
            tls.close()
        return True

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        name = common_name(request.getpeercert())
        with self._served_lock:
            self._served[request] = None
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._served_lock:
                self._served.pop(request, None)
            self.slots.give(name)

    def server_close(self) -> None:
        """Stop: no more handshakes; each served connection's reading ends now (a kept
        connection would hold its thread up to the idle bound); its threads are joined."""
        self.handshakes.close()
        with self._served_lock:
            for sock in list(self._served):
                try:
                    socket.socket.shutdown(sock, socket.SHUT_RD)  # the socket's, not TLS's
                except OSError:
                    pass
        super().server_close()
        self.refusals.close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StudioServer
    server_version = "tablectl-studio"
    sys_version = ""
    disable_nagle_algorithm = True
    """``TCP_NODELAY``: an answer leaves at once. With Nagle's algorithm a body written after
    its headers waited for the client's delayed ACK of them, about 40 ms on Linux: half of a
    batch's time at p50 (measured, issue 28)."""
    wbufsize = 1 << 18
    """Headers and body are buffered and leave in one write when the request is done (the
    server flushes after each), not as two TLS records and two segments."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib's name)
        log.debug("studio_http", line=format % args)

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the stdlib's reader: ours keeps the request's deadline
        self.reader = DeadlineReader(self.connection)
        self.rfile = io.BufferedReader(self.reader)

    def handle_one_request(self) -> None:
        """Wait for a request's first byte up to the idle bound (a name not listed: the header
        bound), then give its request line, headers and body :data:`HEADER_SECONDS` in all;
        late, it is answered ``408 request_timeout`` and the connection closed."""
        listed = common_name(self.connection.getpeercert()) in self.server.config.clients
        self.reader.deadline = time.monotonic() + (IDLE_SECONDS if listed else HEADER_SECONDS)
        try:
            first = self.rfile.peek(1)
        except (RequestLate, OSError):
            first = b""  # idle too long, or gone
        if not first:
            self.close_connection = True
            return
        self.reader.deadline = time.monotonic() + HEADER_SECONDS
        try:
            super().handle_one_request()
        except RequestLate:
            self._late()

    def _late(self) -> None:
        log.info("studio_header_deadline", address=self.client_address[0])
        self.close_connection = True
        body = encode_answer({"ok": False, "code": "request_timeout", "message":
                              f"the request did not arrive whole within "
                              f"{HEADER_SECONDS:g} s of its first byte"})
        try:
            self.wfile.write(b"HTTP/1.1 408 Request Timeout\r\nServer: tablectl-studio\r\n"
                             b"Content-Type: application/json\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n"
                             + body)
            self.wfile.flush()
        except OSError:
            pass  # the peer is gone

    def do_GET(self) -> None:  # noqa: N802 (stdlib's name)
        self._serve("GET")

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """What the HTTP layer refuses before a route is reached (a method the API has not, a
        request line or header too long, a malformed request) answered as every refusal is:
        JSON ``{ok, code, message}`` (issue 33: these were HTML pages). A method other than GET
        and POST is ``405`` with ``Allow``, not the stdlib's ``501``."""
        status = 405 if code == 501 else code
        word = _HTTP_WORDS.get(status, "bad_request")
        text = message or explain or HTTPStatus(status).phrase
        if code == 501:
            text = f"{self.command} is not a method of this API (GET and POST are)"
        body = encode_answer({"ok": False, "code": word, "message": text})
        self.close_connection = True
        try:
            self.send_response(status)
            if status == 405:
                self.send_header("Allow", "GET, POST")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD" and status >= 200 and status not in (204, 304):
                self.wfile.write(body)
        except OSError:
            pass  # the peer is gone: nothing to tell

    def do_POST(self) -> None:  # noqa: N802 (stdlib's name)
        self._serve("POST")

    def _client(self) -> str:
        assert isinstance(self.connection, ssl.SSLSocket)
        name = common_name(self.connection.getpeercert())
        if name is None or name not in self.server.config.clients:
            message = (f"certificate for {name!r} is not a game server of this table "
                       "(studio.clients)")
            self.server.gateway.ledger.record_refusal(
                f"unlisted {name} at {self.client_address[0]}", "not_a_client", message)
            raise StudioRefusal(403, "not_a_client", message)
        return name

    def _serve(self, method: str) -> None:
        try:
            client = self._client()
            status, answer = 200, self._route(method, client)
        except StudioRefusal as refusal:
            status, answer = refusal.status, {"ok": False, "code": refusal.code,
                                              "message": refusal.message}
        except (ControlError, RequestRefused) as error:
            status, answer = 503, {"ok": False, "code": "unavailable",
                                   "message": f"the table cannot be reached: {error}"}
        except Exception:  # a bug of ours: one line to the peer, the traceback to the log
            log.exception("studio_internal_error", path=self.path)
            status, answer = 500, {"ok": False, "code": "internal",
                                   "message": "internal error (logged)"}
        if status == 200 and answer.get("ok") is False:
            status = 409
        if status >= 400 and status != 409:
            self.close_connection = True  # a body may be left unread: start afresh
        body = encode_answer(answer)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> object:
        length = self.headers.get("Content-Length")
        limit = max_body_bytes(self.server.config.max_batch)
        if length is None or not length.isdigit():
            raise StudioRefusal(411, "length_required", "a body needs a Content-Length")
        if int(length) > limit:  # judged on the header: not a byte of the body is read
            self.close_connection = True
            message = (f"body of {length} bytes; at most {limit} ({self.server.config.max_batch}"
                       " wagers of studio.max_batch x 512 bytes): nothing placed")
            self.server.gateway.ledger.record_refusal(self._client(), "batch_too_large",
                                                      message)
            raise StudioRefusal(413, "batch_too_large", message)
        try:
            data = self.rfile.read(int(length))
        except RequestLate as late:
            self.close_connection = True
            raise StudioRefusal(408, "request_timeout", f"the body did not arrive within "
                                f"{HEADER_SECONDS:g} s of the request's first byte") from late
        return load_body(data)

    def _route(self, method: str, client: str) -> dict[str, Any]:
        url = urlsplit(self.path)
        gateway = self.server.gateway
        if method == "GET" and url.path == "/v1/status":
            return {"ok": True, **gateway.status(client)}
        if method == "GET" and url.path == "/v1/table":
            return {"ok": True, **gateway.table(client)}
        if method == "POST" and url.path == "/v1/rounds":
            return gateway.open_round(client, self._body())
        match = _ROUND.match(url.path)
        if match is None:
            raise StudioRefusal(404, "not_found", f"{method} {url.path}: no such route")
        number, what = int(match.group(1)), match.group(2)
        if method == "POST" and what == "wagers":
            return gateway.place_batch(client, number, self._body())
        if method == "POST" and what == "close":
            return gateway.close_betting(client, number, self._body())
        if method == "GET" and what == "events":
            query = parse_qs(url.query)
            after = _query_number(query, "after", 0, 10**9)
            wait = _query_number(query, "wait", 0, int(MAX_WAIT_SECONDS))
            return {"ok": True, **gateway.events(client, number, after, float(wait))}
        raise StudioRefusal(405, "method_not_allowed", f"{method} {url.path}: not allowed")


def encode_answer(answer: dict[str, Any]) -> bytes:
    """An answer's body: UTF-8 JSON, unescaped and unchecked for cycles (it is built from
    decoded JSON), which encodes a settlement of 2,000 results in about two thirds of the
    time (issue 28: it is on the path of the result to the game server). Text the table
    could not have sent as UTF-8 (a lone surrogate) is escaped instead. An
    :class:`~controller.studio.book.EncodedEvent` among the ``events`` (the last key of an
    events answer) goes in as its text."""
    events = answer.get("events")
    if isinstance(events, list) and any(isinstance(event, EncodedEvent) for event in events):
        head = _encode({**answer, "events": []})
        if head.endswith(b'"events":[]}'):
            return head[:-2] + b",".join(
                event.text if isinstance(event, EncodedEvent) else _encode(event)
                for event in events) + b"]}"
        answer = {**answer, "events": [json.loads(event.text) if isinstance(event, EncodedEvent)
                                       else event for event in events]}  # not last: the long way
    return _encode(answer)


def _encode(answer: dict[str, Any]) -> bytes:
    try:
        return json.dumps(answer, separators=(",", ":"), ensure_ascii=False,
                          check_circular=False).encode()
    except UnicodeEncodeError:
        return json.dumps(answer, separators=(",", ":")).encode()


def _query_number(query: dict[str, list[str]], name: str, default: int, high: int) -> int:
    values = query.get(name)
    if not values:
        return default
    if not values[0].isdigit() or int(values[0]) > high:
        raise StudioRefusal(400, "bad_request", f"query {name!r} must be 0 to {high}")
    return int(values[0])


def serve(config: StudioConfig, gateway: Gateway) -> tuple[StudioServer, threading.Thread]:
    """Start the listener on its own thread; the caller ``shutdown()``s it and joins."""
    server = StudioServer(config, gateway)
    thread = threading.Thread(target=server.serve_forever, name="studio-https", daemon=True)
    thread.start()
    return server, thread
