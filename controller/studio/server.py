"""The HTTPS listener: mutual TLS, one game server per client certificate, JSON bodies.

The TLS handshake runs on the connection's own thread with a deadline (a slow or silent peer
cannot hold the accept loop), connections are bounded (``studio.max_connections``), and a
certificate the CA did not sign, or signed for a name not in ``studio.clients``, never reaches
a route: the first is refused by TLS itself, the second with 403; both are recorded in the
ledger with the peer's address and the name it presented.

Routes (docs/studio.md; ``schemas/studio-openapi.json``):
``GET /v1/status``, ``POST /v1/rounds``, ``POST /v1/rounds/{n}/wagers``,
``POST /v1/rounds/{n}/close``, ``GET /v1/rounds/{n}/events?after=K&wait=S``."""

from __future__ import annotations

import json
import re
import ssl
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import structlog

from controller.service.control.client import CommandRefused
from controller.service.errors import ControlError
from controller.studio.book import EncodedEvent
from controller.studio.config import StudioConfig
from controller.studio.errors import StudioError, StudioRefusal
from controller.studio.gateway import Gateway
from controller.studio.wire import load_body

log = structlog.get_logger(__name__)

HANDSHAKE_SECONDS = 10.0
IDLE_SECONDS = 120.0
MAX_WAIT_SECONDS = 30.0
BYTES_PER_WAGER = 512
_ROUND = re.compile(r"^/v1/rounds/(\d{1,12})/(wagers|close|events)$")


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


_HTTP_WORDS = {400: "bad_request", 404: "not_found", 405: "method_not_allowed",
               408: "request_timeout", 411: "length_required", 413: "batch_too_large",
               414: "uri_too_long", 431: "header_too_large", 505: "http_version"}
"""The stable word a game server switches on, for the refusals of the HTTP layer itself."""


class StudioServer(ThreadingHTTPServer):
    """Accepts plain TCP; each connection's thread does the handshake, then serves HTTP."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, config: StudioConfig, gateway: Gateway) -> None:
        self.config = config
        self.gateway = gateway
        self.context = tls_context(config)
        self.slots = threading.BoundedSemaphore(config.max_connections)
        super().__init__((config.listen, config.port), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)  # full: the peer sees the connection closed
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            request.settimeout(HANDSHAKE_SECONDS)
            try:
                tls = self.context.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as error:
                who = f"unauthenticated {client_address[0]}"
                self.gateway.ledger.record_refusal(who, "tls", f"TLS handshake refused: "
                                                   f"{getattr(error, 'reason', None) or error}")
                self.shutdown_request(request)
                return
            tls.settimeout(IDLE_SECONDS)
            super().process_request_thread(tls, client_address)
        finally:
            self.slots.release()


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
        except (ControlError, CommandRefused) as error:
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
        limit = self.server.config.max_batch * BYTES_PER_WAGER + 4096
        if length is None or not length.isdigit():
            raise StudioRefusal(411, "length_required", "a body needs a Content-Length")
        if int(length) > limit:
            self.close_connection = True
            message = (f"body of {length} bytes; at most {limit} (studio.max_batch wagers): "
                       "nothing placed")
            self.server.gateway.ledger.record_refusal(self._client(), "batch_too_large",
                                                      message)
            raise StudioRefusal(413, "batch_too_large", message)
        return load_body(self.rfile.read(int(length)))

    def _route(self, method: str, client: str) -> dict[str, Any]:
        url = urlsplit(self.path)
        gateway = self.server.gateway
        if method == "GET" and url.path == "/v1/status":
            return {"ok": True, **gateway.status(client)}
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
